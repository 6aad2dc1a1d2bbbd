//! The worker runtime against real SQLite files, with handlers written as Rust
//! closures. Handlers that must block run on a dedicated thread standing in
//! for the JS event loop. Every wait is on a condition, with a generous limit.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{mpsc, Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use cairnq_core::store::{SubmitInput, Target};
use cairnq_core::worker::{
    Call, CallOutcome, ErrorInfo, Invoker, Phase, Registration, TaskContext, TaskResult, Worker,
    WorkerOptions,
};
use cairnq_core::{Error, Status, Store, Task};
use tempfile::TempDir;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

const PATIENCE: Duration = Duration::from_secs(20);

// ---------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------

struct Db {
    _dir: TempDir,
    path: String,
    store: Arc<Store>,
}

fn db() -> Db {
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = dir.path().join("queue.db").to_string_lossy().into_owned();
    let store = Store::sqlite(&path, None);
    Db {
        _dir: dir,
        path,
        store,
    }
}

async fn submit(store: &Store, name: &str, payload: &str) -> Task {
    submit_with(store, name, payload, None).await
}

async fn submit_with(store: &Store, name: &str, payload: &str, max_attempts: Option<f64>) -> Task {
    store
        .submit(SubmitInput {
            name: name.into(),
            payload: Some(payload.into()),
            max_attempts,
            ..Default::default()
        })
        .await
        .expect("submit")
}

async fn row(store: &Store, id: &str) -> Task {
    store
        .get(Target::Id(id.into()))
        .await
        .expect("get")
        .expect("the task exists")
}

/// Polls `check` until it holds; fails the test after `PATIENCE`.
async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let deadline = Instant::now() + PATIENCE;
    while !check().await {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn status_is(store: &Store, id: &str, status: Status) -> bool {
    row(store, id).await.status == status
}

type Reported = Arc<Mutex<Vec<(Error, ErrorInfo)>>>;

fn options_reporting_to(errors: &Reported) -> WorkerOptions {
    let errors = errors.clone();
    WorkerOptions {
        poll_interval_ms: Some(20.0),
        on_error: Some(Arc::new(move |err, info| {
            errors.lock().unwrap().push((err, info))
        })),
        ..Default::default()
    }
}

fn worker(store: &Arc<Store>, options: WorkerOptions) -> Worker {
    Worker::new(store.clone(), vec!["default".into()], options).expect("valid options")
}

fn plain() -> Registration {
    Registration::default()
}

fn batch_of(n: f64) -> Registration {
    Registration {
        batch: Some(n),
        ..Default::default()
    }
}

/// An invoker that answers through the worker it is bound to.
trait Bound: Invoker {
    fn bind(&self, worker: &Worker);
}

fn start<I: Bound>(worker: &Worker, invoker: Arc<I>, concurrency: Option<f64>) -> JoinHandle<()> {
    invoker.bind(worker);
    let worker = worker.clone();
    tokio::spawn(async move { worker.run(invoker, concurrency).await.expect("run") })
}

async fn stop(worker: &Worker, running: JoinHandle<()>) {
    worker.stop();
    tokio::time::timeout(PATIENCE, running)
        .await
        .expect("run settles after stop")
        .expect("run does not panic");
}

fn value(json: &str) -> TaskResult {
    TaskResult::Value(Some(json.into()))
}

/// A single-task handler's return: `None` is `undefined`/`null`.
fn returns(json: Option<&str>) -> CallOutcome {
    CallOutcome::Returned(vec![TaskResult::Value(json.map(Into::into))])
}

/// Handlers as an async closure over the call; remembers lease-loss notices
/// and how many calls each delivery (one `start`, one poll's dispatch) carried.
struct Closure<F> {
    handler: F,
    /// Each abort heard: the task and the reason.
    lost: Mutex<Vec<(String, &'static str)>>,
    deliveries: Mutex<Vec<usize>>,
    worker: OnceLock<Worker>,
}

fn closure<F, Fut>(handler: F) -> Arc<Closure<F>>
where
    F: Fn(Arc<Call>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = CallOutcome> + Send + 'static,
{
    Arc::new(Closure {
        handler,
        lost: Mutex::new(Vec::new()),
        deliveries: Mutex::new(Vec::new()),
        worker: OnceLock::new(),
    })
}

#[async_trait]
impl<F, Fut> Invoker for Closure<F>
where
    F: Fn(Arc<Call>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = CallOutcome> + Send + 'static,
{
    fn start(&self, calls: &[Arc<Call>]) -> Result<(), Error> {
        self.deliveries.lock().unwrap().push(calls.len());
        let worker = self.worker.get().expect("bound").clone();
        for call in calls {
            let (worker, id, outcome) = (worker.clone(), call.id, (self.handler)(call.clone()));
            tokio::spawn(async move { worker.settle(id, outcome.await) });
        }
        Ok(())
    }

    fn aborted(&self, context: &TaskContext) {
        let reason = context.abort_reason().expect("aborted").as_str();
        self.lost
            .lock()
            .unwrap()
            .push((context.task_id().to_string(), reason));
    }
}

impl<F, Fut> Bound for Closure<F>
where
    F: Fn(Arc<Call>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = CallOutcome> + Send + 'static,
{
    fn bind(&self, worker: &Worker) {
        let _ = self.worker.set(worker.clone());
    }
}

type Job = Box<dyn FnOnce() + Send>;

/// Runs synchronous handlers and pings on one thread, like a JS event loop:
/// a handler that blocks also holds up every ping.
struct LoopThread<H> {
    jobs: mpsc::Sender<Job>,
    handler: Arc<H>,
    worker: OnceLock<Worker>,
}

fn loop_thread<H>(handler: H) -> Arc<LoopThread<H>>
where
    H: Fn(&Call) -> CallOutcome + Send + Sync + 'static,
{
    let (jobs, queue) = mpsc::channel::<Job>();
    std::thread::spawn(move || {
        for job in queue {
            job();
        }
    });
    Arc::new(LoopThread {
        jobs,
        handler: Arc::new(handler),
        worker: OnceLock::new(),
    })
}

#[async_trait]
impl<H> Invoker for LoopThread<H>
where
    H: Fn(&Call) -> CallOutcome + Send + Sync + 'static,
{
    fn start(&self, calls: &[Arc<Call>]) -> Result<(), Error> {
        let worker = self.worker.get().expect("bound").clone();
        for call in calls {
            let (handler, worker, call) = (self.handler.clone(), worker.clone(), call.clone());
            let job: Job = Box::new(move || worker.settle(call.id, handler(&call)));
            self.jobs.send(job).expect("the loop thread runs");
        }
        Ok(())
    }

    async fn ping(&self) {
        let (answer, answered) = oneshot::channel();
        let job: Job = Box::new(move || {
            let _ = answer.send(());
        });
        self.jobs.send(job).expect("the loop thread runs");
        let _ = answered.await;
    }
}

impl<H> Bound for LoopThread<H>
where
    H: Fn(&Call) -> CallOutcome + Send + Sync + 'static,
{
    fn bind(&self, worker: &Worker) {
        let _ = self.worker.set(worker.clone());
    }
}

/// Counts calls running at once and remembers the peak.
#[derive(Default)]
struct Occupancy {
    now: AtomicUsize,
    peak: AtomicUsize,
}

impl Occupancy {
    async fn hold(&self, time: Duration) {
        let now = self.now.fetch_add(1, SeqCst) + 1;
        self.peak.fetch_max(now, SeqCst);
        tokio::time::sleep(time).await;
        self.now.fetch_sub(1, SeqCst);
    }

    fn peak(&self) -> usize {
        self.peak.load(SeqCst)
    }
}

async fn all_succeeded(store: &Store, ids: &[String]) -> bool {
    for id in ids {
        if !status_is(store, id, Status::Succeeded).await {
            return false;
        }
    }
    true
}

// ---------------------------------------------------------------------------
// Leases and the heartbeat
// ---------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_blocked_handler_thread_keeps_its_lease_runs_once_and_is_reported() {
    let db = db();
    let other_store = Store::sqlite(&db.path, None);
    let errors = Reported::default();
    let runs = Arc::new(AtomicUsize::new(0));
    let options = || WorkerOptions {
        lease_ms: Some(1000.0),
        ..options_reporting_to(&errors)
    };
    let (first, second) = (
        worker(&db.store, options()),
        worker(&other_store, options()),
    );
    for w in [&first, &second] {
        w.register("slow", plain()).unwrap();
    }
    let blocking = || {
        let runs = runs.clone();
        loop_thread(move |_call: &Call| {
            runs.fetch_add(1, SeqCst);
            std::thread::sleep(Duration::from_millis(3500));
            returns(Some("\"done\""))
        })
    };
    let task = submit(&db.store, "slow", "{}").await;
    let running = [
        start(&first, blocking(), None),
        start(&second, blocking(), None),
    ];

    eventually("the slow task to succeed", || {
        status_is(&db.store, &task.id, Status::Succeeded)
    })
    .await;
    let [a, b] = running;
    stop(&first, a).await;
    stop(&second, b).await;

    let done = row(&db.store, &task.id).await;
    assert_eq!(runs.load(SeqCst), 1);
    assert_eq!(done.attempt, 1);
    assert_eq!(done.result.as_deref(), Some("\"done\""));
    let errors = errors.lock().unwrap();
    assert_eq!(errors.len(), 1, "only the stall is reported: {errors:?}");
    let (err, info) = &errors[0];
    match err {
        Error::EventLoopBlocked {
            late_ms,
            interval_ms,
            lease_ms,
        } => {
            assert!(*late_ms > 2000, "late by {late_ms}ms");
            assert_eq!((*interval_ms, *lease_ms), (333, 1000));
        }
        other => panic!("expected EventLoopBlocked, got {other:?}"),
    }
    assert!(err.to_string().contains("event loop was blocked"));
    assert_eq!(info.phase, Phase::Execute);
    assert_eq!(info.task_id.as_deref(), Some(task.id.as_str()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_lease_loss_is_flagged_only_for_the_task_the_heartbeat_misses() {
    let db = db();
    let errors = Reported::default();
    let w = worker(
        &db.store,
        WorkerOptions {
            lease_ms: Some(600.0),
            ..options_reporting_to(&errors)
        },
    );
    w.register("pair", batch_of(2.0)).unwrap();
    let stolen = submit(&db.store, "pair", "{\"i\":0}").await;
    let kept = submit(&db.store, "pair", "{\"i\":1}").await;
    let contexts = Arc::new(Mutex::new(Vec::new()));
    let seen = contexts.clone();
    let invoker = closure(move |call: Arc<Call>| {
        let seen = seen.clone();
        async move {
            seen.lock().unwrap().extend(call.contexts.iter().cloned());
            let stolen = call
                .contexts
                .iter()
                .find(|c| c.task().payload == "{\"i\":0}")
                .unwrap();
            let deadline = Instant::now() + PATIENCE;
            while !stolen.lease_lost() && Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            CallOutcome::Returned(vec![value("1"), value("2")])
        }
    });
    let running = start(&w, invoker.clone(), None);
    eventually("the batch to start", || async {
        contexts.lock().unwrap().len() == 2
    })
    .await;

    // Another worker takes one task over, as after a lease expiry.
    let thief = rusqlite::Connection::open(&db.path).unwrap();
    thief.busy_timeout(Duration::from_secs(10)).unwrap();
    thief
        .execute(
            "update cairnq_tasks set worker_id = 'thief', lease_until_ms = lease_until_ms + 600000 where id = ?1",
            [&stolen.id],
        )
        .unwrap();

    eventually("the kept task to succeed", || {
        status_is(&db.store, &kept.id, Status::Succeeded)
    })
    .await;
    stop(&w, running).await;

    let by_id: HashMap<String, Arc<TaskContext>> = contexts
        .lock()
        .unwrap()
        .iter()
        .map(|c| (c.task_id().to_string(), c.clone()))
        .collect();
    assert!(by_id[&stolen.id].lease_lost());
    assert!(!by_id[&stolen.id].settled());
    assert!(!by_id[&kept.id].lease_lost());
    assert!(by_id[&kept.id].settled());
    assert_eq!(
        *invoker.lost.lock().unwrap(),
        [(stolen.id.clone(), "lostLease")]
    );
    let stolen_row = row(&db.store, &stolen.id).await;
    assert_eq!(stolen_row.status, Status::Running);
    assert_eq!(stolen_row.worker_id.as_deref(), Some("thief"));
    assert_eq!(row(&db.store, &kept.id).await.result.as_deref(), Some("2"));
    assert!(errors.lock().unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_cancel_seen_while_running_finalizes_the_task_as_canceled() {
    let db = db();
    let w = worker(
        &db.store,
        WorkerOptions {
            lease_ms: Some(300.0),
            ..options_reporting_to(&Reported::default())
        },
    );
    w.register("job", plain()).unwrap();
    let task = submit(&db.store, "job", "{}").await;
    let observed = Arc::new(Mutex::new(None));
    let seen = observed.clone();
    let invoker = closure(move |call: Arc<Call>| {
        let seen = seen.clone();
        async move {
            let context = call.contexts[0].clone();
            *seen.lock().unwrap() = Some(context.clone());
            let deadline = Instant::now() + PATIENCE;
            while !context.cancel_seen() && Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            returns(Some("\"finished anyway\""))
        }
    });
    let running = start(&w, invoker, None);
    eventually("the handler to start", || async {
        observed.lock().unwrap().is_some()
    })
    .await;
    db.store.cancel(Target::Id(task.id.clone())).await.unwrap();

    eventually("the task to end canceled", || {
        status_is(&db.store, &task.id, Status::Canceled)
    })
    .await;
    stop(&w, running).await;
    let context = observed.lock().unwrap().clone().unwrap();
    assert!(context.cancel_seen() && context.settled() && !context.lease_lost());
    assert_eq!(row(&db.store, &task.id).await.result, None);
}

// ---------------------------------------------------------------------------
// maxRunMs
// ---------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn max_run_ms_fails_a_handler_that_never_returns_and_frees_its_slot() {
    let db = db();
    let errors = Reported::default();
    let w = worker(
        &db.store,
        WorkerOptions {
            max_run_ms: Some(200.0),
            ..options_reporting_to(&errors)
        },
    );
    w.register("hang", plain()).unwrap();
    w.register("quick", plain()).unwrap();
    let hung = submit_with(&db.store, "hang", "{}", Some(1.0)).await;
    let quick = submit(&db.store, "quick", "{}").await;
    let hung_contexts = Arc::new(Mutex::new(Vec::new()));
    let seen = hung_contexts.clone();
    let invoker = closure(move |call: Arc<Call>| {
        let seen = seen.clone();
        async move {
            if call.name == "hang" {
                seen.lock().unwrap().extend(call.contexts.iter().cloned());
                std::future::pending::<()>().await;
            }
            returns(None)
        }
    });
    let running = start(&w, invoker.clone(), Some(1.0));

    eventually("the hung task to fail and the next to run", || async {
        status_is(&db.store, &hung.id, Status::Failed).await
            && status_is(&db.store, &quick.id, Status::Succeeded).await
    })
    .await;
    stop(&w, running).await;

    let failed = row(&db.store, &hung.id).await;
    assert_eq!(
        failed.error.as_deref(),
        Some(
            r#"{"type":"HandlerTimeout","code":"handler_timeout","message":"handler for hang exceeded maxRunMs=200ms; the attempt was abandoned","retryable":true,"details":{}}"#
        )
    );
    let context = hung_contexts.lock().unwrap()[0].clone();
    assert!(context.lease_lost() && context.settled());
    assert_eq!(
        *invoker.lost.lock().unwrap(),
        [(hung.id.clone(), "timeout")]
    );
    // Writes through an abandoned context are refused without touching the store.
    assert!(matches!(
        context.progress(Some(0.5), None).await,
        Err(Error::LostLease { .. })
    ));
    assert!(errors.lock().unwrap().is_empty());
}

/// `stop_with`'s deadline: the running call is abandoned (its context aborted
/// for shutdown, its writes refused) and its task handed back at once, due
/// now, its attempt given back.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_stop_deadline_hands_back_a_hung_call() {
    let db = db();
    let w = worker(
        &db.store,
        WorkerOptions {
            lease_ms: Some(600_000.0),
            ..Default::default()
        },
    );
    w.register("hang", plain()).unwrap();
    let task = submit(&db.store, "hang", "{}").await;
    let hung = Arc::new(Mutex::new(Vec::new()));
    let seen = hung.clone();
    let invoker = closure(move |call: Arc<Call>| {
        seen.lock().unwrap().extend(call.contexts.iter().cloned());
        async move {
            std::future::pending::<()>().await;
            returns(None)
        }
    });
    let running = start(&w, invoker.clone(), Some(1.0));
    eventually("the task to be claimed", || {
        status_is(&db.store, &task.id, Status::Running)
    })
    .await;
    assert!(w.stop_with(r#"{"timeoutMs":-1}"#).is_err());
    w.stop_with(r#"{"timeoutMs":100}"#).unwrap();
    tokio::time::timeout(PATIENCE, running)
        .await
        .expect("run settles at the deadline")
        .expect("run does not panic");

    let context = hung.lock().unwrap()[0].clone();
    assert!(context.lease_lost() && context.settled());
    assert_eq!(
        *invoker.lost.lock().unwrap(),
        [(task.id.clone(), "shutdown")]
    );
    let back = row(&db.store, &task.id).await;
    assert_eq!(back.status, Status::Queued);
    assert_eq!(
        (back.attempt, back.worker_id, back.lease_until_ms),
        (0, None, None)
    );
    assert!(back.run_at_ms <= cairnq_core::ids::now_ms());
}

// ---------------------------------------------------------------------------
// Settlement
// ---------------------------------------------------------------------------

const CUSTOM_FAILURE: &str =
    r#"{"type":"TaskError","code":"bad_input","message":"no","retryable":false,"details":{}}"#;
const THROWN: &str =
    r#"{"type":"Error","code":"handler_error","message":"boom","retryable":true,"details":{}}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn leftovers_of_a_batch_are_settled_by_how_the_handler_ended() {
    let db = db();
    let errors = Reported::default();
    let w = worker(
        &db.store,
        WorkerOptions {
            // Re-queued tasks stay queued for the rest of the test.
            retry_backoff_ms: Some(60_000.0),
            retry_backoff_max_ms: Some(120_000.0),
            ..options_reporting_to(&errors)
        },
    );
    w.register("mix", batch_of(4.0)).unwrap();
    w.register("throws", batch_of(3.0)).unwrap();
    w.register("abandons", batch_of(2.0)).unwrap();
    let mut ids: HashMap<&str, Vec<String>> = HashMap::new();
    for (name, count) in [("mix", 4), ("throws", 3), ("abandons", 2)] {
        for i in 0..count {
            let task = submit(&db.store, name, &format!("{{\"i\":{i}}}")).await;
            ids.entry(name).or_default().push(task.id);
        }
    }
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = calls.clone();
    let invoker = closure(move |call: Arc<Call>| {
        let counter = counter.clone();
        async move {
            let c = &call.contexts;
            let outcome = match call.name.as_str() {
                "mix" => {
                    c[0].succeed(Some("\"early\"".into())).await.unwrap();
                    c[1].fail(CUSTOM_FAILURE.into(), false, "{}", None)
                        .await
                        .unwrap();
                    assert!(c[0].succeed(None).await.unwrap().is_none(), "settle once");
                    CallOutcome::Returned(vec![
                        value("\"late\""),
                        value("\"ignored\""),
                        TaskResult::Unserializable("Do not know how to serialize a BigInt".into()),
                        TaskResult::Value(None),
                    ])
                }
                "throws" => {
                    c[0].succeed(None).await.unwrap();
                    CallOutcome::Threw {
                        envelope_json: THROWN.into(),
                        retryable: true,
                        backoff_ms: Vec::new(),
                    }
                }
                _ => CallOutcome::LostLease,
            };
            counter.fetch_add(1, SeqCst);
            outcome
        }
    });
    let running = start(&w, invoker, Some(3.0));
    eventually("the three calls", || async { calls.load(SeqCst) == 3 }).await;
    // Stopping drains the calls, settlement writes included.
    stop(&w, running).await;

    let mix = &ids["mix"];
    let early = row(&db.store, &mix[0]).await;
    assert_eq!(
        (early.status, early.result.as_deref()),
        (Status::Succeeded, Some("\"early\""))
    );
    let custom = row(&db.store, &mix[1]).await;
    assert_eq!(
        (custom.status, custom.error.as_deref()),
        (Status::Failed, Some(CUSTOM_FAILURE))
    );
    let unserializable = row(&db.store, &mix[2]).await;
    assert_eq!(unserializable.status, Status::Failed);
    assert_eq!(
        unserializable.error.as_deref(),
        Some(
            r#"{"type":"SerializationError","code":"unserializable_result","message":"handler result is not JSON-serializable: Do not know how to serialize a BigInt","retryable":false,"details":{}}"#
        )
    );
    let null_result = row(&db.store, &mix[3]).await;
    assert_eq!(
        (null_result.status, null_result.result),
        (Status::Succeeded, None)
    );

    let throws = &ids["throws"];
    assert_eq!(row(&db.store, &throws[0]).await.status, Status::Succeeded);
    for id in &throws[1..] {
        let retried = row(&db.store, id).await;
        assert_eq!(retried.status, Status::Queued);
        assert_eq!(retried.error.as_deref(), Some(THROWN));
    }
    for id in &ids["abandons"] {
        assert_eq!(row(&db.store, id).await.status, Status::Running);
    }
    assert!(errors.lock().unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn retries_wait_in_the_upper_half_of_the_backoff_window() {
    let db = db();
    let w = worker(
        &db.store,
        WorkerOptions {
            retry_backoff_ms: Some(60_000.0),
            retry_backoff_max_ms: Some(120_000.0),
            ..options_reporting_to(&Reported::default())
        },
    );
    for name in ["thrown", "via_context", "permanent"] {
        w.register(name, plain()).unwrap();
    }
    let thrown = submit(&db.store, "thrown", "{}").await;
    let via_context = submit(&db.store, "via_context", "{}").await;
    let permanent = submit(&db.store, "permanent", "{}").await;
    let invoker = closure(|call: Arc<Call>| async move {
        match call.name.as_str() {
            "thrown" => CallOutcome::Threw {
                envelope_json: THROWN.into(),
                retryable: true,
                backoff_ms: Vec::new(),
            },
            "via_context" => {
                call.contexts[0]
                    .fail(THROWN.into(), true, "{}", None)
                    .await
                    .unwrap();
                returns(Some("\"not written\""))
            }
            _ => CallOutcome::Threw {
                envelope_json: CUSTOM_FAILURE.into(),
                retryable: false,
                backoff_ms: Vec::new(),
            },
        }
    });
    let running = start(&w, invoker, Some(3.0));
    eventually("all three to be settled", || async {
        status_is(&db.store, &thrown.id, Status::Queued).await
            && status_is(&db.store, &via_context.id, Status::Queued).await
            && status_is(&db.store, &permanent.id, Status::Failed).await
    })
    .await;
    stop(&w, running).await;

    for id in [&thrown.id, &via_context.id] {
        let queued = row(&db.store, id).await;
        assert_eq!(queued.attempt, 1);
        let delay = queued.run_at_ms - queued.updated_at_ms;
        assert!((30_000..60_000).contains(&delay), "delay {delay}ms");
        assert_eq!(queued.result, None);
    }
    let failed = row(&db.store, &permanent.id).await;
    assert_eq!(failed.error.as_deref(), Some(CUSTOM_FAILURE));
    assert!(failed.completed_at_ms.is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_retryable_failure_runs_again_until_max_attempts() {
    let db = db();
    let w = worker(
        &db.store,
        WorkerOptions {
            retry_backoff_ms: Some(2.0),
            retry_backoff_max_ms: Some(4.0),
            ..options_reporting_to(&Reported::default())
        },
    );
    w.register("flaky", plain()).unwrap();
    let task = submit(&db.store, "flaky", "{}").await;
    let attempts = Arc::new(Mutex::new(Vec::new()));
    let seen = attempts.clone();
    let invoker = closure(move |call: Arc<Call>| {
        seen.lock().unwrap().push(call.contexts[0].task().attempt);
        async move {
            CallOutcome::Threw {
                envelope_json: THROWN.into(),
                retryable: true,
                backoff_ms: Vec::new(),
            }
        }
    });
    let running = start(&w, invoker, None);
    eventually("the task to fail for good", || {
        status_is(&db.store, &task.id, Status::Failed)
    })
    .await;
    stop(&w, running).await;
    assert_eq!(*attempts.lock().unwrap(), [1, 2, 3]);
    assert_eq!(row(&db.store, &task.id).await.attempt, 3);
}

// ---------------------------------------------------------------------------
// Scheduling
// ---------------------------------------------------------------------------

async fn peak_for(
    names: &[(&str, Registration)],
    tasks_per_name: usize,
    options: WorkerOptions,
    concurrency: f64,
) -> usize {
    let db = db();
    let options = WorkerOptions {
        poll_interval_ms: Some(20.0),
        ..options
    };
    let w = Worker::new(db.store.clone(), vec!["default".into()], options).unwrap();
    let mut ids = Vec::new();
    for (name, registration) in names {
        w.register(name, registration.clone()).unwrap();
        for _ in 0..tasks_per_name {
            let padded = format!("{{\"pad\":\"{}\"}}", "x".repeat(90));
            ids.push(submit(&db.store, name, &padded).await.id);
        }
    }
    let occupancy = Arc::new(Occupancy::default());
    let shared = occupancy.clone();
    let invoker = closure(move |_call: Arc<Call>| {
        let occupancy = shared.clone();
        async move {
            occupancy.hold(Duration::from_millis(100)).await;
            returns(None)
        }
    });
    let running = start(&w, invoker, Some(concurrency));
    eventually("every task to succeed", || all_succeeded(&db.store, &ids)).await;
    stop(&w, running).await;
    occupancy.peak()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_runs_first_claim_takes_one_call_and_the_next_poll_the_other_slots() {
    let db = db();
    let mut ids = Vec::new();
    for i in 0..12 {
        ids.push(submit(&db.store, "job", &i.to_string()).await.id);
    }
    let w = worker(&db.store, WorkerOptions::default());
    w.register("job", batch_of(2.0)).unwrap();
    let invoker = closure(|_call: Arc<Call>| async { returns(None) });
    let running = start(&w, invoker.clone(), Some(4.0));
    eventually("every task to succeed", || all_succeeded(&db.store, &ids)).await;
    stop(&w, running).await;
    let sizes = invoker.deliveries.lock().unwrap().clone();
    assert_eq!(sizes.first(), Some(&1), "calls per delivery: {sizes:?}");
    assert!(
        sizes[1] >= 3,
        "the second poll fills the free slots: {sizes:?}"
    );
    assert_eq!(
        sizes.iter().sum::<usize>(),
        6,
        "12 tasks in calls of 2: {sizes:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn per_name_concurrency_caps_calls_of_that_name() {
    let capped = Registration {
        concurrency: Some(2.0),
        ..Default::default()
    };
    let peak = peak_for(&[("capped", capped)], 6, WorkerOptions::default(), 8.0).await;
    assert_eq!(peak, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn names_sharing_a_resource_of_capacity_one_never_overlap() {
    let gpu = Registration {
        resource: Some("gpu".into()),
        ..Default::default()
    };
    let options = WorkerOptions {
        resources: vec![("gpu".into(), 1.0)],
        ..Default::default()
    };
    let peak = peak_for(&[("render", gpu.clone()), ("train", gpu)], 3, options, 4.0).await;
    assert_eq!(peak, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_byte_budget_holds_claims_while_calls_are_resident() {
    // 100-byte payloads, one call per poll: 0, 100 and 200 bytes are under
    // 250, so a third call starts; at 300 bytes the loop waits.
    let budget = |bytes| WorkerOptions {
        max_in_flight_bytes: Some(bytes),
        claim_batch: Some(1.0),
        ..Default::default()
    };
    assert_eq!(peak_for(&[("p", plain())], 6, budget(250.0), 10.0).await, 3);
    // A payload larger than the whole budget still runs, alone.
    assert_eq!(peak_for(&[("p", plain())], 3, budget(10.0), 10.0).await, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn claim_batch_still_delivers_whole_batches() {
    let db = db();
    let w = worker(
        &db.store,
        WorkerOptions {
            claim_batch: Some(1.0),
            ..Default::default()
        },
    );
    w.register("b", batch_of(3.0)).unwrap();
    let mut ids = Vec::new();
    for _ in 0..5 {
        ids.push(submit(&db.store, "b", "{}").await.id);
    }
    let sizes = Arc::new(Mutex::new(Vec::new()));
    let seen = sizes.clone();
    let invoker = closure(move |call: Arc<Call>| {
        seen.lock().unwrap().push((call.batch, call.contexts.len()));
        async { CallOutcome::Returned(Vec::new()) }
    });
    let running = start(&w, invoker, Some(1.0));
    eventually("every task to succeed", || all_succeeded(&db.store, &ids)).await;
    stop(&w, running).await;
    assert_eq!(*sizes.lock().unwrap(), [(true, 3), (true, 2)]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn rotation_alternates_sources_so_no_backlog_starves_another() {
    let db = db();
    let w = worker(&db.store, WorkerOptions::default());
    let own = Registration {
        concurrency: Some(5.0),
        ..Default::default()
    };
    w.register("a", own.clone()).unwrap();
    w.register("b", own).unwrap();
    let mut ids = Vec::new();
    for name in ["a", "a", "a", "a", "b", "b", "b", "b"] {
        ids.push(submit(&db.store, name, "{}").await.id);
    }
    let order = Arc::new(Mutex::new(Vec::new()));
    let seen = order.clone();
    let invoker = closure(move |call: Arc<Call>| {
        seen.lock().unwrap().push(call.name.clone());
        async { returns(None) }
    });
    let running = start(&w, invoker, Some(1.0));
    eventually("every task to succeed", || all_succeeded(&db.store, &ids)).await;
    stop(&w, running).await;
    assert_eq!(
        *order.lock().unwrap(),
        ["a", "b", "a", "b", "a", "b", "a", "b"]
    );
}

// ---------------------------------------------------------------------------
// Lifecycle and errors
// ---------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn stop_drains_calls_in_flight_before_run_returns() {
    let db = db();
    let w = worker(&db.store, WorkerOptions::default());
    w.register("job", plain()).unwrap();
    let task = submit(&db.store, "job", "{}").await;
    let (started, has_started) = oneshot::channel::<()>();
    let (release, released) = oneshot::channel::<()>();
    let signals = Mutex::new(Some((started, released)));
    let invoker = closure(move |_call: Arc<Call>| {
        let (started, released) = signals.lock().unwrap().take().expect("one call");
        async move {
            let _ = started.send(());
            let _ = released.await;
            returns(Some("\"drained\""))
        }
    });
    let running = start(&w, invoker, None);
    has_started.await.unwrap();
    w.stop();
    assert!(!running.is_finished());
    release.send(()).unwrap();
    tokio::time::timeout(PATIENCE, running)
        .await
        .unwrap()
        .unwrap();
    let done = row(&db.store, &task.id).await;
    assert_eq!(
        (done.status, done.result.as_deref()),
        (Status::Succeeded, Some("\"drained\""))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn stop_cuts_an_idle_sleep_short() {
    let db = db();
    let w = worker(
        &db.store,
        WorkerOptions {
            poll_interval_ms: Some(60_000.0),
            ..Default::default()
        },
    );
    w.register("job", plain()).unwrap();
    let task = submit(&db.store, "job", "{}").await;
    let running = start(
        &w,
        closure(|_call: Arc<Call>| async { returns(None) }),
        None,
    );
    // Once its only task is done, the loop finds nothing and sleeps a minute.
    eventually("the task to succeed", || {
        status_is(&db.store, &task.id, Status::Succeeded)
    })
    .await;
    let asked = Instant::now();
    stop(&w, running).await;
    assert!(asked.elapsed() < Duration::from_secs(5));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn claim_errors_are_reported_and_the_loop_recovers() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("queue.db").to_string_lossy().into_owned();
    let store = Store::sqlite(&path, Some(50.0));
    let errors = Reported::default();
    let w = worker(&store, options_reporting_to(&errors));
    w.register("job", plain()).unwrap();
    let task = submit(&store, "job", "{}").await;
    let blocker = rusqlite::Connection::open(&path).unwrap();
    blocker.execute_batch("BEGIN IMMEDIATE").unwrap();

    let invoker = closure(|_call: Arc<Call>| async { returns(None) });
    let running = start(&w, invoker, None);
    eventually("a claim error", || async {
        !errors.lock().unwrap().is_empty()
    })
    .await;
    blocker.execute_batch("ROLLBACK").unwrap();
    eventually("the task to succeed", || {
        status_is(&store, &task.id, Status::Succeeded)
    })
    .await;
    stop(&w, running).await;

    let errors = errors.lock().unwrap();
    let (err, info) = &errors[0];
    assert!(err.is_busy(), "{err:?}");
    assert_eq!(
        *info,
        ErrorInfo {
            phase: Phase::Claim,
            task_id: None
        }
    );
}
