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

/// `OpenMode::Existing` (the command line and dashboard): a missing path, a
/// foreign SQLite file and a file that is not a database are refused with
/// typed errors and left exactly as they were; a cairnq database opens
/// without a migration being applied.
mod existing {
    use cairnq_core::error::{NOT_CAIRNQ_CODE, NO_DATABASE_CODE};
    use cairnq_core::store::{ListInput, OpenMode, SubmitInput};
    use cairnq_core::{Error, Store};

    fn code_of(err: Error) -> String {
        match err {
            Error::NoCairnqDatabase { code, .. } => code,
            other => panic!("expected NoCairnqDatabase, got {other:?}"),
        }
    }

    fn listing(dir: &std::path::Path) -> Vec<(String, u64)> {
        let mut files: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (
                    e.file_name().to_string_lossy().into_owned(),
                    e.metadata().unwrap().len(),
                )
            })
            .collect();
        files.sort();
        files
    }

    #[tokio::test]
    async fn a_missing_file_is_not_created() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nested").join("q.db");
        let store = Store::sqlite_with(path.to_str().unwrap(), None, OpenMode::Existing);
        let err = store.connect().await.unwrap_err();
        assert!(err.to_string().contains("does not exist"), "{err}");
        assert_eq!(code_of(err), NO_DATABASE_CODE);
        // A read fails the same way, and still creates nothing.
        let err = store.stats().await.unwrap_err();
        assert_eq!(code_of(err), NO_DATABASE_CODE);
        assert!(listing(dir.path()).is_empty());
    }

    #[tokio::test]
    async fn a_foreign_database_is_left_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notes.db");
        {
            let conn = rusqlite::Connection::open(&path).unwrap();
            conn.execute_batch("create table notes (body text); insert into notes values ('hi')")
                .unwrap();
        }
        let before = (listing(dir.path()), std::fs::read(&path).unwrap());
        let store = Store::sqlite_with(path.to_str().unwrap(), None, OpenMode::Existing);
        let err = store.connect().await.unwrap_err();
        assert!(
            err.to_string().contains("is not a cairnq database"),
            "{err}"
        );
        assert_eq!(code_of(err), NOT_CAIRNQ_CODE);
        store.close().await.unwrap();
        assert_eq!((listing(dir.path()), std::fs::read(&path).unwrap()), before);
    }

    #[tokio::test]
    async fn a_file_that_is_not_a_database_is_left_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("readme.txt");
        std::fs::write(
            &path,
            "this is not a database, it is a long enough text file ".repeat(20),
        )
        .unwrap();
        let before = std::fs::read(&path).unwrap();
        let store = Store::sqlite_with(path.to_str().unwrap(), None, OpenMode::Existing);
        let err = store.connect().await.unwrap_err();
        assert_eq!(code_of(err), NOT_CAIRNQ_CODE);
        assert_eq!(std::fs::read(&path).unwrap(), before);
        assert_eq!(listing(dir.path()).len(), 1);
        // A directory is not a database either.
        let store = Store::sqlite_with(dir.path().to_str().unwrap(), None, OpenMode::Existing);
        assert_eq!(code_of(store.connect().await.unwrap_err()), NOT_CAIRNQ_CODE);
    }

    #[tokio::test]
    async fn a_cairnq_database_opens_without_migrating() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("q.db");
        let path = path.to_str().unwrap();
        let made = Store::sqlite(path, None);
        let task = made
            .submit(SubmitInput {
                name: "greet".into(),
                ..SubmitInput::default()
            })
            .await
            .unwrap();
        made.close().await.unwrap();
        // Forget the last migration: an Existing open must not apply it again.
        let last = {
            let conn = rusqlite::Connection::open(path).unwrap();
            let last: String = conn
                .query_row(
                    "select name from cairnq_migrations order by name desc limit 1",
                    [],
                    |r| r.get(0),
                )
                .unwrap();
            conn.execute("delete from cairnq_migrations where name = ?1", [&last])
                .unwrap();
            last
        };
        let store = Store::sqlite_with(path, None, OpenMode::Existing);
        let listed = store.list(ListInput::default()).await.unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].id, task.id);
        store.close().await.unwrap();
        let conn = rusqlite::Connection::open(path).unwrap();
        let still_missing: bool = conn
            .query_row(
                "select not exists (select 1 from cairnq_migrations where name = ?1)",
                [&last],
                |r| r.get(0),
            )
            .unwrap();
        assert!(still_missing, "an Existing open applied {last}");
    }

    #[tokio::test]
    async fn another_protocol_version_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("q.db");
        let path = path.to_str().unwrap();
        let made = Store::sqlite(path, None);
        made.connect().await.unwrap();
        made.close().await.unwrap();
        rusqlite::Connection::open(path)
            .unwrap()
            .execute(
                "update cairnq_meta set value = '2' where key = 'protocol_version'",
                [],
            )
            .unwrap();
        let store = Store::sqlite_with(path, None, OpenMode::Existing);
        let err = store.connect().await.unwrap_err();
        assert!(
            matches!(err, Error::ProtocolVersionMismatch { ref found } if found == "2"),
            "{err:?}"
        );
    }
}
