//! Dead letters (docs/api.md, "Dead letters"), shared by the dialect test
//! files: a failure for good submits one letter to the task's dead-letter
//! queue in the failure's transaction (a context's, `store.fail`'s, lease
//! recovery's); a retry or a cancel writes none; bad input writes nothing.

use std::sync::Arc;
use std::time::Duration;

use cairnq_core::backoff::Backoff;
use cairnq_core::store::{ClaimRequest, HeldTask, ListInput, Outcome, SubmitInput, Target};
use cairnq_core::worker::TaskContext;
use cairnq_core::{Status, Store, Task};
use serde_json::{json, Value};

const ERROR: &str =
    r#"{"type":"Error","code":"handler_error","message":"boom","retryable":true,"details":{}}"#;

fn routed(max_attempts: f64) -> SubmitInput {
    SubmitInput {
        name: "mail".into(),
        payload: Some(r#"{"to":"a@b"}"#.into()),
        queue: Some("work".into()),
        max_attempts: Some(max_attempts),
        dead_letter: Some("dlq".into()),
        ..SubmitInput::default()
    }
}

async fn claim(store: &Arc<Store>, lease_ms: i64) -> Option<Task> {
    let request = ClaimRequest {
        queues: vec!["work".into()],
        worker_id: "w1".into(),
        lease_ms,
        names: None,
    };
    store.claim(request, 1).await.unwrap().pop()
}

async fn claimed_context(store: &Arc<Store>) -> TaskContext {
    let task = claim(store, 30_000).await.expect("a due task");
    TaskContext::new(store.clone(), task, "w1".into(), 30_000, Backoff::default())
}

async fn letters(store: &Arc<Store>) -> Vec<Task> {
    let input = ListInput {
        queue: Some("dlq".into()),
        ..ListInput::default()
    };
    store.list(input).await.unwrap()
}

fn metadata(task: &Task) -> Value {
    serde_json::from_str(&task.metadata).unwrap()
}

/// The letter of `failed`: its name and payload, where it came from and why,
/// and no route of its own.
fn assert_letter_of(letter: &Task, failed: &Task) {
    assert_eq!(
        (letter.name.as_str(), letter.status),
        ("mail", Status::Queued)
    );
    assert_eq!(letter.payload, failed.payload);
    assert_ne!(letter.id, failed.id);
    let error: Value = serde_json::from_str(failed.error.as_deref().unwrap()).unwrap();
    assert_eq!(
        metadata(letter),
        json!({"cairnq.deadLettered": {
            "from": {"id": failed.id, "queue": "work", "attempt": failed.attempt},
            "error": error,
        }})
    );
}

pub async fn a_failure_for_good_submits_one_letter(store: Arc<Store>) {
    let task = store.submit(routed(2.0)).await.unwrap();
    assert_eq!(metadata(&task), json!({"cairnq.deadLetter": "dlq"}));
    let context = claimed_context(&store).await;
    let retried = context.fail(ERROR.into(), true, r#"{"delayMs":0}"#, None);
    assert_eq!(retried.await.unwrap().unwrap().status, Status::Queued);
    assert!(letters(&store).await.is_empty(), "a retry writes no letter");
    let context = claimed_context(&store).await;
    let failed = context
        .fail(ERROR.into(), true, "{}", None)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((failed.status, failed.attempt), (Status::Failed, 2));
    let letters = letters(&store).await;
    assert_eq!(letters.len(), 1);
    assert_letter_of(&letters[0], &failed);
}

pub async fn a_cancel_or_a_plain_task_writes_no_letter(store: Arc<Store>) {
    store.submit(routed(1.0)).await.unwrap();
    let context = claimed_context(&store).await;
    store
        .cancel(Target::Id(context.task_id().into()))
        .await
        .unwrap();
    let row = context.fail(ERROR.into(), false, "{}", None).await.unwrap();
    assert_eq!(row.unwrap().status, Status::Canceled);
    store
        .submit(SubmitInput {
            dead_letter: None,
            ..routed(1.0)
        })
        .await
        .unwrap();
    let context = claimed_context(&store).await;
    let row = context.fail(ERROR.into(), false, "{}", None).await.unwrap();
    assert_eq!(row.unwrap().status, Status::Failed);
    assert!(letters(&store).await.is_empty());
}

pub async fn store_fail_and_lease_recovery_dead_letter_too(store: Arc<Store>) {
    // store.fail (a fetched task's fail): the route is read from the row.
    store.submit(routed(1.0)).await.unwrap();
    let task = claim(&store, 30_000).await.unwrap();
    let held = HeldTask {
        task_id: task.id.clone(),
        worker_id: "w1".into(),
    };
    let outcome = cairnq_core::store::fail_outcome(ERROR.into(), true, None).unwrap();
    assert!(matches!(outcome, Outcome::Fail { .. }));
    let failed = store.finish(held, outcome).await.unwrap();
    assert_letter_of(&letters(&store).await[0], &failed);

    // Lease recovery of a last attempt: the next claim fails it, with its letter.
    let lost = store.submit(routed(1.0)).await.unwrap();
    claim(&store, 50).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await; // past the 50 ms lease
    claim(&store, 30_000).await;
    let failed = store.get(Target::Id(lost.id)).await.unwrap().unwrap();
    assert_eq!(failed.status, Status::Failed);
    let letters = letters(&store).await;
    assert_eq!(letters.len(), 2);
    let letter = letters.iter().find(|l| {
        l.payload == failed.payload
            && metadata(l)["cairnq.deadLettered"]["from"]["id"] == json!(failed.id)
    });
    assert_letter_of(letter.expect("the recovered task's letter"), &failed);
}

pub async fn a_bad_dead_letter_queue_writes_nothing(store: Arc<Store>) {
    let refused = store
        .submit(SubmitInput {
            dead_letter: Some(String::new()),
            ..routed(1.0)
        })
        .await
        .unwrap_err();
    assert_eq!(
        refused.to_string(),
        "deadLetter must be a non-empty string, got \"\""
    );
    assert!(store.list(ListInput::default()).await.unwrap().is_empty());
}
