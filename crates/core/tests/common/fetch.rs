//! Manual fetch shared by the dialect test files (docs/api.md, "Manual
//! fetch"): a script's fetch, extend and settle, and each refusal of the
//! ownership check told apart, with nothing written.

use std::sync::Arc;
use std::time::Duration;

use cairnq_core::fetch::{fetch, settle, FetchInput, Settle};
use cairnq_core::store::{HeldTask, Outcome, SubmitInput, Target};
use cairnq_core::{Error, Status, Store, Task};

async fn submit(store: &Store, name: &str) -> Task {
    let input = SubmitInput {
        name: name.into(),
        ..SubmitInput::default()
    };
    store.submit(input).await.unwrap()
}

fn input(worker_id: &str, lease_ms: i64, count: i64) -> FetchInput {
    FetchInput {
        queue: "default".into(),
        names: None,
        count,
        lease_ms,
        worker_id: worker_id.into(),
    }
}

fn held(task: &Task, worker_id: &str) -> HeldTask {
    HeldTask {
        task_id: task.id.clone(),
        worker_id: worker_id.into(),
    }
}

fn complete(result: &str) -> Settle {
    Settle::Finish(Outcome::Complete {
        result: Some(result.into()),
    })
}

async fn row(store: &Store, task: &Task) -> Task {
    store
        .get(Target::Id(task.id.clone()))
        .await
        .unwrap()
        .unwrap()
}

/// Fetch takes at most `count` due tasks under the caller's id; an extension
/// moves the lease; a complete finishes the task.
pub async fn a_fetched_task_is_extended_and_completed(store: Arc<Store>) {
    for name in ["a", "b", "c"] {
        submit(&store, name).await;
    }
    let fetched = fetch(&store, input("script_a", 30_000, 2)).await.unwrap();
    assert_eq!(fetched.len(), 2);
    for task in &fetched {
        assert_eq!(
            (task.status, task.worker_id.as_deref()),
            (Status::Running, Some("script_a"))
        );
    }
    let first = &fetched[0];
    let extended = settle(
        &store,
        held(first, "script_a"),
        Settle::ExtendLease(600_000),
    )
    .await
    .unwrap();
    assert!(extended.lease_until_ms.unwrap() >= first.lease_until_ms.unwrap() + 500_000);
    let done = settle(&store, held(first, "script_a"), complete("42"))
        .await
        .unwrap();
    assert_eq!(
        (done.status, done.result.as_deref()),
        (Status::Succeeded, Some("42"))
    );
}

/// Another worker's id on a live lease is `NotOwner`, naming the holder,
/// and the task keeps running untouched; a second complete is `NotRunning`.
pub async fn a_wrong_worker_is_not_owner_and_a_second_complete_not_running(store: Arc<Store>) {
    submit(&store, "a").await;
    let task = fetch(&store, input("script_a", 30_000, 1))
        .await
        .unwrap()
        .remove(0);
    let refused = settle(&store, held(&task, "script_b"), complete("1"))
        .await
        .unwrap_err();
    match &refused {
        Error::NotOwner {
            owner, worker_id, ..
        } => {
            assert_eq!(
                (owner.as_str(), worker_id.as_str()),
                ("script_a", "script_b")
            );
        }
        other => panic!("expected NotOwner, got {other:?}"),
    }
    let extend = settle(&store, held(&task, "script_b"), Settle::ExtendLease(1_000)).await;
    assert!(matches!(extend, Err(Error::NotOwner { .. })), "{extend:?}");
    let untouched = row(&store, &task).await;
    assert_eq!(
        (untouched.status, untouched.lease_until_ms),
        (Status::Running, task.lease_until_ms)
    );

    settle(&store, held(&task, "script_a"), complete("1"))
        .await
        .unwrap();
    let again = settle(&store, held(&task, "script_a"), complete("2"))
        .await
        .unwrap_err();
    assert_eq!(
        again.to_string(),
        format!("task {} is succeeded, not running", task.id)
    );
    let missing = HeldTask {
        task_id: "task_nobody".into(),
        worker_id: "script_a".into(),
    };
    let gone = settle(&store, missing, complete("1")).await.unwrap_err();
    assert_eq!(gone.to_string(), "no task task_nobody");
}

/// The caller's own lease run out is `LeaseExpired`; nothing is written,
/// and the task is there for any worker's recovery.
pub async fn an_expired_lease_says_so_and_writes_nothing(store: Arc<Store>) {
    submit(&store, "a").await;
    let task = fetch(&store, input("script_a", 1, 1))
        .await
        .unwrap()
        .remove(0);
    tokio::time::sleep(Duration::from_millis(20)).await;
    let refused = settle(&store, held(&task, "script_a"), complete("1"))
        .await
        .unwrap_err();
    assert!(matches!(refused, Error::LeaseExpired { .. }), "{refused:?}");
    assert_eq!(
        refused.to_string(),
        format!(
            "the lease of worker script_a on task {} has expired",
            task.id
        )
    );
    let failed = Settle::Finish(Outcome::Fail {
        error: "{}".into(),
        retryable: true,
        delay_ms: 0,
        dead_letter: Default::default(),
    });
    let refused = settle(&store, held(&task, "script_a"), failed)
        .await
        .unwrap_err();
    assert!(matches!(refused, Error::LeaseExpired { .. }), "{refused:?}");
    let untouched = row(&store, &task).await;
    assert_eq!(
        (untouched.status, untouched.result),
        (Status::Running, None)
    );
    let recovered = fetch(&store, input("script_b", 30_000, 1)).await.unwrap();
    assert_eq!(recovered.len(), 1, "the expired task is claimable again");
    assert_eq!(
        (recovered[0].id.as_str(), recovered[0].attempt),
        (task.id.as_str(), 2)
    );
}
