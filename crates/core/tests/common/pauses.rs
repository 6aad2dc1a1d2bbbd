//! Queue pauses shared by the dialect test files (docs/api.md, "Queue
//! pauses"): a real `Worker` on one store, the pauses written through
//! another (as a client of the same process would). Other processes' pauses:
//! `__test__/pauses/processes.test.mjs`.

use std::sync::Arc;
use std::time::Duration;

use cairnq_core::{Status, Store};
use tokio::sync::Notify;

use super::steps::{handler, returns, row, row_when, run, submit};

/// What a worker that does not honour a pause would have claimed by now: its
/// poll interval is 20 ms and a refresh 250 ms.
const WELL_PAST_A_REFRESH: Duration = Duration::from_millis(800);

/// A running task finishes after its queue is paused; a task submitted to a
/// paused queue is accepted and stays queued; a resume lets it run.
pub async fn a_paused_queue_is_not_claimed_until_resumed(store: Arc<Store>, other: Arc<Store>) {
    let gate = Arc::new(Notify::new());
    let held = gate.clone();
    let gated = handler(move |_| {
        let gate = held.clone();
        async move {
            gate.notified().await;
            returns("1")
        }
    });
    let worker = run(&store, vec![("job", gated)], &[], 2.0);
    let first = submit(&store, "job", "1").await;
    row_when(&store, &first.id, "running", |t| {
        t.status == Status::Running
    })
    .await;

    assert!(other.pause_queue("default").await.unwrap());
    // Past the worker's refresh: from now on it claims nothing from the queue.
    tokio::time::sleep(WELL_PAST_A_REFRESH).await;
    let second = submit(&other, "job", "2").await;
    gate.notify_one();
    row_when(&store, &first.id, "succeeded", |t| {
        t.status == Status::Succeeded
    })
    .await;
    tokio::time::sleep(WELL_PAST_A_REFRESH).await;
    let waiting = row(&store, &second.id).await;
    assert_eq!(
        (waiting.status, waiting.attempt),
        (Status::Queued, 0),
        "a paused queue was claimed"
    );

    assert!(other.resume_queue("default").await.unwrap());
    gate.notify_one();
    row_when(&store, &second.id, "succeeded", |t| {
        t.status == Status::Succeeded
    })
    .await;
    worker.stop().await;
}

/// Pause and resume are idempotent, take any queue name, refuse a bad one
/// writing nothing, and create the table only on the first pause.
pub async fn pauses_are_idempotent_and_checked(store: Arc<Store>) {
    assert!(!store.resume_queue("mail").await.unwrap());
    assert!(store.paused_queues().await.unwrap().is_empty());
    assert_eq!(
        store.pause_queue("").await.unwrap_err().to_string(),
        "queue must be a non-empty string, got \"\""
    );
    assert!(!store.pauses_installed().await.unwrap(), "nothing created");

    submit(&store, "job", "1").await;
    assert!(store.pause_queue("not-yet-used").await.unwrap());
    assert!(!store.pause_queue("not-yet-used").await.unwrap());
    assert!(store.pauses_installed().await.unwrap());
    let listed: Vec<(String, i64, bool)> = store
        .queues()
        .await
        .unwrap()
        .into_iter()
        .map(|q| {
            (
                q.queue,
                q.counts[Status::Queued as usize],
                q.paused_at_ms.is_some(),
            )
        })
        .collect();
    assert_eq!(
        listed,
        [
            ("default".to_string(), 1, false),
            ("not-yet-used".to_string(), 0, true)
        ]
    );
    assert!(store.resume_queue("not-yet-used").await.unwrap());
    assert!(!store.resume_queue("not-yet-used").await.unwrap());
    assert_eq!(store.queues().await.unwrap().len(), 1);
}
