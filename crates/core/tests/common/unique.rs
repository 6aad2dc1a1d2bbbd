//! Uniqueness windows (docs/api.md, "Uniqueness window"), shared by the
//! dialect test files: a finished task holds its key for `unique.forMs`,
//! against `reject` and `reuse` alike; after the window the key is free; bad
//! input writes nothing.

use std::sync::Arc;
use std::time::Duration;

use cairnq_core::error::Error;
use cairnq_core::store::{ClaimRequest, HeldTask, ListInput, Outcome, SubmitInput};
use cairnq_core::{Status, Store};

fn keyed(conflict: &str, for_ms: Option<f64>) -> SubmitInput {
    SubmitInput {
        name: "job".into(),
        key: Some("k".into()),
        conflict: Some(conflict.into()),
        unique_for_ms: for_ms,
        ..SubmitInput::default()
    }
}

/// Claims the one due task and completes it.
async fn run_to_success(store: &Arc<Store>) -> String {
    let request = ClaimRequest {
        queues: vec!["default".into()],
        worker_id: "w1".into(),
        lease_ms: 30_000,
        names: None,
    };
    let task = store.claim(request, 1).await.unwrap().remove(0);
    let held = HeldTask {
        task_id: task.id.clone(),
        worker_id: "w1".into(),
    };
    let row = store
        .finish(held, Outcome::Complete { result: None })
        .await
        .unwrap();
    assert_eq!(row.status, Status::Succeeded);
    task.id
}

pub async fn a_finished_task_holds_its_key_for_its_window(store: Arc<Store>) {
    let first = store
        .submit(keyed("reject", Some(3_600_000.0)))
        .await
        .unwrap();
    let metadata: serde_json::Value = serde_json::from_str(&first.metadata).unwrap();
    assert_eq!(
        metadata,
        serde_json::json!({"cairnq.unique": {"forMs": 3_600_000}})
    );
    assert_eq!(run_to_success(&store).await, first.id);
    let refused = store.submit(keyed("reject", None)).await.unwrap_err();
    assert!(matches!(refused, Error::AlreadyExists { .. }), "{refused}");
    let reused = store.submit(keyed("reuse", None)).await.unwrap();
    assert_eq!(reused.id, first.id, "reuse hands the finished holder back");
    let reused = store.submit(keyed("reuse-succeeded", None)).await.unwrap();
    assert_eq!(reused.id, first.id);
    let replaced = store.submit(keyed("replace", None)).await.unwrap();
    assert_ne!(replaced.id, first.id, "replace starts a new task");

    // Without a window, reuse of a finished task starts a new one (as before).
    let plain = SubmitInput {
        key: Some("plain".into()),
        ..keyed("reuse", None)
    };
    let plain_first = store.submit(plain.clone()).await.unwrap();
    store
        .cancel(cairnq_core::store::Target::Id(plain_first.id.clone()))
        .await
        .unwrap();
    assert_ne!(store.submit(plain).await.unwrap().id, plain_first.id);
}

pub async fn an_ended_window_frees_the_key(store: Arc<Store>) {
    let first = store.submit(keyed("reject", Some(1.0))).await.unwrap();
    run_to_success(&store).await;
    // The window is 1 ms after the finish: this sleep outlasts it on any machine.
    tokio::time::sleep(Duration::from_millis(50)).await;
    let second = store.submit(keyed("reject", None)).await.unwrap();
    assert_ne!(second.id, first.id, "the key is free once the window ended");
    assert_eq!(second.status, Status::Queued);
}

pub async fn bad_windows_write_nothing(store: Arc<Store>) {
    let refused = |input: SubmitInput| {
        let store = store.clone();
        async move { store.submit(input).await.unwrap_err().to_string() }
    };
    assert_eq!(
        refused(SubmitInput {
            key: None,
            ..keyed("reject", Some(5.0))
        })
        .await,
        "unique.forMs needs a key: the window holds the key"
    );
    assert_eq!(
        refused(keyed("reject", Some(-5.0))).await,
        "unique.forMs must be > 0, got -5"
    );
    assert_eq!(
        refused(keyed("replace", Some(5.0))).await,
        "unique.forMs needs conflict \"reject\", \"reuse\" or \"reuse-succeeded\", got \"replace\""
    );
    assert!(store.list(ListInput::default()).await.unwrap().is_empty());
}
