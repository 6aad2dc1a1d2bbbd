//! Retry policies (docs/api.md, "Retry policy"), shared by the dialect test
//! files: a submit's `retry` in `max_attempts` and the metadata, the
//! backoff a context then follows, and `ctx.fail`'s `delayMs`.

use std::sync::Arc;

use cairnq_core::backoff::Backoff;
use cairnq_core::retry::RetrySpec;
use cairnq_core::store::{ClaimRequest, ListInput, SubmitInput, Target};
use cairnq_core::worker::TaskContext;
use cairnq_core::{Status, Store};

fn job(retry: RetrySpec, max_attempts: Option<f64>) -> SubmitInput {
    SubmitInput {
        name: "job".into(),
        retry: Some(retry),
        max_attempts,
        ..SubmitInput::default()
    }
}

async fn claimed_context(store: &Arc<Store>) -> TaskContext {
    let request = ClaimRequest {
        queues: vec!["default".into()],
        worker_id: "w1".into(),
        lease_ms: 30_000,
        names: None,
    };
    let task = store.claim(request, 1).await.unwrap().remove(0);
    TaskContext::new(store.clone(), task, "w1".into(), 30_000, Backoff::default())
}

/// The submitted backoff is the one a context's failure follows; `delayMs`
/// wins over it; bad policies are refused naming the field, writing nothing.
pub async fn a_submitted_policy_is_stored_and_followed(store: Arc<Store>) {
    let bad = RetrySpec {
        attempts: Some(2.0),
        ..RetrySpec::default()
    };
    assert_eq!(
        store
            .submit(job(bad, Some(3.0)))
            .await
            .unwrap_err()
            .to_string(),
        "retry.attempts and maxAttempts both set the task's attempts: give one"
    );
    assert!(store.list(ListInput::default()).await.unwrap().is_empty());
    let fixed = RetrySpec {
        attempts: Some(4.0),
        backoff: Some("fixed".into()),
        base_ms: Some(7_000.0),
        max_ms: None,
        backoff_function: false,
    };
    let task = store.submit(job(fixed.clone(), None)).await.unwrap();
    assert_eq!(task.max_attempts, 4);
    let context = claimed_context(&store).await;
    context
        .fail(r#"{"message":"x"}"#.into(), true, "{}", None)
        .await
        .unwrap();
    let row = store.get(Target::Id(task.id)).await.unwrap().unwrap();
    assert_eq!(row.status, Status::Queued);
    assert_eq!(row.run_at_ms - row.updated_at_ms, 7_000);

    store.submit(job(fixed.clone(), None)).await.unwrap();
    let context = claimed_context(&store).await;
    let refused = context
        .fail("{}".into(), true, r#"{"delayMs":-5}"#, None)
        .await;
    assert_eq!(
        refused.unwrap_err().to_string(),
        "delayMs must be >= 0, got -5"
    );
    assert!(!context.settled());
    context
        .fail("{}".into(), true, r#"{"delayMs":123}"#, None)
        .await
        .unwrap();
    let row = store
        .get(Target::Id(context.task_id().into()))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(row.run_at_ms - row.updated_at_ms, 123);

    // What a backoff function returned (JS hands it over): checked, then the delay.
    store.submit(job(fixed, None)).await.unwrap();
    let context = claimed_context(&store).await;
    let refused = context.fail("{}".into(), true, "{}", Some(-1.0)).await;
    assert_eq!(
        refused.unwrap_err().to_string(),
        "retry.backoff returned -1: a delay must be a finite number of milliseconds >= 0"
    );
    assert!(!context.settled());
    context
        .fail("{}".into(), true, "{}", Some(456.0))
        .await
        .unwrap();
    let row = store
        .get(Target::Id(context.task_id().into()))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(row.run_at_ms - row.updated_at_ms, 456);
}
