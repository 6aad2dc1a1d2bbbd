//! Retention by count shared by the dialect test files (docs/api.md,
//! "Retention", `keepLast`): `purge` past the newest rows, its count, and
//! a sweeper's rules.

use std::sync::Arc;
use std::time::Duration;

use cairnq_core::retention::{RetentionOptions, RetentionSweeper};
use cairnq_core::store::{ClaimRequest, HeldTask, Outcome, PurgeInput, SubmitInput, Target};
use cairnq_core::Store;

/// `count` tasks of `queue` run and settled one after another (succeeded, or
/// failed), each completed at a later millisecond than the one before.
async fn finished(store: &Store, queue: &str, count: usize, fail: bool) -> Vec<String> {
    let mut ids = Vec::new();
    for _ in 0..count {
        let input = SubmitInput {
            name: "job".into(),
            queue: Some(queue.into()),
            max_attempts: Some(1.0),
            ..SubmitInput::default()
        };
        let id = store.submit(input).await.unwrap().id;
        let request = ClaimRequest {
            queues: vec![queue.into()],
            worker_id: "w".into(),
            lease_ms: 60_000,
            names: None,
        };
        assert_eq!(store.claim(request, 1).await.unwrap().len(), 1);
        let held = HeldTask {
            task_id: id.clone(),
            worker_id: "w".into(),
        };
        let outcome = if fail {
            Outcome::Fail {
                error: "{}".into(),
                retryable: false,
                delay_ms: 0,
                dead_letter: Default::default(),
            }
        } else {
            Outcome::Complete { result: None }
        };
        store.finish(held, outcome).await.unwrap();
        ids.push(id);
        tokio::time::sleep(Duration::from_millis(3)).await;
    }
    ids
}

async fn present(store: &Store, ids: &[String]) -> Vec<String> {
    let mut kept = Vec::new();
    for id in ids {
        if store.get(Target::Id(id.clone())).await.unwrap().is_some() {
            kept.push(id.clone());
        }
    }
    kept
}

/// A keepLast purge deletes what its filters match past the newest N, in
/// batches of `limit`; its count counts the same; live rows and other
/// filters' rows stay.
pub async fn keep_last_purges_all_but_the_newest(store: Arc<Store>) {
    let done = finished(&store, "q", 5, false).await;
    let failed = finished(&store, "q", 1, true).await;
    let other = finished(&store, "other", 1, false).await;
    let input = |limit: f64| PurgeInput {
        keep_last: Some(2.0),
        queue: Some("q".into()),
        status: Some("succeeded".into()),
        limit: Some(limit),
        ..PurgeInput::default()
    };
    assert_eq!(store.purge_count(input(10.0)).await.unwrap(), 3);
    assert_eq!(store.purge_count(input(2.0)).await.unwrap(), 2);
    assert_eq!(store.purge(input(2.0)).await.unwrap().len(), 2);
    assert_eq!(store.purge(input(2.0)).await.unwrap().len(), 1);
    assert!(store.purge(input(2.0)).await.unwrap().is_empty());
    assert_eq!(present(&store, &done).await, done[3..].to_vec());
    assert_eq!(present(&store, &failed).await, failed);
    assert_eq!(present(&store, &other).await, other);

    let zero = PurgeInput {
        keep_last: Some(0.0),
        ..PurgeInput::default()
    };
    assert_eq!(store.purge(zero).await.unwrap().len(), 4);
}

/// Bad keepLast input is refused before anything is deleted.
pub async fn bad_keep_last_is_refused(store: Arc<Store>) {
    let done = finished(&store, "q", 2, false).await;
    let refusals = [
        (
            Some(-1.0),
            None,
            "keepLast must be a non-negative integer, got -1",
        ),
        (
            Some(1.5),
            None,
            "keepLast must be a non-negative integer, got 1.5",
        ),
        (
            Some(1.0),
            Some(0.0),
            "keepLast and olderThanMs are two rules: give one of them",
        ),
    ];
    for (keep_last, older_than_ms, message) in refusals {
        let input = PurgeInput {
            keep_last,
            older_than_ms,
            ..PurgeInput::default()
        };
        let err = store.purge(input.clone()).await.unwrap_err().to_string();
        assert!(err.contains(message), "{err}");
        assert!(store.purge_count(input).await.is_err());
    }
    let sweeper = |options: &str| {
        RetentionOptions::read(options)
            .and_then(|opts| RetentionSweeper::new(store.clone(), opts, None))
            .err()
            .map(|err| err.to_string())
    };
    for (options, message) in [
        (
            r#"{"keepLast":{}}"#,
            "retention.keepLast must name at least one rule",
        ),
        (
            r#"{"keepLast":{"succeeded":-2}}"#,
            "keepLast must be a non-negative integer, got -2",
        ),
        (
            r#"{"keepLast":[{"keepLast":1,"olderThanMs":5}]}"#,
            "give one of them",
        ),
        (
            r#"{"keepLast":{"running":1}}"#,
            "status must be terminal, got running",
        ),
        (
            r#"{"keepLast":"ten"}"#,
            "retention.keepLast must be a number",
        ),
    ] {
        let err = sweeper(options).unwrap_or_default();
        assert!(err.contains(message), "{options}: {err}");
    }
    assert_eq!(present(&store, &done).await, done);
}

/// A sweeper's keepLast rules (a per-status map, a rule per queue) beside an
/// age rule: each keeps its newest, in batches of the sweeper's limit.
pub async fn a_sweeper_keeps_the_last_of_each_rule(store: Arc<Store>) {
    let done = finished(&store, "q", 4, false).await;
    let failed = finished(&store, "q", 3, true).await;
    let mail = finished(&store, "mail", 3, false).await;
    let options = r#"{
        "olderThanMs": [{"status": "canceled", "olderThanMs": 0}],
        "keepLast": {"failed": 1},
        "limit": 1
    }"#;
    let opts = RetentionOptions::read(options).unwrap();
    let sweeper = RetentionSweeper::new(store.clone(), opts, None).unwrap();
    assert_eq!(sweeper.sweep().await.unwrap(), 2);
    assert_eq!(present(&store, &failed).await, failed[2..].to_vec());
    assert_eq!(present(&store, &done).await, done);

    let options = r#"{"keepLast": [{"queue": "mail", "keepLast": 2}, {"status": "succeeded", "keepLast": 3}]}"#;
    let opts = RetentionOptions::read(options).unwrap();
    let sweeper = RetentionSweeper::new(store.clone(), opts, None).unwrap();
    // mail keeps its newest 2 (1 goes); then of the 6 succeeded left, the
    // newest 3 stay: mail's 2 and q's last.
    assert_eq!(sweeper.sweep().await.unwrap(), 4);
    assert_eq!(present(&store, &mail).await, mail[1..].to_vec());
    assert_eq!(present(&store, &done).await, done[3..].to_vec());
    assert_eq!(present(&store, &failed).await, failed[2..].to_vec());

    // The number form: one rule over every finished task.
    let number = RetentionOptions::read(r#"{"keepLast": 1}"#).unwrap();
    let sweeper = RetentionSweeper::new(store.clone(), number, None).unwrap();
    assert_eq!(sweeper.sweep().await.unwrap(), 3);
    assert_eq!(present(&store, &mail).await, mail[2..].to_vec());
    assert_eq!(present(&store, &done).await, Vec::<String>::new());
}
