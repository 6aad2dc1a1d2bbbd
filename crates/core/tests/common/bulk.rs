//! retryMany and cancelMany shared by the dialect test files (docs/api.md,
//! "Bulk retry and cancel"): pages, filters, dry runs and refusals.

use std::sync::Arc;

use cairnq_core::bulk::{BulkOp, BulkRequest};
use cairnq_core::store::{ClaimRequest, HeldTask, Outcome, SubmitInput, Target};
use cairnq_core::{Status, Store, Task};

async fn submit(store: &Store, name: &str, queue: &str) -> String {
    let input = SubmitInput {
        name: name.into(),
        queue: Some(queue.into()),
        max_attempts: Some(1.0),
        ..SubmitInput::default()
    };
    store.submit(input).await.unwrap().id
}

/// Claim every queued task of `queue` (as worker `w`), and fail them for good.
async fn claim_all(store: &Store, queue: &str) -> Vec<Task> {
    let request = ClaimRequest {
        queues: vec![queue.into()],
        worker_id: "w".into(),
        lease_ms: 60_000,
        names: None,
    };
    store.claim(request, 100).await.unwrap()
}

async fn fail_all(store: &Store, queue: &str) -> Vec<String> {
    let mut ids = Vec::new();
    for task in claim_all(store, queue).await {
        let held = HeldTask {
            task_id: task.id.clone(),
            worker_id: "w".into(),
        };
        let outcome = Outcome::Fail {
            error: r#"{"message":"boom"}"#.into(),
            retryable: false,
            delay_ms: 0,
            dead_letter: Default::default(),
        };
        store.finish(held, outcome).await.unwrap();
        ids.push(task.id);
    }
    ids
}

async fn run(store: &Store, op: BulkOp, filter: &str) -> (Vec<String>, bool) {
    let request = BulkRequest::read(op, filter).unwrap();
    let page = store.bulk(request).await.unwrap();
    let mut ids = page.ids;
    ids.sort();
    (ids, page.more)
}

async fn status(store: &Store, id: &str) -> Task {
    store.get(Target::Id(id.into())).await.unwrap().unwrap()
}

/// A dry run lists the page a call would change and writes nothing; the
/// call then changes that page, filtered by queue, name and status; pages
/// walk the rest while `more`.
pub async fn retry_many_retries_one_page_at_a_time(store: Arc<Store>) {
    let mut failed = Vec::new();
    for _ in 0..5 {
        failed.push(submit(&store, "send", "mail").await);
    }
    let other_name = submit(&store, "other", "mail").await;
    let other_queue = submit(&store, "send", "sms").await;
    failed.sort();
    let mut done = fail_all(&store, "mail").await;
    done.extend(fail_all(&store, "sms").await);
    assert_eq!(done.len(), 7);
    let canceled = submit(&store, "send", "mail").await;
    store.cancel(Target::Id(canceled.clone())).await.unwrap();

    let filter = r#"{"queue":"mail","name":"send","limit":3,"dryRun":true}"#;
    let (would, more) = run(&store, BulkOp::RetryMany, filter).await;
    assert_eq!((would.len(), more), (3, true));
    assert_eq!(status(&store, &would[0]).await.status, Status::Failed);

    let filter = r#"{"queue":"mail","name":"send","limit":3}"#;
    let (first, more) = run(&store, BulkOp::RetryMany, filter).await;
    assert_eq!(
        (&first, more),
        (&would, true),
        "the dry run's page is the page changed"
    );
    let (second, more) = run(&store, BulkOp::RetryMany, filter).await;
    assert_eq!((second.len(), more), (2, false));
    let mut retried = [first, second].concat();
    retried.sort();
    assert_eq!(retried, failed);
    for id in &retried {
        let row = status(&store, id).await;
        assert_eq!((row.status, row.error.is_none()), (Status::Queued, true));
    }
    for id in [&other_name, &other_queue] {
        assert_eq!(status(&store, id).await.status, Status::Failed);
    }
    assert_eq!(status(&store, &canceled).await.status, Status::Canceled);

    let (canceled_ones, _) = run(&store, BulkOp::RetryMany, r#"{"status":"canceled"}"#).await;
    assert_eq!(canceled_ones, vec![canceled]);
    let (rest, more) = run(&store, BulkOp::RetryMany, r#"{"resetAttempt":true}"#).await;
    let mut expected = vec![other_name.clone(), other_queue];
    expected.sort();
    assert_eq!((rest, more), (expected, false));
    assert_eq!(status(&store, &other_name).await.attempt, 0);
}

/// The completion bounds pick failures by when they ended.
pub async fn retry_many_filters_by_completion_time(store: Arc<Store>) {
    let early = submit(&store, "job", "q").await;
    fail_all(&store, "q").await;
    let ended = status(&store, &early).await.completed_at_ms.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    let late = submit(&store, "job", "q").await;
    fail_all(&store, "q").await;
    let cut = ended + 1;
    let before = format!(r#"{{"finishedBefore":{cut},"dryRun":true}}"#);
    assert_eq!(run(&store, BulkOp::RetryMany, &before).await.0, vec![early]);
    let after = format!(r#"{{"finishedAfter":{cut},"dryRun":true}}"#);
    assert_eq!(run(&store, BulkOp::RetryMany, &after).await.0, vec![late]);
}

/// Queued tasks end canceled at once, running ones are asked to cancel; a
/// running one already asked is not picked again, so pages end.
pub async fn cancel_many_cancels_queued_and_flags_running(store: Arc<Store>) {
    let running = submit(&store, "job", "q").await;
    claim_all(&store, "q").await;
    let queued = [
        submit(&store, "job", "q").await,
        submit(&store, "job", "q").await,
    ];
    let elsewhere = submit(&store, "job", "other").await;

    let (would, _) = run(&store, BulkOp::CancelMany, r#"{"queue":"q","dryRun":true}"#).await;
    assert_eq!(would.len(), 3);
    assert_eq!(status(&store, &queued[0]).await.status, Status::Queued);

    let running_only = r#"{"queue":"q","status":"running"}"#;
    assert_eq!(
        run(&store, BulkOp::CancelMany, running_only).await.0,
        vec![running.clone()]
    );
    let flagged = status(&store, &running).await;
    assert_eq!(
        (flagged.status, flagged.cancel_requested()),
        (Status::Running, true)
    );

    let (rest, more) = run(&store, BulkOp::CancelMany, r#"{"queue":"q","limit":2}"#).await;
    let mut expected = queued.to_vec();
    expected.sort();
    assert_eq!((rest, more), (expected, true));
    let (none, more) = run(&store, BulkOp::CancelMany, r#"{"queue":"q","limit":2}"#).await;
    assert_eq!((none.len(), more), (0, false));
    for id in &queued {
        assert_eq!(status(&store, id).await.status, Status::Canceled);
    }
    assert_eq!(status(&store, &elsewhere).await.status, Status::Queued);
}

/// Bad filters are refused naming the field, before anything is written.
pub async fn bad_bulk_filters_are_refused(store: Arc<Store>) {
    let queued = submit(&store, "job", "q").await;
    let refusals = [
        (
            BulkOp::RetryMany,
            r#"{"status":"queued"}"#,
            "retryMany.status must be failed or canceled, got queued",
        ),
        (
            BulkOp::CancelMany,
            r#"{"status":"failed"}"#,
            "cancelMany.status must be queued or running, got failed",
        ),
        (
            BulkOp::RetryMany,
            r#"{"limit":0}"#,
            "retryMany.limit must be an integer from 1 to 10000, got 0",
        ),
        (
            BulkOp::CancelMany,
            r#"{"limit":2.5}"#,
            "cancelMany.limit must be an integer from 1 to 10000, got 2.5",
        ),
        (
            BulkOp::CancelMany,
            r#"{"limit":10001}"#,
            "cancelMany.limit must be an integer from 1 to 10000, got 10001",
        ),
        (
            BulkOp::RetryMany,
            r#"{"queue":""}"#,
            "retryMany.queue must be a non-empty string",
        ),
        (
            BulkOp::RetryMany,
            r#"{"finishedBefore":-1}"#,
            "retryMany.finishedBefore must be a valid Date",
        ),
        (
            BulkOp::RetryMany,
            r#"{"dryRun":"yes"}"#,
            "retryMany.dryRun must be a boolean",
        ),
        (
            BulkOp::CancelMany,
            r#"{"finishedBefore":1}"#,
            "unknown key \"finishedBefore\" in cancelMany filter",
        ),
        (
            BulkOp::CancelMany,
            r#"{"queue":5}"#,
            "cancelMany.queue must be a string",
        ),
    ];
    for (op, filter, message) in refusals {
        let err = BulkRequest::read(op, filter).unwrap_err().to_string();
        assert!(err.contains(message), "{filter}: {err}");
    }
    assert_eq!(status(&store, &queued).await.status, Status::Queued);
}
