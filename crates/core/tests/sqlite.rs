//! SQLite-specific store checks beyond the conformance scenarios.

mod common;

use cairnq_core::store::{SubmitInput, Target, Write};
use cairnq_core::Store;

#[tokio::test]
async fn complete_batch_follows_complete() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::sqlite(dir.path().join("q.db").to_str().unwrap(), None);
    common::complete_batch_follows_complete(store.clone()).await;
    store.close().await.unwrap();
}

/// The row `submit` answers with is built without reading it back: it must be
/// the row the database holds, column for column.
#[tokio::test]
async fn submit_answers_the_stored_row() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::sqlite(dir.path().join("q.db").to_str().unwrap(), None);
    let input = SubmitInput {
        name: "resize".into(),
        payload: Some(r#"{"w":64}"#.into()),
        queue: Some("images".into()),
        max_attempts: Some(5.0),
        priority: Some(-2.0),
        metadata: Some(r#"{"by":"test"}"#.into()),
        parent_id: Some("p".into()),
        root_id: Some("r".into()),
        correlation_id: Some("c".into()),
        run_at_delay_ms: Some(1500.0),
        ..SubmitInput::default()
    };
    let answered = store.submit(input).await.unwrap();
    let stored = store
        .get(Target::Id(answered.id.clone()))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(answered, stored);
    store.close().await.unwrap();
}

/// Under a steady stream of commits the checkpointer must still let the log
/// start over now and then: 4,000 commits of about six 4 KiB frames each would
/// leave a log near 100 MB if it never did.
#[tokio::test]
async fn sustained_writes_keep_the_wal_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("q.db");
    let store = Store::sqlite(path.to_str().unwrap(), None);
    let mut ids = Vec::new();
    for _ in 0..2_000 {
        let input = SubmitInput {
            name: "job".into(),
            ..SubmitInput::default()
        };
        let task = store.submit(input).await.unwrap();
        ids.push(task.id);
    }
    for id in ids {
        store.cancel(Target::Id(id)).await.unwrap();
    }
    let wal = std::fs::metadata(dir.path().join("q.db-wal"))
        .unwrap()
        .len();
    assert!(wal < 40_000_000, "the WAL grew to {wal} bytes");
    store.close().await.unwrap();
}

/// A commit whose frames outgrow one gathered write of the WAL (256 tasks of
/// 8 KiB payloads, about 2 MB of frames) reaches the file whole: every row
/// reads back, through this package and through a plain SQLite connection
/// that checks the file's integrity.
#[tokio::test]
async fn a_large_commit_reaches_the_wal_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("q.db");
    let store = Store::sqlite(path.to_str().unwrap(), None);
    let payload = format!(r#"{{"blob":"{}"}}"#, "x".repeat(8 * 1024));
    let writes = (0..256)
        .map(|_| {
            Write::Submit(SubmitInput {
                name: "big".into(),
                payload: Some(payload.clone()),
                ..SubmitInput::default()
            })
        })
        .collect();
    let answers = store.write_group(writes).await;
    assert!(answers.iter().all(Result::is_ok));
    assert_eq!(store.stats().await.unwrap()["default"][0], 256);
    let plain = rusqlite::Connection::open(&path).unwrap();
    let check: String = plain
        .query_row("pragma integrity_check", [], |row| row.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    let stored: i64 = plain
        .query_row(
            "select count(*) from cairnq_tasks where payload = ?1",
            [&payload],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(stored, 256);
    store.close().await.unwrap();
}
