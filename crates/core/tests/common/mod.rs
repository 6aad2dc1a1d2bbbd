//! Checks shared by the dialect test files.

use std::sync::Arc;

use cairnq_core::store::{ClaimRequest, Owned, SubmitInput, Target};
use cairnq_core::{Status, Store};

/// `complete_batch`: owned tasks finish (cancel wins and keeps the old result),
/// a task another worker holds is not touched and is absent from the answer.
pub async fn complete_batch_follows_complete(store: Arc<Store>) {
    for name in ["a", "b", "c", "d"] {
        let input = SubmitInput {
            name: name.into(),
            ..SubmitInput::default()
        };
        store.submit(input).await.unwrap();
    }
    let claim = |worker: &str| ClaimRequest {
        queues: vec!["default".into()],
        worker_id: worker.into(),
        lease_ms: 30_000,
        names: None,
    };
    let mine = store.claim(claim("w1"), 3).await.unwrap();
    let theirs = store.claim(claim("w2"), 1).await.unwrap();
    assert_eq!((mine.len(), theirs.len()), (3, 1));
    store.cancel(Target::Id(mine[1].id.clone())).await.unwrap();
    let items = vec![
        (mine[0].id.clone(), Some(r#"{"n":1}"#.to_string())),
        (mine[1].id.clone(), Some(r#"{"n":2}"#.to_string())),
        (mine[2].id.clone(), None),
        (theirs[0].id.clone(), Some("3".to_string())),
    ];
    let mut done = store.complete_batch("w1".into(), items).await.unwrap();
    done.sort();
    let mut expected: Vec<String> = mine.iter().map(|t| t.id.clone()).collect();
    expected.sort();
    assert_eq!(done, expected);

    let read = |id: &str| {
        let store = store.clone();
        let id = id.to_string();
        async move { store.get(Target::Id(id)).await.unwrap().unwrap() }
    };
    let first = read(&mine[0].id).await;
    assert_eq!(first.status, Status::Succeeded);
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(first.result.as_deref().unwrap()).unwrap()["n"],
        1
    );
    assert_eq!(first.progress, Some(1.0));
    assert_eq!(first.lease_until_ms, None);
    let canceled = read(&mine[1].id).await;
    assert_eq!((canceled.status, canceled.result), (Status::Canceled, None));
    let empty = read(&mine[2].id).await;
    assert_eq!((empty.status, empty.result), (Status::Succeeded, None));
    let foreign = read(&theirs[0].id).await;
    assert_eq!(
        (foreign.status, foreign.worker_id.as_deref()),
        (Status::Running, Some("w2"))
    );
    // The foreign worker still owns its task.
    let owned = Owned {
        task_id: theirs[0].id.clone(),
        worker_id: "w2".into(),
    };
    store.heartbeat(owned, 30_000).await.unwrap();
}
