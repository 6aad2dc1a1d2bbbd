//! Checks shared by the dialect test files.

use std::sync::Arc;

use cairnq_core::store::{ClaimRequest, HeldTask, ListInput, PurgeInput, SubmitInput, Target};
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
    let owned = HeldTask {
        task_id: theirs[0].id.clone(),
        worker_id: "w2".into(),
    };
    store.heartbeat(owned, 30_000).await.unwrap();
}

/// docs/protocol.md, "Claim": claims take `priority DESC, run_at_ms, id`. A
/// task not yet due is never claimed; once due, a delayed task competes by the
/// time it became due, so it does not jump ahead of work queued meanwhile,
/// while a higher priority still goes first. Every draw shape is exercised.
pub async fn claims_follow_priority_then_due_time(store: Arc<Store>) {
    let submit = |name: &str, delay_ms: f64, priority: f64| {
        let store = store.clone();
        let input = SubmitInput {
            name: name.into(),
            run_at_delay_ms: Some(delay_ms),
            priority: Some(priority),
            ..SubmitInput::default()
        };
        async move { store.submit(input).await.unwrap() }
    };
    let claim_one = |names: Option<&[&str]>, queues: &[&str]| {
        let store = store.clone();
        let request = ClaimRequest {
            queues: queues.iter().map(|q| q.to_string()).collect(),
            worker_id: "w1".into(),
            lease_ms: 30_000,
            names: names.map(|n| n.iter().map(|n| n.to_string()).collect()),
        };
        async move {
            let rows = store.claim(request, 1).await.unwrap();
            rows.into_iter().map(|t| t.name).collect::<Vec<_>>()
        }
    };
    let default = &["default"][..];
    let lists = &["default", "elsewhere"][..];
    for names in [None, Some(&["late", "meanwhile", "urgent"][..])] {
        for queues in [default, lists] {
            let late = submit("late", 300.0, 0.0).await;
            assert_eq!(
                claim_one(names, queues).await,
                Vec::<String>::new(),
                "not due yet"
            );
            let meanwhile = submit("meanwhile", 0.0, 0.0).await;
            assert!(meanwhile.run_at_ms < late.run_at_ms);
            // Wait until `late` is due by the store's clock.
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
            while cairnq_core::ids::now_ms() <= late.run_at_ms + 5 {
                assert!(
                    std::time::Instant::now() < deadline,
                    "the clock never passed run_at_ms"
                );
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            }
            submit("urgent", 0.0, 1.0).await;
            assert_eq!(claim_one(names, queues).await, ["urgent"]);
            assert_eq!(claim_one(names, queues).await, ["meanwhile"]);
            assert_eq!(claim_one(names, queues).await, ["late"]);
        }
    }
    for name in ["late", "meanwhile"] {
        let one = &[name][..];
        let late = submit(name, 300.0, 0.0).await;
        assert!(
            claim_one(Some(one), default).await.is_empty(),
            "{name} not due yet"
        );
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while cairnq_core::ids::now_ms() <= late.run_at_ms + 5 {
            assert!(
                std::time::Instant::now() < deadline,
                "the clock never passed run_at_ms"
            );
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        assert_eq!(claim_one(Some(one), lists).await, [name]);
    }
}
pub mod debounce;
pub mod flow;
pub mod reserved;
pub mod schedules;
pub mod steps;

/// A delay a stored time cannot hold is refused naming `runAtDelayMs`, and
/// writes nothing; the largest one allowed is stored exactly.
pub async fn stored_delays_are_bounded(store: Arc<Store>) {
    let submit = |delay: f64| SubmitInput {
        name: "job".into(),
        run_at_delay_ms: Some(delay),
        ..SubmitInput::default()
    };
    for (delay, shown) in [
        (f64::INFINITY, "Infinity"),
        (1e300, "1e+300"),
        (1e15 + 1.0, "1000000000000001"),
    ] {
        let err = store.submit(submit(delay)).await.unwrap_err();
        assert!(matches!(err, cairnq_core::Error::Invalid(_)), "{err:?}");
        assert_eq!(
            err.to_string(),
            format!("runAtDelayMs must be a finite number of milliseconds, at most 1e15 (about 31,700 years), got {shown}")
        );
    }
    assert!(store.list(ListInput::default()).await.unwrap().is_empty());
    let far = store.submit(submit(1e15)).await.unwrap();
    assert_eq!(far.run_at_ms - far.created_at_ms, 1_000_000_000_000_000);
    let read = store
        .get(Target::Id(far.id.clone()))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(read.run_at_ms, far.run_at_ms);
}

/// `purge_count` counts what `purge` deletes, filter for filter, up to the limit.
pub async fn purge_count_counts_what_purge_deletes(store: Arc<Store>) {
    for (name, queue) in [("a", "q1"), ("a", "q2"), ("b", "q1")] {
        let input = SubmitInput {
            name: name.into(),
            queue: Some(queue.into()),
            ..SubmitInput::default()
        };
        let task = store.submit(input).await.unwrap();
        let claim = ClaimRequest {
            queues: vec![queue.into()],
            worker_id: "w1".into(),
            lease_ms: 30_000,
            names: None,
        };
        assert_eq!(store.claim(claim, 1).await.unwrap().len(), 1);
        let owned = HeldTask {
            task_id: task.id.clone(),
            worker_id: "w1".into(),
        };
        store
            .finish(
                owned,
                cairnq_core::store::Outcome::Complete { result: None },
            )
            .await
            .unwrap();
    }
    store
        .submit(SubmitInput {
            name: "a".into(),
            ..SubmitInput::default()
        })
        .await
        .unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    let filter = |queue: Option<&str>, name: Option<&str>, limit: Option<f64>| PurgeInput {
        queue: queue.map(str::to_string),
        name: name.map(str::to_string),
        limit,
        ..PurgeInput::default()
    };
    let cases = [
        (filter(None, None, None), 3),
        (filter(None, None, Some(2.0)), 2),
        (filter(Some("q1"), None, None), 2),
        (filter(Some("q1"), Some("a"), None), 1),
        (
            PurgeInput {
                status: Some("failed".into()),
                ..PurgeInput::default()
            },
            0,
        ),
        (
            PurgeInput {
                older_than_ms: Some(3_600_000.0),
                ..PurgeInput::default()
            },
            0,
        ),
    ];
    for (input, expected) in &cases {
        assert_eq!(
            store.purge_count(input.clone()).await.unwrap(),
            *expected,
            "{input:?}"
        );
    }
    assert!(store
        .purge_count(PurgeInput {
            limit: Some(0.0),
            ..PurgeInput::default()
        })
        .await
        .is_err());
    let purged = store.purge(filter(Some("q1"), None, None)).await.unwrap();
    assert_eq!(purged.len(), 2);
    assert_eq!(
        store.purge_count(filter(None, None, None)).await.unwrap(),
        1
    );
}

/// `list` with `bodies: Some(false)` reads every column but the bodies.
pub async fn summaries_leave_the_bodies_unread(store: Arc<Store>) {
    let task = store
        .submit(SubmitInput {
            name: "big".into(),
            payload: Some(format!(r#"{{"blob":"{}"}}"#, "x".repeat(100_000))),
            metadata: Some(r#"{"m":1}"#.into()),
            ..SubmitInput::default()
        })
        .await
        .unwrap();
    let whole = store.list(ListInput::default()).await.unwrap();
    let summaries = store
        .list(ListInput {
            bodies: Some(false),
            name: Some("big".into()),
            ..ListInput::default()
        })
        .await
        .unwrap();
    assert_eq!(whole.len(), 1);
    assert_eq!(summaries.len(), 1);
    let summary = &summaries[0];
    assert_eq!(summary.payload, "{}");
    assert_eq!(summary.metadata, "{}");
    assert_eq!(
        (summary.result.as_deref(), summary.error.as_deref()),
        (None, None)
    );
    let expected = cairnq_core::Task {
        payload: "{}".into(),
        metadata: "{}".into(),
        ..whole[0].clone()
    };
    assert_eq!(summary, &expected);
    assert_eq!(whole[0].id, task.id);
    assert!(whole[0].payload.len() > 100_000);
}

/// The protocol's migration ledger of `dialect` ("sqlite" or "postgres"), in
/// order: `tests/fixtures/migration-ledger.json`, the one list every test pins.
pub fn ledger_names(dialect: &str) -> Vec<String> {
    let fixture: serde_json::Value =
        serde_json::from_str(include_str!("../fixtures/migration-ledger.json"))
            .expect("migration-ledger.json is JSON");
    fixture[dialect]
        .as_array()
        .unwrap_or_else(|| panic!("migration-ledger.json has no {dialect} list"))
        .iter()
        .map(|name| name.as_str().expect("a ledger name").to_string())
        .collect()
}
