//! Signals shared by the dialect test files (docs/api.md, "Signals"): a real
//! `Worker` runs handlers that wait for signals as `lib/steps.js` does, and
//! the test sends them through the store.

use std::sync::Arc;

use cairnq_core::signals::new_signal;
use cairnq_core::store::{SubmitInput, Target};
use cairnq_core::worker::{TaskContext, WaitAnswer};
use cairnq_core::{Status, Store};

use super::steps::{finished, handler, json, returns, row_when, run, submit, threw, Handler};

/// A wait that never times out in a test: a task that resumes was signaled.
const NEVER_MS: i64 = 600_000;

async fn signal(store: &Store, target: Target, name: &str, payload: Option<&str>) -> Option<bool> {
    store
        .signal(target, new_signal(name, payload.map(String::from)).unwrap())
        .await
        .unwrap()
}

/// A wait as `lib/steps.js` runs it: one left waiting ends the run at once
/// (nothing else is under way); `None` when the run is over.
async fn wait_or_end(
    ctx: &TaskContext,
    id: &str,
    name: &str,
    timeout_ms: i64,
) -> Option<Option<String>> {
    match ctx.wait_for_signal(id, name, timeout_ms).await.unwrap() {
        WaitAnswer::Answered(payload) => Some(payload),
        WaitAnswer::Waiting => {
            assert!(ctx.suspend_for_waits().await.unwrap());
            None
        }
        WaitAnswer::Over => None,
    }
}

/// Waits for `name` once per entry of the payload (a count), answering the
/// payloads received as a JSON array (`null` for none).
fn waiter(name: &'static str, timeout_ms: i64) -> Handler {
    handler(move |ctx| async move {
        let count: usize = ctx.task().payload.parse().unwrap();
        let mut got = Vec::new();
        for i in 0..count {
            let payload = wait_or_end(&ctx, &format!("w{i}"), name, timeout_ms).await?;
            got.push(payload.unwrap_or_else(|| "null".into()));
        }
        returns(&format!("[{}]", got.join(",")))
    })
}

/// The row once the task waits for a signal (queued, its wait stored).
async fn waiting(store: &Store, id: &str) {
    let deadline = std::time::Instant::now() + super::steps::PATIENCE;
    loop {
        let waits = store.signal_summaries(id).await.unwrap().waits;
        let task = store.get(Target::Id(id.into())).await.unwrap().unwrap();
        if !waits.is_empty() && task.status == Status::Queued {
            assert_eq!(task.attempt, 0, "a wait gives its attempt back");
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "task {id} never waited: {task:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}

/// Signals sent before the task reached its waits are kept and consumed in
/// the order sent, one per wait; another name's signal is left alone. A
/// finished task takes no signal (`false`), an unknown id is `None`.
pub async fn buffered_signals_are_consumed_in_order(store: Arc<Store>) {
    let task = submit(&store, "approve", "3").await;
    for (name, payload) in [
        ("go", "1"),
        ("other", "9"),
        ("go", "{\"n\":2}"),
        ("go", "3"),
    ] {
        let sent = signal(&store, Target::Id(task.id.clone()), name, Some(payload)).await;
        assert_eq!(sent, Some(true));
    }
    let worker = run(&store, vec![("approve", waiter("go", NEVER_MS))], &[], 1.0);
    let done = finished(&store, &task.id).await;
    assert_eq!(done.status, Status::Succeeded);
    assert_eq!(
        json(done.result.as_deref()),
        serde_json::json!([1, {"n": 2}, 3])
    );
    let pending = store.signal_summaries(&task.id).await.unwrap().pending;
    assert_eq!(pending.len(), 1);
    assert_eq!((pending[0].name.as_str(), pending[0].size), ("other", 1));
    assert_eq!(
        signal(&store, Target::Id(task.id.clone()), "go", None).await,
        Some(false)
    );
    assert_eq!(
        signal(&store, Target::Id("task_none".into()), "go", None).await,
        None
    );
    worker.stop().await;
}

/// A task waiting (suspended, no slot held) is woken by a signal sent
/// afterwards, long before its timeout; by key as by id.
pub async fn a_signal_wakes_a_waiting_task(store: Arc<Store>) {
    let worker = run(&store, vec![("approve", waiter("go", NEVER_MS))], &[], 1.0);
    let task = store
        .submit(SubmitInput {
            name: "approve".into(),
            payload: Some("2".into()),
            key: Some("order-7".into()),
            ..SubmitInput::default()
        })
        .await
        .unwrap();
    waiting(&store, &task.id).await;
    assert_eq!(
        signal(&store, Target::Id(task.id.clone()), "go", Some("\"a\"")).await,
        Some(true)
    );
    row_when(&store, &task.id, "its second wait", |t| {
        t.status == Status::Queued
    })
    .await;
    waiting(&store, &task.id).await;
    let by_key = signal(&store, Target::Key("order-7".into()), "go", Some("\"b\"")).await;
    assert_eq!(by_key, Some(true));
    let done = finished(&store, &task.id).await;
    assert_eq!(json(done.result.as_deref()), serde_json::json!(["a", "b"]));
    assert_eq!((done.status, done.attempt), (Status::Succeeded, 1));
    assert_eq!(
        signal(&store, Target::Key("no-such-key".into()), "go", None).await,
        None
    );
    worker.stop().await;
}

/// A wait whose timeout passes resolves `null`, stored: the retry after a
/// failure replays the `null` though a signal came meanwhile.
pub async fn a_timed_out_wait_replays_its_null(store: Arc<Store>) {
    let sender = store.clone();
    let flaky = handler(move |ctx| {
        let store = sender.clone();
        async move {
            let got = wait_or_end(&ctx, "w", "go", 100).await?;
            if ctx.task().attempt == 1 {
                let id = Target::Id(ctx.task_id().to_string());
                let sent = store.signal(id, new_signal("go", Some("1".into())).unwrap());
                assert_eq!(sent.await.unwrap(), Some(true));
                return threw("once", true);
            }
            returns(got.as_deref().unwrap_or("null"))
        }
    });
    let worker = run(&store, vec![("flaky", flaky)], &[], 1.0);
    let task = submit(&store, "flaky", "{}").await;
    let done = finished(&store, &task.id).await;
    assert_eq!(
        (done.status, done.attempt, done.result.as_deref()),
        (Status::Succeeded, 2, Some("null"))
    );
    let pending = store.signal_summaries(&task.id).await.unwrap().pending;
    assert_eq!(pending.len(), 1, "the late signal is not consumed");
    worker.stop().await;
}

/// A race of two waits started together (`lib/steps.js`'s turn): both are
/// stored before the run suspends, so the second name's signal wakes the
/// task long before the timeout, and the wait that did not win answers
/// `null` once its timeout passes in a later run (here: never reached).
async fn race(ctx: Arc<TaskContext>, timeout_ms: i64) -> Option<Option<String>> {
    let (a, b) = tokio::join!(
        ctx.wait_for_signal("a", "approve", timeout_ms),
        ctx.wait_for_signal("b", "reject", timeout_ms)
    );
    for answer in [a.unwrap(), b.unwrap()] {
        match answer {
            WaitAnswer::Answered(payload) => return Some(payload),
            WaitAnswer::Over => return None,
            WaitAnswer::Waiting => {}
        }
    }
    ctx.suspend_for_waits().await.unwrap();
    None
}

/// Two waits of one run: a signal for the second wakes the task and answers
/// it; with neither sent, the earliest timeout wakes it with `null`.
pub async fn a_race_of_two_waits_wakes_on_either(store: Arc<Store>) {
    let racer = handler(|ctx| async move {
        let timeout_ms: i64 = ctx.task().payload.parse().unwrap();
        let got = race(ctx, timeout_ms).await?;
        returns(got.as_deref().unwrap_or("null"))
    });
    let worker = run(&store, vec![("race", racer)], &[], 1.0);
    let task = submit(&store, "race", &NEVER_MS.to_string()).await;
    waiting(&store, &task.id).await;
    let waits = store.signal_summaries(&task.id).await.unwrap().waits;
    assert_eq!(waits.len(), 2, "both waits are stored: {waits:?}");
    let sent = signal(
        &store,
        Target::Id(task.id.clone()),
        "reject",
        Some("\"no\""),
    )
    .await;
    assert_eq!(sent, Some(true));
    let done = finished(&store, &task.id).await;
    assert_eq!(
        (done.status, done.attempt, done.result.as_deref()),
        (Status::Succeeded, 1, Some("\"no\""))
    );

    let quiet = submit(&store, "race", "200").await;
    let timed_out = finished(&store, &quiet.id).await;
    assert_eq!(timed_out.result.as_deref(), Some("null"));
    worker.stop().await;
}

/// A signal sent after a wait was stored but before its run suspended is
/// not lost: the suspension sees it and makes the task due at once.
pub async fn a_signal_sent_while_the_run_runs_is_not_lost(store: Arc<Store>) {
    let sender = store.clone();
    let late = handler(move |ctx| {
        let store = sender.clone();
        async move {
            match ctx.wait_for_signal("w", "go", NEVER_MS).await.unwrap() {
                WaitAnswer::Answered(payload) => returns(payload.as_deref().unwrap_or("null")),
                WaitAnswer::Over => None,
                WaitAnswer::Waiting => {
                    let id = Target::Id(ctx.task_id().to_string());
                    let sent = store.signal(id, new_signal("go", Some("7".into())).unwrap());
                    assert_eq!(sent.await.unwrap(), Some(true));
                    assert!(ctx.suspend_for_waits().await.unwrap());
                    None
                }
            }
        }
    });
    let worker = run(&store, vec![("late", late)], &[], 1.0);
    let task = submit(&store, "late", "{}").await;
    let done = finished(&store, &task.id).await;
    assert_eq!(
        (done.status, done.result.as_deref()),
        (Status::Succeeded, Some("7"))
    );
    worker.stop().await;
}

/// Bad input is refused naming the field, before anything is written: no
/// table is created.
pub async fn bad_signal_input_writes_nothing(store: Arc<Store>) {
    assert_eq!(
        new_signal("", None).unwrap_err().to_string(),
        "signal name must be a non-empty string, got \"\""
    );
    assert!(new_signal("go", Some("not json".into())).is_err());
    assert!(!store.signals_installed().await.unwrap());
    let task = submit(&store, "t", "{}").await;
    assert_eq!(
        signal(&store, Target::Id(task.id.clone()), "go", None).await,
        Some(true)
    );
    assert!(store.signals_installed().await.unwrap());
}
