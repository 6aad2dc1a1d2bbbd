//! A SQLite store on a test clock (docs/api.md, "Testing"): its statements
//! bind the clock's time, so delays, retry backoffs and leases follow
//! `advance_clock`, and a store on the host's clock refuses to move.

use std::sync::Arc;

use cairnq_core::clock::Clock;
use cairnq_core::store::{fail_outcome, ClaimRequest, HeldTask, OpenMode, SubmitInput, Target};
use cairnq_core::{Status, Store, Task};
use tempfile::TempDir;

const START_MS: f64 = 1_767_225_600_000.0; // 2026-01-01T00:00:00Z

fn test_store(dir: &TempDir, file: &str) -> Arc<Store> {
    let path = dir.path().join(file).to_string_lossy().into_owned();
    let clock = Clock::test_at("testClockMs", START_MS).unwrap();
    Store::sqlite_on(&path, None, OpenMode::Migrate, clock)
}

fn claim_request(worker: &str, lease_ms: i64) -> ClaimRequest {
    ClaimRequest {
        queues: vec!["default".into()],
        worker_id: worker.into(),
        lease_ms,
        names: None,
    }
}

async fn submit(store: &Store, delay_ms: Option<f64>) -> Task {
    store
        .submit(SubmitInput {
            name: "t".into(),
            run_at_delay_ms: delay_ms,
            ..Default::default()
        })
        .await
        .unwrap()
}

async fn claimed(store: &Store, worker: &str, lease_ms: i64) -> Vec<Task> {
    store
        .claim(claim_request(worker, lease_ms), 10)
        .await
        .unwrap()
}

#[tokio::test]
async fn rows_take_the_test_clocks_time() {
    let dir = tempfile::tempdir().unwrap();
    let store = test_store(&dir, "q.db");
    let task = submit(&store, None).await;
    assert_eq!(task.created_at_ms, START_MS as i64);
    let row = store.get(Target::Id(task.id)).await.unwrap().unwrap();
    assert_eq!(row.run_at_ms, START_MS as i64);
}

#[tokio::test]
async fn a_delayed_task_is_due_once_the_clock_reaches_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = test_store(&dir, "q.db");
    submit(&store, Some(86_400_000.0)).await;
    assert!(claimed(&store, "w1", 4_000).await.is_empty());
    store.advance_clock(86_399_999.0).unwrap();
    assert!(claimed(&store, "w1", 4_000).await.is_empty(), "1 ms early");
    store.advance_clock(1.0).unwrap();
    assert_eq!(claimed(&store, "w1", 4_000).await.len(), 1);
}

#[tokio::test]
async fn a_retry_backoff_runs_out_on_the_test_clock() {
    let dir = tempfile::tempdir().unwrap();
    let store = test_store(&dir, "q.db");
    let task = store
        .submit(SubmitInput {
            name: "t".into(),
            max_attempts: Some(3.0),
            ..Default::default()
        })
        .await
        .unwrap();
    claimed(&store, "w1", 4_000).await;
    let held = HeldTask {
        task_id: task.id.clone(),
        worker_id: "w1".into(),
    };
    let outcome = fail_outcome("{}".into(), true, Some(30_000.0)).unwrap();
    let failed = store.finish(held, outcome).await.unwrap();
    assert_eq!(
        (failed.status, failed.run_at_ms),
        (Status::Queued, START_MS as i64 + 30_000)
    );
    assert!(claimed(&store, "w1", 4_000).await.is_empty());
    store.advance_clock(30_000.0).unwrap();
    assert_eq!(claimed(&store, "w1", 4_000).await[0].attempt, 2);
}

#[tokio::test]
async fn a_lease_runs_out_on_the_test_clock_and_the_task_is_recovered() {
    let dir = tempfile::tempdir().unwrap();
    let store = test_store(&dir, "q.db");
    submit(&store, None).await;
    assert_eq!(claimed(&store, "w1", 4_000).await.len(), 1);
    store.advance_clock(3_999.0).unwrap();
    assert!(
        claimed(&store, "w2", 4_000).await.is_empty(),
        "the lease holds"
    );
    store.advance_clock(1.0).unwrap();
    let recovered = claimed(&store, "w2", 4_000).await;
    assert_eq!(
        recovered.len(),
        1,
        "the lease ran out: recovered and claimed again"
    );
    assert_eq!(recovered[0].worker_id.as_deref(), Some("w2"));
}

#[tokio::test]
async fn two_test_stores_keep_their_own_time() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (test_store(&dir, "a.db"), test_store(&dir, "b.db"));
    assert_eq!(a.advance_clock(5_000.0).unwrap(), START_MS as i64 + 5_000);
    assert_eq!(a.clock().now_ms(), START_MS as i64 + 5_000);
    assert_eq!(b.clock().now_ms(), START_MS as i64);
}

#[tokio::test]
async fn only_a_test_clock_moves_and_only_forward() {
    let dir = tempfile::tempdir().unwrap();
    let store = test_store(&dir, "q.db");
    let err = store.advance_clock(-1.0).unwrap_err().to_string();
    assert_eq!(err, "ms must be a non-negative integer, got -1");
    assert_eq!(store.clock().now_ms(), START_MS as i64);
    let host = Store::sqlite(dir.path().join("host.db").to_str().unwrap(), None);
    let err = host.advance_clock(1.0).unwrap_err().to_string();
    assert!(err.contains("only a test store's clock moves"), "{err}");
}
