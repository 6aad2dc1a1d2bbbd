//! Time limits and aborts (docs/api.md, "Time limits and aborts"), shared by
//! the dialect test files: a submit's `timeoutMs` in the metadata, and the
//! cancel watch's read.

use std::sync::Arc;

use cairnq_core::store::{ClaimRequest, ListInput, SubmitInput, Target};
use cairnq_core::Store;
use serde_json::{json, Value};

fn job(timeout_ms: Option<f64>, metadata: Option<&str>) -> SubmitInput {
    SubmitInput {
        name: "job".into(),
        timeout_ms,
        metadata: metadata.map(Into::into),
        ..SubmitInput::default()
    }
}

/// The limit joins the caller's metadata, stored and read back as any key;
/// a bad one is refused naming `timeoutMs`, and nothing is written.
pub async fn a_submitted_timeout_is_kept_in_the_metadata(store: Arc<Store>) {
    for (input, message) in [
        (job(Some(0.0), None), "timeoutMs must be > 0, got 0"),
        (job(Some(f64::NAN), None), "timeoutMs must be > 0, got NaN"),
        (
            job(Some(5.0), Some("[1]")),
            "timeoutMs needs metadata to be an object, got [1]",
        ),
    ] {
        assert_eq!(store.submit(input).await.unwrap_err().to_string(), message);
    }
    assert!(store.list(ListInput::default()).await.unwrap().is_empty());
    let task = store
        .submit(job(Some(250.7), Some(r#"{"tenant":"a"}"#)))
        .await
        .unwrap();
    let stored = store.get(Target::Id(task.id)).await.unwrap().unwrap();
    let metadata: Value = serde_json::from_str(&stored.metadata).unwrap();
    assert_eq!(metadata, json!({"tenant": "a", "cairnq.timeoutMs": 250}));
}

/// `cancel_requested`: the listed tasks with a cancel requested (running) or
/// ended canceled (queued); not the others, nor ids not listed.
pub async fn the_cancel_watch_reads_requested_cancels(store: Arc<Store>) {
    let mut ids = Vec::new();
    for _ in 0..4 {
        ids.push(store.submit(job(None, None)).await.unwrap().id);
    }
    let request = ClaimRequest {
        queues: vec!["default".into()],
        worker_id: "w1".into(),
        lease_ms: 30_000,
        names: None,
    };
    let claimed = store.claim(request, 2).await.unwrap();
    let running: Vec<String> = claimed.iter().map(|t| t.id.clone()).collect();
    let queued: Vec<String> = ids
        .iter()
        .filter(|id| !running.contains(id))
        .cloned()
        .collect();
    store.cancel(Target::Id(running[0].clone())).await.unwrap();
    store.cancel(Target::Id(queued[0].clone())).await.unwrap();
    let listed = vec![running[0].clone(), running[1].clone(), queued[0].clone()];
    let mut canceled = store.cancel_requested(listed).await.unwrap();
    canceled.sort();
    let mut expected = vec![running[0].clone(), queued[0].clone()];
    expected.sort();
    assert_eq!(canceled, expected);
    assert!(store.cancel_requested(Vec::new()).await.unwrap().is_empty());
}
