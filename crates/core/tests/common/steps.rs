//! Durable steps shared by the dialect test files (docs/api.md, "Durable
//! steps"): a real `Worker` runs handlers written as Rust closures that drive
//! their context the way `lib/steps.js` does.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use cairnq_core::backoff::Backoff;
use cairnq_core::steps::rows::{NewStep, StepKind, Wake};
use cairnq_core::steps::SleepFor;
use cairnq_core::store::{ClaimRequest, PurgeInput, SubmitInput, Target, Write};
use cairnq_core::worker::{
    Call, CallOutcome, ChildCall, Invoker, Registration, StepStart, TaskContext, TaskResult,
    Worker, WorkerOptions,
};
use cairnq_core::{Error, Status, Store, Task};
use tokio::task::JoinHandle;

pub(crate) const PATIENCE: Duration = Duration::from_secs(20);
/// A recheck no test waits for: a parent that resumes sooner was woken.
const NEVER_RECHECK_MS: i64 = 120_000;

pub(crate) type Run = Pin<Box<dyn Future<Output = Option<CallOutcome>> + Send>>;
pub(crate) type Handler = Arc<dyn Fn(Arc<TaskContext>) -> Run + Send + Sync>;

/// A handler over its call's first context; `None` ends the call as
/// suspended, as the JS layer does when a step answers `suspended`.
pub(crate) fn handler<F, Fut>(f: F) -> Handler
where
    F: Fn(Arc<TaskContext>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Option<CallOutcome>> + Send + 'static,
{
    Arc::new(move |ctx| Box::pin(f(ctx)))
}

struct Handlers {
    by_name: HashMap<String, Handler>,
    worker: OnceLock<Worker>,
}

#[async_trait]
impl Invoker for Handlers {
    fn start(&self, calls: &[Arc<Call>]) -> Result<(), Error> {
        let worker = self.worker.get().expect("bound").clone();
        for call in calls {
            let run = self.by_name[&call.name].clone();
            let (worker, id, ctx) = (worker.clone(), call.id, call.contexts[0].clone());
            tokio::spawn(async move {
                let outcome = run(ctx).await.unwrap_or(CallOutcome::Suspended);
                worker.settle(id, outcome);
            });
        }
        Ok(())
    }
}

pub(crate) struct Running {
    worker: Worker,
    handle: JoinHandle<()>,
}

impl Running {
    pub(crate) async fn stop(self) {
        self.worker.stop();
        tokio::time::timeout(PATIENCE, self.handle)
            .await
            .expect("run settles after stop")
            .expect("run does not panic");
    }
}

/// A worker on `store` running `handlers` (each name registered, `batch`
/// ones as batches of 2).
pub(crate) fn run(
    store: &Arc<Store>,
    handlers: Vec<(&str, Handler)>,
    batch: &[&str],
    concurrency: f64,
) -> Running {
    let options = WorkerOptions {
        poll_interval_ms: Some(20.0),
        retry_backoff_ms: Some(10.0),
        ..Default::default()
    };
    let worker = Worker::new(store.clone(), vec!["default".into()], options).unwrap();
    for (name, _) in &handlers {
        let registration = Registration {
            batch: batch.contains(name).then_some(2.0),
            ..Default::default()
        };
        worker.register(name, registration).unwrap();
    }
    let invoker = Arc::new(Handlers {
        by_name: handlers
            .into_iter()
            .map(|(name, run)| (name.to_string(), run))
            .collect(),
        worker: OnceLock::new(),
    });
    let _ = invoker.worker.set(worker.clone());
    let running = worker.clone();
    let handle = tokio::spawn(async move {
        running.run(invoker, Some(concurrency)).await.expect("run");
    });
    Running { worker, handle }
}

/// `ctx.step(id, fn)` as `lib/steps.js` runs it: the stored or new result,
/// `None` once the run is suspended.
pub(crate) async fn step(
    ctx: &TaskContext,
    id: &str,
    fresh: impl FnOnce() -> Option<String>,
) -> Option<Option<String>> {
    match ctx.begin_step(id).await.expect("begin_step")? {
        StepStart::Replay(stored) => Some(stored),
        StepStart::Run => {
            let value = fresh();
            ctx.commit_step(id, value.clone())
                .await
                .expect("commit_step")?;
            Some(value)
        }
    }
}

pub(crate) fn returns(json: &str) -> Option<CallOutcome> {
    Some(CallOutcome::Returned(vec![TaskResult::Value(Some(
        json.into(),
    ))]))
}

pub(crate) fn threw(message: &str, retryable: bool) -> Option<CallOutcome> {
    let envelope = format!(
        r#"{{"type":"Error","code":"handler_error","message":"{message}","retryable":{retryable},"details":{{}}}}"#
    );
    Some(CallOutcome::Threw {
        envelope_json: envelope,
        retryable,
        backoff_ms: Vec::new(),
    })
}

pub(crate) async fn submit(store: &Store, name: &str, payload: &str) -> Task {
    store
        .submit(SubmitInput {
            name: name.into(),
            payload: Some(payload.into()),
            ..SubmitInput::default()
        })
        .await
        .unwrap()
}

pub(crate) async fn row(store: &Store, id: &str) -> Task {
    store.get(Target::Id(id.into())).await.unwrap().unwrap()
}

/// The row once `check` holds for it; fails after `PATIENCE`.
pub(crate) async fn row_when(
    store: &Store,
    id: &str,
    what: &str,
    check: impl Fn(&Task) -> bool,
) -> Task {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let task = row(store, id).await;
        if check(&task) {
            return task;
        }
        assert!(
            Instant::now() < deadline,
            "task {id} never got {what}: {task:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The row once a step has sent the task back to the queue (it is queued
/// and has stored steps, so it has run).
async fn suspended(store: &Store, id: &str) -> Task {
    let deadline = Instant::now() + PATIENCE;
    loop {
        // Steps first: once some are stored the task has been claimed, so a
        // queued row read after them is one a step sent back.
        let stepped = !store.load_steps(id).await.unwrap().is_empty();
        let task = row(store, id).await;
        if stepped && task.status == Status::Queued {
            assert_eq!(task.attempt, 0, "a suspension gives its attempt back");
            return task;
        }
        assert!(
            Instant::now() < deadline,
            "task {id} was never suspended: {task:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

pub(crate) async fn finished(store: &Store, id: &str) -> Task {
    row_when(store, id, "a terminal status", |t| t.status.is_terminal()).await
}

/// A child's submit as `lib/steps.js` sends it: parent, root and
/// correlation are the context's to wire.
/// A stored JSON text as a value (Postgres' jsonb spaces it out).
pub(crate) fn json(text: Option<&str>) -> serde_json::Value {
    serde_json::from_str(text.expect("a JSON value")).unwrap()
}

fn child_input(name: &str, payload: &str) -> SubmitInput {
    SubmitInput {
        name: name.into(),
        payload: Some(payload.into()),
        ..SubmitInput::default()
    }
}

/// A task with two steps that fails its first attempt: the retry replays
/// both stored results, so each step's work ran once.
pub async fn steps_replay_after_a_failure(store: Arc<Store>) {
    let work = Arc::new(AtomicUsize::new(0));
    let counted = work.clone();
    let pipeline = handler(move |ctx| {
        let work = counted.clone();
        async move {
            let a = step(&ctx, "a", || {
                work.fetch_add(1, SeqCst);
                Some(r#"{"n":1}"#.into())
            })
            .await?;
            let b = step(&ctx, "b", || {
                work.fetch_add(1, SeqCst);
                Some("2".into())
            })
            .await?;
            if ctx.task().attempt == 1 {
                return threw("once", true);
            }
            returns(&format!("[{},{}]", a.unwrap(), b.unwrap()))
        }
    });
    let worker = run(&store, vec![("pipeline", pipeline)], &[], 1.0);
    let task = submit(&store, "pipeline", "{}").await;
    let done = finished(&store, &task.id).await;
    assert_eq!((done.status, done.attempt), (Status::Succeeded, 2));
    assert_eq!(
        json(done.result.as_deref()),
        serde_json::json!([{"n": 1}, 2])
    );
    assert_eq!(work.load(SeqCst), 2, "each step's work ran once");
    let stored = store.load_steps(&task.id).await.unwrap();
    let mut results: Vec<_> = stored
        .iter()
        .map(|s| (s.step_id.as_str(), s.kind, s.result.as_deref()))
        .collect();
    results.sort_by_key(|(id, _, _)| *id);
    assert_eq!(
        results,
        vec![
            ("a", StepKind::Step, Some(r#"{"n":1}"#)),
            ("b", StepKind::Step, Some("2"))
        ]
    );
    worker.stop().await;
}

/// One slot: a task sleeping for a long time holds none (another task runs
/// meanwhile) and keeps its progress, a short sleep resumes on the same
/// attempt with its step replayed, and a canceled sleeper ends canceled
/// without running again.
pub async fn a_sleep_frees_its_slot_and_uses_no_attempt(store: Arc<Store>) {
    let runs = Arc::new(Mutex::new(Vec::<(String, String)>::new()));
    let seen = runs.clone();
    let sleeper = handler(move |ctx| {
        let runs = seen.clone();
        async move {
            let ms: i64 = ctx.task().payload.parse().unwrap();
            let log = |what: &str| {
                runs.lock()
                    .unwrap()
                    .push((ctx.task_id().to_string(), what.to_string()))
            };
            log("started");
            step(&ctx, "before", || {
                log("before");
                None
            })
            .await?;
            ctx.progress(Some(0.5), Some("halfway".into()))
                .await
                .unwrap();
            ctx.sleep("nap", SleepFor::Ms(ms)).await.unwrap()?;
            log("resumed");
            returns(&format!("{}", ctx.task().attempt))
        }
    });
    let quick = handler(|_ctx| async { returns("\"quick\"") });
    let worker = run(
        &store,
        vec![("sleeper", sleeper), ("quick", quick)],
        &[],
        1.0,
    );
    let long = submit(&store, "sleeper", "600000").await;
    let asleep = suspended(&store, &long.id).await;
    assert_eq!(asleep.worker_id, None);
    assert_eq!(asleep.lease_until_ms, None);
    assert_eq!(
        (asleep.progress, asleep.message.as_deref()),
        (Some(0.5), Some("halfway")),
        "a sleep keeps the progress reported before it"
    );
    assert!(asleep.run_at_ms > asleep.updated_at_ms + 590_000);
    let nap = store.step_summaries(&long.id).await.unwrap();
    assert_eq!(nap[1].wake_at_ms, Some(asleep.run_at_ms), "{nap:?}");

    let other = submit(&store, "quick", "{}").await;
    assert_eq!(finished(&store, &other.id).await.status, Status::Succeeded);

    let short = submit(&store, "sleeper", "200").await;
    let woke = finished(&store, &short.id).await;
    assert_eq!(
        (woke.status, woke.attempt, woke.result.as_deref()),
        (Status::Succeeded, 1, Some("1"))
    );

    let canceled = store.cancel(Target::Id(long.id.clone())).await.unwrap();
    assert_eq!(canceled.unwrap().status, Status::Canceled);
    worker.stop().await;
    let of = |id: &str| -> Vec<String> {
        runs.lock()
            .unwrap()
            .iter()
            .filter(|(task, _)| task == id)
            .map(|(_, what)| what.clone())
            .collect()
    };
    assert_eq!(of(&long.id), vec!["started", "before"]);
    assert_eq!(
        of(&short.id),
        vec!["started", "before", "started", "resumed"]
    );
    assert_eq!(row(&store, &long.id).await.status, Status::Canceled);
}

/// One slot: a parent waiting on its child holds none (the child needs
/// it), and the child's completion wakes the parent long before its own
/// recheck; a failed child hands its envelope over.
pub async fn a_parent_waits_for_its_child_without_a_slot(store: Arc<Store>) {
    let parent = handler(|ctx| async move {
        let kid = child_input("child", &ctx.task().payload.clone());
        let ChildCall { child_id, child } = ctx
            .call_child("kid", kid, NEVER_RECHECK_MS)
            .await
            .unwrap()?;
        let outcome = match child.status {
            Status::Succeeded => child.result.unwrap(),
            Status::Failed => child.error.unwrap(),
            other => panic!("child {child_id} ended {other}"),
        };
        returns(&outcome)
    });
    let child = handler(|ctx| async move {
        if ctx.task().payload == r#""fail""# {
            return threw("no", false);
        }
        returns(&format!(r#"{{"echo":{}}}"#, ctx.task().payload))
    });
    let worker = run(&store, vec![("parent", parent), ("child", child)], &[], 1.0);
    let ok = submit(&store, "parent", "7").await;
    let done = finished(&store, &ok.id).await;
    assert_eq!((done.status, done.attempt), (Status::Succeeded, 1));
    assert_eq!(json(done.result.as_deref()), serde_json::json!({"echo": 7}));
    let steps = store.load_steps(&ok.id).await.unwrap();
    let kid = steps[0].child_id.clone().unwrap();
    let kid_row = row(&store, &kid).await;
    assert_eq!(kid_row.parent_id.as_deref(), Some(ok.id.as_str()));
    assert_eq!(
        kid_row.root_id.as_deref(),
        ok.root_id.as_deref(),
        "the child keeps the parent's root"
    );
    let keyed = store
        .get(Target::Key(format!("cairnq:step:{}:kid", ok.id)))
        .await
        .unwrap();
    assert_eq!(keyed.map(|t| t.id), Some(kid));

    let bad = submit(&store, "parent", r#""fail""#).await;
    let failed = finished(&store, &bad.id).await;
    assert_eq!(failed.status, Status::Succeeded);
    let envelope: serde_json::Value =
        serde_json::from_str(failed.result.as_deref().unwrap()).unwrap();
    assert_eq!(envelope["message"], "no");
    worker.stop().await;
}

/// A child finished by a worker that wakes no parent (another SDK's): the
/// parent reads it again after its recheck and resumes; until then it waits
/// queued, its attempt given back.
pub async fn a_parent_rechecks_a_child_nobody_wakes_it_for(store: Arc<Store>) {
    let parent = handler(|ctx| async move {
        let kid = child_input("foreign", "{}");
        let ChildCall { child, .. } = ctx.call_child("kid", kid, 300).await.unwrap()?;
        returns(&child.result.unwrap())
    });
    let worker = run(&store, vec![("parent", parent)], &[], 1.0);
    let task = submit(&store, "parent", "{}").await;
    let waiting = suspended(&store, &task.id).await;
    assert!(waiting.run_at_ms > waiting.updated_at_ms);
    let request = ClaimRequest {
        queues: vec!["default".into()],
        worker_id: "worker_foreign".into(),
        lease_ms: 30_000,
        names: Some(vec!["foreign".into()]),
    };
    let claimed = store.claim(request, 1).await.unwrap();
    assert_eq!(claimed.len(), 1);
    let completed = store
        .complete_batch(
            "worker_foreign".into(),
            vec![(claimed[0].id.clone(), Some("\"far\"".into()))],
        )
        .await
        .unwrap();
    assert_eq!(completed.len(), 1);
    let done = finished(&store, &task.id).await;
    assert_eq!((done.status, done.attempt), (Status::Succeeded, 1));
    assert_eq!(json(done.result.as_deref()), "far");
    worker.stop().await;
}

/// A parent canceled while it waits on a child ends canceled at once, and
/// so do its `callChild` children and theirs (two levels here); a child
/// submitted with only a `parent_id` (`ctx.submit`'s) is left alone, and a
/// cancel without children leaves every child alone.
pub async fn a_waiting_parent_is_canceled(store: Arc<Store>) {
    let parent_runs = Arc::new(AtomicUsize::new(0));
    let counted = parent_runs.clone();
    let parent = handler(move |ctx| {
        let runs = counted.clone();
        async move {
            runs.fetch_add(1, SeqCst);
            let kid = child_input("middle", "{}");
            ctx.call_child("kid", kid, NEVER_RECHECK_MS)
                .await
                .unwrap()?;
            returns("null")
        }
    });
    let middle = handler(|ctx| async move {
        let grand = child_input("unrun", "{}");
        ctx.call_child("grand", grand, NEVER_RECHECK_MS)
            .await
            .unwrap()?;
        returns("null")
    });
    let worker = run(
        &store,
        vec![("parent", parent), ("middle", middle)],
        &[],
        1.0,
    );
    let child_of = |id: String| {
        let store = store.clone();
        async move {
            store.load_steps(&id).await.unwrap()[0]
                .child_id
                .clone()
                .unwrap()
        }
    };
    let family = || async {
        let task = submit(&store, "parent", "{}").await;
        suspended(&store, &task.id).await;
        let kid = child_of(task.id.clone()).await;
        suspended(&store, &kid).await;
        let grand = child_of(kid.clone()).await;
        let loose = store
            .submit(SubmitInput {
                name: "unrun".into(),
                parent_id: Some(task.id.clone()),
                ..SubmitInput::default()
            })
            .await
            .unwrap();
        (task.id, kid, grand, loose.id)
    };

    let (alone, kid, grand, _) = family().await;
    let mut answers = store
        .write_group(vec![Ok(Write::Cancel(Target::Id(alone.clone()), false))])
        .await;
    let canceled = answers.pop().unwrap().unwrap().unwrap();
    assert_eq!(canceled.status, Status::Canceled);
    assert_eq!(row(&store, &kid).await.status, Status::Queued);
    assert_eq!(row(&store, &grand).await.status, Status::Queued);

    let (task, kid, grand, loose) = family().await;
    let canceled = store
        .cancel(Target::Id(task.clone()))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(canceled.status, Status::Canceled);
    assert_eq!(row(&store, &kid).await.status, Status::Canceled);
    assert_eq!(row(&store, &grand).await.status, Status::Canceled);
    assert_eq!(
        row(&store, &loose).await.status,
        Status::Queued,
        "a ctx.submit child is its own task"
    );
    worker.stop().await;
    assert_eq!(row(&store, &task).await.status, Status::Canceled);
    assert_eq!(parent_runs.load(SeqCst), 2);
}

/// Claims the one queued task of `name` for `worker` with a lease of `lease_ms`.
async fn claim_one(store: &Arc<Store>, name: &str, worker: &str, lease_ms: i64) -> Task {
    let request = ClaimRequest {
        queues: vec!["default".into()],
        worker_id: worker.into(),
        lease_ms,
        names: Some(vec![name.into()]),
    };
    store.claim(request, 1).await.unwrap().remove(0)
}

fn standalone(store: &Arc<Store>, task: Task, worker: &str) -> TaskContext {
    TaskContext::new(
        store.clone(),
        task,
        worker.into(),
        30_000,
        Backoff::default(),
    )
}

/// Refused with a message naming the mistake, nothing written: a reused id,
/// an id of another kind, a suspension outside a worker or in a batch, a
/// child with its own key.
pub async fn misuse_is_refused(store: Arc<Store>) {
    submit(&store, "job", "{}").await;
    let task = claim_one(&store, "job", "worker_a", 30_000).await;
    let ctx = standalone(&store, task.clone(), "worker_a");
    assert_eq!(ctx.begin_step("a").await.unwrap(), Some(StepStart::Run));
    let reused = ctx.begin_step("a").await.unwrap_err().to_string();
    assert_eq!(
        reused,
        "step id \"a\" is used twice in one run of the task; step ids must be unique within a task"
    );
    let empty = ctx.begin_step("").await.unwrap_err().to_string();
    assert_eq!(empty, "step id must be a non-empty string, got \"\"");
    let outside = ctx
        .sleep("nap", SleepFor::Ms(10))
        .await
        .unwrap_err()
        .to_string();
    assert_eq!(
        outside,
        "ctx.sleep suspends the task, which needs a context a Worker made (this one was made with new TaskContext)"
    );
    let nap = NewStep {
        step_id: "nap".into(),
        kind: StepKind::Sleep,
        result: None,
        wake: Some(Wake::After(5)),
        child_id: None,
    };
    let owned = cairnq_core::store::HeldTask {
        task_id: task.id.clone(),
        worker_id: "worker_a".into(),
    };
    store.record_step(owned, nap).await.unwrap();
    let again = standalone(&store, task.clone(), "worker_a");
    let kind = again.begin_step("nap").await.unwrap_err().to_string();
    assert_eq!(
        kind,
        format!("step \"nap\" of task {} was stored by ctx.sleep, not ctx.step; a step id keeps its kind", task.id)
    );
    assert_eq!(row(&store, &task.id).await.status, Status::Running);

    let refused = Arc::new(Mutex::new(Vec::<String>::new()));
    let (in_batch, in_child) = (refused.clone(), refused.clone());
    let batched = handler(move |ctx| {
        let refused = in_batch.clone();
        async move {
            let err = ctx.sleep("nap", SleepFor::Ms(10)).await.unwrap_err();
            refused.lock().unwrap().push(err.to_string());
            Some(CallOutcome::Returned(Vec::new()))
        }
    });
    let keyed = handler(move |ctx| {
        let refused = in_child.clone();
        async move {
            let kid = SubmitInput {
                key: Some("mine".into()),
                ..child_input("kid", "{}")
            };
            let err = ctx.call_child("kid", kid, 1000).await.unwrap_err();
            refused.lock().unwrap().push(err.to_string());
            returns("null")
        }
    });
    let worker = run(
        &store,
        vec![("batched", batched), ("keyed", keyed)],
        &["batched"],
        2.0,
    );
    let b = submit(&store, "batched", "{}").await;
    let k = submit(&store, "keyed", "{}").await;
    assert_eq!(finished(&store, &b.id).await.status, Status::Succeeded);
    assert_eq!(finished(&store, &k.id).await.status, Status::Succeeded);
    worker.stop().await;
    let mut refused = refused.lock().unwrap().clone();
    refused.sort();
    assert_eq!(
        refused,
        vec![
            "ctx.callChild cannot take key: the child's key is its parent's and its step's"
                .to_string(),
            "ctx.sleep cannot suspend a task of a batch call: its handler runs for the whole batch"
                .to_string(),
        ]
    );
    assert!(store.load_steps(&k.id).await.unwrap().is_empty());
    assert!(store.load_steps(&b.id).await.unwrap().is_empty());
}

/// A step written after the lease was lost is refused and stores nothing.
pub async fn a_lost_lease_stores_nothing(store: Arc<Store>) {
    submit(&store, "job", "{}").await;
    let task = claim_one(&store, "job", "worker_a", 50).await;
    let ctx = standalone(&store, task.clone(), "worker_a");
    assert_eq!(ctx.begin_step("a").await.unwrap(), Some(StepStart::Run));
    tokio::time::sleep(Duration::from_millis(120)).await;
    let taken = claim_one(&store, "job", "worker_b", 30_000).await;
    assert_eq!(taken.id, task.id);
    let err = ctx.commit_step("a", Some("1".into())).await.unwrap_err();
    assert!(matches!(err, Error::LostLease { .. }), "{err}");
    assert!(ctx.lease_lost());
    assert!(store.load_steps(&task.id).await.unwrap().is_empty());
}

/// No table until the first step is written; reads before create nothing.
/// A purge takes a task's steps with it.
pub async fn the_table_appears_on_first_use_and_goes_with_purged_tasks(store: Arc<Store>) {
    store.connect().await.unwrap();
    submit(&store, "job", "{}").await;
    let task = claim_one(&store, "job", "worker_a", 30_000).await;
    assert!(!store.steps_installed().await.unwrap());
    let ctx = standalone(&store, task.clone(), "worker_a");
    assert_eq!(ctx.begin_step("a").await.unwrap(), Some(StepStart::Run));
    assert!(store.step_summaries(&task.id).await.unwrap().is_empty());
    assert!(!store.steps_installed().await.unwrap());
    ctx.commit_step("a", Some(r#""é""#.into())).await.unwrap();
    assert!(store.steps_installed().await.unwrap());
    let summaries = store.step_summaries(&task.id).await.unwrap();
    assert_eq!(
        (summaries[0].step_id.as_str(), summaries[0].size),
        ("a", 4),
        "the size is the result's UTF-8 bytes"
    );
    ctx.succeed(Some("1".into())).await.unwrap();
    // The purge takes tasks completed strictly before now.
    tokio::time::sleep(Duration::from_millis(5)).await;
    let purged = store
        .purge(PurgeInput {
            older_than_ms: Some(0.0),
            ..PurgeInput::default()
        })
        .await
        .unwrap();
    assert_eq!(purged, vec![task.id.clone()]);
    assert!(store.load_steps(&task.id).await.unwrap().is_empty());
}
