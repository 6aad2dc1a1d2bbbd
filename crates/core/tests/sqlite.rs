//! SQLite-specific store checks beyond the conformance scenarios.

#[macro_use]
mod common;
#[path = "caller/sqlite_submit_in.rs"]
mod submit_in;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use cairnq_core::protocol::{specialize, SQLITE as SQL, SQLITE_MIGRATIONS};
use cairnq_core::store::{ClaimRequest, SubmitInput, Target, Write};
use cairnq_core::{Error, Store};
use rusqlite::Connection;

/// A store on the file `q.db` in `dir`.
fn store_in(dir: &tempfile::TempDir) -> Arc<Store> {
    Store::sqlite(dir.path().join("q.db").to_str().unwrap(), None)
}

shared_suite! {
    test: #[tokio::test],
    threaded: #[tokio::test(flavor = "multi_thread", worker_threads = 2)],
    db: tempfile::tempdir().unwrap(),
    store: crate::store_in,
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
/// start over now and then: 6,000 commits of about six 4 KiB frames each would
/// leave a log near 150 MB if it never did. How far it grows between restarts
/// depends on how fast the checkpointer copies next to the writer (other tests
/// run beside this one), hence the wide margin.
#[tokio::test]
async fn sustained_writes_keep_the_wal_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("q.db");
    let store = Store::sqlite(path.to_str().unwrap(), None);
    let mut ids = Vec::new();
    for _ in 0..3_000 {
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
    assert!(wal < 60_000_000, "the WAL grew to {wal} bytes");
    store.close().await.unwrap();
}

/// `n` submits of task `name` with `payload`, for one group.
fn submits_of(name: &str, payload: &str, n: usize) -> Vec<cairnq_core::Result<Write>> {
    (0..n)
        .map(|_| {
            Ok(Write::Submit(SubmitInput {
                name: name.into(),
                payload: Some(payload.to_string()),
                ..SubmitInput::default()
            }))
        })
        .collect()
}

/// Frames the wal-index publishes: `mxFrame` of the `-shm` file's header.
fn published_frames(shm: &Path) -> u32 {
    let bytes = std::fs::read(shm).unwrap();
    u32::from_ne_bytes(bytes[16..20].try_into().unwrap())
}

/// Every commit is whole in the `-wal` file once SQLite publishes it,
/// whatever its size: groups of 1 to 40 one-page tasks, each commit checked
/// against the frame count the wal-index then shows. A commit frame whose
/// header filled a gathered chunk once left its page unwritten until the
/// next write (a 32-frame commit): a reader or checkpoint in between read
/// stale bytes, and a crash lost the commit.
#[tokio::test]
async fn every_published_commit_is_whole_in_the_wal() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("q.db");
    let (wal, shm) = (dir.path().join("q.db-wal"), dir.path().join("q.db-shm"));
    let store = Store::sqlite(path.to_str().unwrap(), None);
    store.connect().await.unwrap();
    let payload = format!(r#"{{"blob":"{}"}}"#, "x".repeat(3000));
    let mut commit_sizes = std::collections::BTreeSet::new();
    for n in 1..=40 {
        let writes = submits_of("big", &payload, n);
        let before = published_frames(&shm);
        assert!(store.write_group(writes).await.iter().all(Result::is_ok));
        let frames = published_frames(&shm);
        if frames < before {
            continue; // the log started over: this commit's size is unknown
        }
        commit_sizes.insert(frames - before);
        let len = std::fs::metadata(&wal).unwrap().len();
        assert!(
            len >= 32 + u64::from(frames) * (24 + 4096),
            "after a commit of {} frames the WAL holds {len} bytes for {frames} published frames",
            frames - before
        );
    }
    assert!(
        commit_sizes.contains(&32),
        "no commit of 32 frames to check: {commit_sizes:?}"
    );
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
    let writes = submits_of("big", &payload, 256);
    let answers = store.write_group(writes).await;
    assert!(answers.iter().all(Result::is_ok));
    assert_eq!(store.stats(None).await.unwrap()["default"][0], 256);
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
        let err = store.stats(None).await.unwrap_err();
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

// ---------------------------------------------------------------------------
// Schema text and migrations (docs/protocol.md, "Migration ledger", "Schema text")
// ---------------------------------------------------------------------------

/// What `sqlite_master` stores for each object at schema_version 10: the
/// protocol's text from the object name on, byte for byte (the Python SDK
/// 0.15.1 stores the same; `__test__/interop/python.test.mjs` compares the two).
const TASKS_TABLE: &str = "CREATE TABLE cairnq_tasks (
    id text primary key,

    name text not null,
    queue text not null default 'default',

    status text not null check (
        status in ('queued', 'running', 'succeeded', 'failed', 'canceled')
    ),

    payload text not null check (json_valid(payload)),
    result text check (result is null or json_valid(result)),
    error text check (error is null or json_valid(error)),
    metadata text not null default '{}' check (json_valid(metadata)),

    progress real,
    message text,

    attempt integer not null default 0,
    max_attempts integer not null default 3,

    priority integer not null default 0,

    worker_id text,
    lease_until_ms integer,

    run_at_ms integer not null,

    cancel_requested_at_ms integer,

    parent_id text,
    root_id text,
    correlation_id text,

    created_at_ms integer not null,
    updated_at_ms integer not null,
    completed_at_ms integer
)";

const SCHEMA_V10: &[(&str, &str, &str)] = &[
    ("table", "cairnq_meta", "CREATE TABLE cairnq_meta (\n    key text primary key,\n    value text not null\n)"),
    ("table", "cairnq_migrations", "CREATE TABLE cairnq_migrations (name text primary key, applied_at_ms integer not null)"),
    ("table", "cairnq_task_keys", "CREATE TABLE cairnq_task_keys (\n    key text primary key,\n    task_id text not null references cairnq_tasks(id) on delete cascade,\n    created_at_ms integer not null,\n    updated_at_ms integer not null\n)"),
    ("table", "cairnq_tasks", TASKS_TABLE),
    ("index", "cairnq_tasks_claim_idx", "CREATE INDEX cairnq_tasks_claim_idx\n    on cairnq_tasks (queue, status, priority desc, run_at_ms, id)"),
    ("index", "cairnq_tasks_claim_name_idx", "CREATE INDEX cairnq_tasks_claim_name_idx\n    on cairnq_tasks (queue, status, name, priority desc, run_at_ms, id)"),
    ("index", "cairnq_tasks_completed_idx", "CREATE INDEX cairnq_tasks_completed_idx\n    on cairnq_tasks (completed_at_ms)"),
    ("index", "cairnq_tasks_correlation_idx", "CREATE INDEX cairnq_tasks_correlation_idx on cairnq_tasks (correlation_id)"),
    ("index", "cairnq_tasks_lease_idx", "CREATE INDEX cairnq_tasks_lease_idx\n    on cairnq_tasks (lease_until_ms)\n    where status = 'running' and lease_until_ms is not null"),
    ("index", "cairnq_tasks_name_idx", "CREATE INDEX cairnq_tasks_name_idx on cairnq_tasks (name)"),
    ("index", "cairnq_tasks_queue_completed_idx", "CREATE INDEX cairnq_tasks_queue_completed_idx\n    on cairnq_tasks (queue, completed_at_ms)\n    where status in ('succeeded', 'failed', 'canceled')"),
    ("index", "cairnq_tasks_root_idx", "CREATE INDEX cairnq_tasks_root_idx on cairnq_tasks (root_id)"),
    ("index", "cairnq_tasks_status_completed_idx", "CREATE INDEX cairnq_tasks_status_completed_idx\n    on cairnq_tasks (status, completed_at_ms)"),
];

/// `(type, name) → sql` of the cairnq objects (autoindexes and SQLite's own left out).
fn schema(conn: &Connection) -> BTreeMap<(String, String), String> {
    let mut stmt = conn
        .prepare("select type, name, sql from sqlite_master where sql is not null and name like 'cairnq%'")
        .unwrap();
    let rows = stmt
        .query_map([], |row| Ok(((row.get(0)?, row.get(1)?), row.get(2)?)))
        .unwrap();
    rows.map(Result::unwrap).collect()
}

fn ledger(conn: &Connection) -> Vec<(String, i64)> {
    let mut stmt = conn
        .prepare("select name, applied_at_ms from cairnq_migrations order by name")
        .unwrap();
    let rows = stmt
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
        .unwrap();
    rows.map(Result::unwrap).collect()
}

/// The ledger names of this SDK's own tables.
fn own_ledger(conn: &Connection) -> Vec<String> {
    ledger(conn)
        .into_iter()
        .map(|(name, _)| name)
        .filter(|name| name.starts_with("node_"))
        .collect()
}

fn meta(conn: &Connection) -> Vec<(String, String)> {
    let mut stmt = conn
        .prepare("select key, value from cairnq_meta order by key")
        .unwrap();
    let rows = stmt
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
        .unwrap();
    rows.map(Result::unwrap).collect()
}

fn v10_meta() -> Vec<(String, String)> {
    vec![
        ("protocol_version".into(), "1".into()),
        ("schema_version".into(), "10".into()),
    ]
}

async fn opened(path: &Path) -> Arc<Store> {
    let store = Store::sqlite(path.to_str().unwrap(), None);
    store.connect().await.unwrap();
    store
}

#[tokio::test]
async fn a_new_database_has_the_protocols_schema_text() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("q.db");
    let store = opened(&path).await;
    store.close().await.unwrap();
    let conn = Connection::open(&path).unwrap();
    let expected: BTreeMap<(String, String), String> = SCHEMA_V10
        .iter()
        .map(|(kind, name, sql)| ((kind.to_string(), name.to_string()), sql.to_string()))
        .collect();
    assert_eq!(schema(&conn), expected);
    let names: Vec<String> = ledger(&conn).into_iter().map(|(name, _)| name).collect();
    assert_eq!(names, common::ledger_names("sqlite"));
    assert_eq!(meta(&conn), v10_meta());
}

/// A database as the 0.7.0-era SDKs leave it: migrations 0001–0006 applied
/// through the ledger, with a queued and a finished task in it.
fn v6_database(path: &Path) -> Vec<(String, i64)> {
    let conn = Connection::open(path).unwrap();
    conn.execute_batch(
        "create table cairnq_migrations (name text primary key, applied_at_ms integer not null)",
    )
    .unwrap();
    for (applied_at, migration) in SQLITE_MIGRATIONS.iter().take(5).enumerate() {
        conn.execute_batch(migration.sql).unwrap();
        conn.execute(
            "insert into cairnq_migrations (name, applied_at_ms) values (?1, ?2)",
            rusqlite::params![migration.name, applied_at as i64 + 1],
        )
        .unwrap();
    }
    conn.execute_batch(
        "insert into cairnq_tasks (id, name, status, payload, run_at_ms, created_at_ms, updated_at_ms, completed_at_ms)
         values ('task_old_done', 'job', 'succeeded', '{}', 1, 1, 1, 1),
                ('task_old_queued', 'job', 'queued', '{\"n\":1}', 2, 2, 2, null)",
    )
    .unwrap();
    assert_eq!(
        meta(&conn),
        [
            ("protocol_version".to_string(), "1".to_string()),
            ("schema_version".to_string(), "6".to_string())
        ]
    );
    ledger(&conn)
}

#[tokio::test]
async fn a_v6_database_is_brought_to_v10_through_the_ledger_on_first_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("q.db");
    let before = v6_database(&path);

    let store = opened(&path).await;
    let queued = store
        .get(Target::Id("task_old_queued".into()))
        .await
        .unwrap()
        .expect("rows survive the migrations");
    assert_eq!(queued.payload, r#"{"n":1}"#);
    let claimed = store
        .claim(
            ClaimRequest {
                queues: vec!["default".into()],
                worker_id: "w".into(),
                lease_ms: 30_000,
                names: None,
            },
            5,
        )
        .await
        .unwrap();
    assert_eq!(claimed.len(), 1);
    store.close().await.unwrap();

    let conn = Connection::open(&path).unwrap();
    let after = ledger(&conn);
    assert_eq!(
        &after[..5],
        &before[..],
        "applied migrations are not redone"
    );
    let names: Vec<&str> = after.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names, common::ledger_names("sqlite"));
    assert_eq!(meta(&conn), v10_meta());
    let objects = schema(&conn);
    for (kind, name, sql) in SCHEMA_V10.iter().filter(|(kind, ..)| *kind == "index") {
        assert_eq!(
            objects
                .get(&(kind.to_string(), name.to_string()))
                .map(String::as_str),
            Some(*sql),
            "{name}"
        );
    }
    assert!(!objects.contains_key(&("index".into(), "cairnq_tasks_status_idx".into())));
}

#[tokio::test]
async fn ledger_names_from_newer_runners_are_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("q.db");
    opened(&path).await.close().await.unwrap();
    let conn = Connection::open(&path).unwrap();
    conn.execute_batch(
        "insert into cairnq_migrations values ('0011_from_the_future.sql', 7);
         update cairnq_meta set value = '11' where key = 'schema_version'",
    )
    .unwrap();
    let before = ledger(&conn);

    let store = opened(&path).await;
    store.stats(None).await.unwrap();
    store.close().await.unwrap();
    assert_eq!(ledger(&conn), before);
    assert_eq!(
        meta(&conn)[1],
        ("schema_version".to_string(), "11".to_string())
    );
}

// ---------------------------------------------------------------------------
// Plans (docs/protocol.md, "Statements"): each statement reaches its index
// ---------------------------------------------------------------------------

/// A migrated file with a few thousand rows spread over queues, names and
/// statuses, analyzed as every SDK analyzes on open; the connection plans as
/// the store's do (planner stability guarantee on).
async fn analyzed_database(dir: &Path) -> Connection {
    let path = dir.join("plans.db");
    opened(&path).await.close().await.unwrap();
    let conn = Connection::open(&path).unwrap();
    conn.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
        true,
    )
    .unwrap();
    conn.execute_batch(
        "with recursive n(i) as (select 0 union all select i + 1 from n where i < 3999)
         insert into cairnq_tasks (id, name, queue, status, payload, run_at_ms, created_at_ms,
                                   updated_at_ms, completed_at_ms, lease_until_ms, root_id, correlation_id)
         select printf('task_%05d', i), 'name' || (i % 20), 'q' || (i % 8),
                case i % 5 when 0 then 'queued' when 1 then 'running' when 2 then 'succeeded'
                           when 3 then 'failed' else 'canceled' end,
                '{}', i, i, i,
                case when i % 5 >= 2 then i end,
                case when i % 5 = 1 then i end,
                printf('task_%05d', i / 4), 'c' || (i % 100)
         from n;
         analyze;",
    )
    .unwrap();
    conn
}

fn plan(conn: &Connection, sql: &str) -> Vec<String> {
    // Planned before any value is bound, as the store's statements are.
    let mut stmt = conn.prepare(&format!("explain query plan {sql}")).unwrap();
    let mut rows = stmt.raw_query();
    let mut lines = Vec::new();
    while let Some(row) = rows.next().unwrap() {
        lines.push(row.get::<_, String>(3).unwrap());
    }
    lines
}

/// `sql` reads `index` (named in the plan), never scans the whole table and,
/// with `in_order`, needs no sort step.
fn assert_reaches(conn: &Connection, label: &str, sql: &str, index: &str, in_order: bool) {
    let lines = plan(conn, sql);
    let uses = |line: &String| {
        line.contains(&format!("INDEX {index} ")) || line.ends_with(&format!("INDEX {index}"))
    };
    assert!(
        lines.iter().any(uses),
        "{label} does not reach {index}: {lines:#?}"
    );
    assert!(
        !lines.iter().any(|line| line == "SCAN cairnq_tasks"),
        "{label} scans the table: {lines:#?}"
    );
    if in_order {
        assert!(
            !lines.iter().any(|line| line.contains("TEMP B-TREE")),
            "{label} sorts: {lines:#?}"
        );
    }
}

#[tokio::test]
async fn every_statement_reaches_its_index() {
    let dir = tempfile::tempdir().unwrap();
    let conn = analyzed_database(dir.path()).await;
    let list = |set: &[&str]| specialize(SQL.list, set);
    let purge = |set: &[&str]| specialize(SQL.purge, set);
    let checks: &[(&str, &str, &str, bool)] = &[
        (
            "claim_one_queue",
            SQL.claim_one_queue,
            "cairnq_tasks_claim_idx",
            true,
        ),
        (
            "claim_one_queue_one_name",
            SQL.claim_one_queue_one_name,
            "cairnq_tasks_claim_name_idx",
            true,
        ),
        (
            "claim_one_name",
            SQL.claim_one_name,
            "cairnq_tasks_claim_name_idx",
            false,
        ),
        ("claim", SQL.claim, "cairnq_tasks_claim", false),
        (
            "claimable_probe (queued arm)",
            SQL.claimable_probe,
            "cairnq_tasks_claim",
            false,
        ),
        (
            "claimable_probe (lease arm)",
            SQL.claimable_probe,
            "cairnq_tasks_lease_idx",
            false,
        ),
        // With names the queued arm seeks them: a backlog of other names costs nothing.
        (
            "claimable_probe names",
            specialize(SQL.claimable_probe, &[":names"]),
            "cairnq_tasks_claim_name_idx",
            false,
        ),
        (
            "recover_leases",
            SQL.recover_leases,
            "cairnq_tasks_lease_idx",
            false,
        ),
        (
            "get_status",
            SQL.get_status,
            "sqlite_autoindex_cairnq_tasks_1",
            false,
        ),
        (
            "get_status_by_key",
            SQL.get_status_by_key,
            "sqlite_autoindex_cairnq_task_keys_1",
            false,
        ),
        ("queue_depth", SQL.queue_depth, "cairnq_tasks_claim", false),
        ("oldest_due", SQL.oldest_due, "cairnq_tasks_claim", false),
        ("purge", SQL.purge, "cairnq_tasks_completed_idx", true),
        (
            "purge status",
            purge(&[":status"]),
            "cairnq_tasks_status_completed_idx",
            true,
        ),
        (
            "purge queue",
            purge(&[":queue"]),
            "cairnq_tasks_queue_completed_idx",
            true,
        ),
        (
            "purge queue+status",
            purge(&[":queue", ":status"]),
            "cairnq_tasks_queue_completed_idx",
            false,
        ),
        (
            "purge queue+name",
            purge(&[":queue", ":name"]),
            "cairnq_tasks_queue_completed_idx",
            false,
        ),
        (
            "purge status+name",
            purge(&[":status", ":name"]),
            "cairnq_tasks_status_completed_idx",
            false,
        ),
        (
            "stats queue",
            specialize(SQL.stats, &[":queue"]),
            "cairnq_tasks_claim",
            false,
        ),
        ("list queue", list(&[":queue"]), "cairnq_tasks_claim", false),
        (
            "list status",
            list(&[":status"]),
            "cairnq_tasks_status_completed_idx",
            false,
        ),
        (
            "list name",
            list(&[":name"]),
            "cairnq_tasks_name_idx",
            false,
        ),
        (
            "list root_id",
            list(&[":root_id"]),
            "cairnq_tasks_root_idx",
            false,
        ),
        (
            "list correlation_id",
            list(&[":correlation_id"]),
            "cairnq_tasks_correlation_idx",
            false,
        ),
    ];
    for (label, sql, index, in_order) in checks {
        if index.ends_with("_claim") {
            // Either claim index serves the (queue, status) prefix (as ranges
            // for the list forms).
            let lines = plan(&conn, sql);
            assert!(
                lines
                    .iter()
                    .any(|l| l.contains("INDEX cairnq_tasks_claim_idx")
                        || l.contains("INDEX cairnq_tasks_claim_name_idx")),
                "{label} does not reach a claim index: {lines:#?}"
            );
            assert!(
                !lines.iter().any(|l| l == "SCAN cairnq_tasks"),
                "{label}: {lines:#?}"
            );
        } else {
            assert_reaches(&conn, label, sql, index, *in_order);
        }
    }
    // A name-only purge has no index of its own; it still never reads the whole table.
    let by_name = plan(&conn, purge(&[":name"]));
    assert!(
        !by_name.iter().any(|l| l == "SCAN cairnq_tasks"),
        "{by_name:#?}"
    );
    // The purge preview counts on the indexes the purge walks (by name, the
    // name index), never on the table.
    for (set, index) in [
        (&[][..], "_completed_idx"),
        (&[":status"], "_completed_idx"),
        (&[":queue"], "_completed_idx"),
        (&[":queue", ":status"], "_completed_idx"),
        (&[":name"], "cairnq_tasks_name_idx"),
    ] {
        let lines = plan(&conn, specialize(SQL.purge_count, set));
        assert!(
            lines.iter().any(|l| l.contains(index)),
            "purge_count {set:?}: {lines:#?}"
        );
        assert!(
            !lines.iter().any(|l| l == "SCAN cairnq_tasks"),
            "{lines:#?}"
        );
    }
}

/// A write refused before it reaches the store (one the binding could not
/// decode, or one validation rejects) is answered with its own error, in its
/// place, and the other writes of its group still commit: through the
/// runtime and on the caller's thread alike.
#[tokio::test]
async fn a_refused_write_fails_alone_in_its_group() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::sqlite(dir.path().join("q.db").to_str().unwrap(), None);
    store.connect().await.unwrap();
    let group = || {
        let mut writes = submits_of("good", "{}", 2);
        writes.insert(1, Err(Error::Invalid("submit.queue: not a string".into())));
        writes.insert(
            2,
            Ok(Write::Submit(SubmitInput {
                name: "bad".into(),
                max_attempts: Some(0.0),
                ..SubmitInput::default()
            })),
        );
        writes
    };
    let refusals = |answers: &[cairnq_core::store::WriteAnswer]| -> Vec<Option<String>> {
        answers
            .iter()
            .map(|a| a.as_ref().err().map(ToString::to_string))
            .collect()
    };
    let expected = vec![
        None,
        Some("submit.queue: not a string".to_string()),
        Some("maxAttempts must be >= 1, got 0".to_string()),
        None,
    ];
    assert_eq!(refusals(&store.write_group(group()).await), expected);
    let inline = store
        .write_now(group())
        .expect("an idle store writes inline");
    assert_eq!(refusals(&inline), expected);
    assert_eq!(store.stats(None).await.unwrap()["default"][0], 4);
    store.close().await.unwrap();
}

#[tokio::test]
async fn schedules_table_appears_on_first_use_with_its_ledger_row() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(&dir);
    common::schedules::the_table_appears_on_first_use(store.clone()).await;
    store.close().await.unwrap();
    let conn = Connection::open(dir.path().join("q.db")).unwrap();
    assert_eq!(
        own_ledger(&conn),
        ["node_schedules_0001.sql", "node_schedules_0002.sql"]
    );
}

/// A schedules table an earlier version created, without its controls
/// (`node_schedules_0001.sql` only), gains them on its next use: the rows
/// kept, read and fired as `overlap: "allow"` with nothing counted yet.
#[tokio::test]
async fn an_earlier_schedules_table_gains_its_controls() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(&dir);
    store.connect().await.unwrap();
    let conn = Connection::open(dir.path().join("q.db")).unwrap();
    conn.execute_batch(cairnq_core::protocol::schedules::SQLITE.migration.sql)
        .unwrap();
    conn.execute_batch(&format!(
        "insert into cairnq_migrations (name, applied_at_ms) values ('node_schedules_0001.sql', 0);
         insert into cairnq_schedules values ('old', 'report', '* * * * *', 'UTC', 'default',
             '{{}}', '{{}}', 0, 3, 'latest', 0, {t0}, null, 0, 0);",
        t0 = common::schedules::T0
    ))
    .unwrap();
    let listed = store.schedules().await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(
        (listed[0].overlap.as_str(), listed[0].fired_count),
        ("allow", 0)
    );
    let fired =
        cairnq_core::schedule::fire::fire_due(&store, &["default".into()], common::schedules::T0)
            .await
            .unwrap();
    assert_eq!(fired.tasks, 1);
    let row = store.schedule_named("old").await.unwrap().unwrap();
    assert_eq!(row.fired_count, 1);
    store.close().await.unwrap();
    assert_eq!(
        own_ledger(&conn),
        ["node_schedules_0001.sql", "node_schedules_0002.sql"]
    );
}

/// Rows of this SDK's own tables written by another program in shapes the
/// core does not write (docs/security.md, "Rows written by others"): a REAL
/// is read truncated, as in the task table; a row it cannot read is skipped
/// (reported once) and the others keep working.
mod foreign_rows {
    use super::common::flow::{rate, request};
    use super::{common, store_in};
    use cairnq_core::flow::Declaration;
    use cairnq_core::schedule::fire::fire_due;
    use cairnq_core::store::{ClaimPlan, Draw, SubmitInput};
    use cairnq_core::{Error, Store, Task};
    use rusqlite::Connection;
    use std::any::Any;

    fn sql(dir: &tempfile::TempDir, statement: &str) {
        let conn = Connection::open(dir.path().join("q.db")).unwrap();
        conn.execute_batch(statement).unwrap();
    }

    #[tokio::test]
    async fn unfirable_schedules_never_starve_a_healthy_one() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_in(&dir);
        common::schedules::a_healthy_schedule_among_unfirable_ones(&store).await;
        sql(
            &dir,
            &format!(
                "with recursive n(i) as (select 1 union all select i + 1 from n where i < 1000)
                 insert into cairnq_schedules (name, task_name, cron, tz, queue, payload, metadata, priority,
                     max_attempts, catch_up, paused, next_run_at_ms, last_run_at_ms, created_at_ms,
                     updated_at_ms)
                 select 'bad-' || i, 'report', '{}', 'UTC',
                     'default', '{{}}', '{{}}', 0, 3, 'latest', 0, {}, null, 0, 0 from n",
                common::schedules::UNFIRABLE_CRON,
                common::schedules::T0
            ),
        );
        common::schedules::the_healthy_schedule_fires(&store).await;
        store.close().await.unwrap();
    }

    /// A TEXT time is skipped by every read (listed no more, never fired); a
    /// REAL one is read truncated; the healthy schedule lists and fires.
    #[tokio::test]
    async fn a_schedule_row_with_a_text_time_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_in(&dir);
        common::schedules::a_healthy_schedule_among_unfirable_ones(&store).await;
        let t0 = common::schedules::T0;
        sql(
            &dir,
            &format!(
                "insert into cairnq_schedules (name, task_name, cron, tz, queue, payload, metadata, priority,
                     max_attempts, catch_up, paused, next_run_at_ms, last_run_at_ms, created_at_ms,
                     updated_at_ms)
                 select 'text-time', task_name, cron, tz, queue,
                     payload, metadata, priority, max_attempts, catch_up, paused, 'soon',
                     null, 0, 0 from cairnq_schedules where name = 'healthy';
                 insert into cairnq_schedules (name, task_name, cron, tz, queue, payload, metadata, priority,
                     max_attempts, catch_up, paused, next_run_at_ms, last_run_at_ms, created_at_ms,
                     updated_at_ms)
                 select 'real-time', task_name, cron, tz, queue,
                     payload, metadata, priority, max_attempts, catch_up, paused,
                     next_run_at_ms - 0.5, null, {t0}.5, 0 from cairnq_schedules
                     where name = 'healthy';"
            ),
        );
        let names: Vec<String> = store
            .schedules()
            .await
            .unwrap()
            .into_iter()
            .map(|row| row.name)
            .collect();
        assert_eq!(names, ["healthy", "real-time"]);
        let real = store.schedule_named("real-time").await.unwrap().unwrap();
        assert_eq!(real.created_at_ms, t0);
        assert!(store.schedule_named("text-time").await.unwrap().is_none());
        let fired = fire_due(&store, &["default".into()], t0 + 60_000)
            .await
            .unwrap();
        assert_eq!(fired.tasks, 2, "healthy and real-time fire");
        store.close().await.unwrap();
    }

    /// A step row with a TEXT time: the task's steps still show (without
    /// it); a run replaying them fails naming table, key and column.
    #[tokio::test]
    async fn a_step_row_with_a_text_time_is_skipped_when_shown() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_in(&dir);
        let task = store
            .submit(SubmitInput {
                name: "t".into(),
                ..SubmitInput::default()
            })
            .await
            .unwrap();
        store.backend().install_steps().await.unwrap();
        sql(
            &dir,
            &format!(
                "insert into cairnq_steps values ('{id}', 'fine', 'step', '1', null, null, 5);
                 insert into cairnq_steps values ('{id}', 'odd', 'sleep', null, 'later', null, 6);",
                id = task.id
            ),
        );
        let shown = store.step_summaries(&task.id).await.unwrap();
        assert_eq!(
            shown.iter().map(|s| s.step_id.as_str()).collect::<Vec<_>>(),
            ["fine"]
        );
        cairnq_core::steps::view::steps_of(&store, &task.id)
            .await
            .unwrap();
        match store.load_steps(&task.id).await {
            Err(Error::Invalid(message)) => assert_eq!(
                message,
                format!(
                    "a row of cairnq_steps cannot be read: key \"{}/odd\", column wake_at_ms: holds TEXT \"later\"",
                    task.id
                )
            ),
            other => panic!("a bad step row was replayed: {other:?}"),
        }
        store.close().await.unwrap();
    }

    /// A flow draw of a name, then a plain draw of another, in one session.
    struct TwoDraws {
        draws: Vec<Draw>,
        claimed: Vec<Vec<Task>>,
    }

    impl ClaimPlan for TwoDraws {
        fn next_draw(&mut self) -> Option<Draw> {
            self.draws.pop()
        }
        fn accept(&mut self, rows: Vec<Task>) {
            self.claimed.push(rows);
        }
        fn into_any(self: Box<Self>) -> Box<dyn Any + Send> {
            self
        }
    }

    async fn claim_both(store: &Store) -> Vec<Vec<String>> {
        let draw = |name: &str, flow| Draw {
            names: Some(vec![name.into()]),
            limit: 10,
            flow,
        };
        let plan = TwoDraws {
            draws: vec![draw("free", false), draw("limited", true)],
            claimed: Vec::new(),
        };
        let plan = store
            .claim_session(request("w", 30_000), plan)
            .await
            .unwrap()
            .unwrap();
        plan.claimed
            .into_iter()
            .map(|rows| rows.into_iter().map(|t| t.name).collect())
            .collect()
    }

    /// Limits another program wrote as TEXT keep their name from claiming
    /// (no licence to run unlimited), never the worker's other names; a REAL
    /// one is read truncated; a worker's next declaration replaces the row.
    #[tokio::test]
    async fn a_flow_limits_row_nobody_can_read_stops_only_its_name() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_in(&dir);
        let declare = |limits| {
            let store = store.clone();
            async move {
                let declaration = Declaration {
                    name: "limited".into(),
                    limits,
                };
                store
                    .backend()
                    .declare_flow("w".into(), vec![declaration])
                    .await
                    .unwrap()
            }
        };
        declare(rate(5, 60_000, false)).await;
        for name in ["limited", "limited", "limited", "limited", "free", "free"] {
            let input = SubmitInput {
                name: name.into(),
                ..SubmitInput::default()
            };
            store.submit(input).await.unwrap();
        }
        sql(&dir, "update cairnq_flow_limits set rate_max = 'lots'");
        let free = vec!["free".to_string(), "free".to_string()];
        assert_eq!(claim_both(&store).await, [Vec::new(), free]);
        sql(&dir, "update cairnq_flow_limits set rate_max = 2.5");
        let [limited, _] = <[Vec<String>; 2]>::try_from(claim_both(&store).await).unwrap();
        assert_eq!(limited.len(), 2, "rate_max 2.5 is read as 2");
        sql(&dir, "update cairnq_flow_limits set rate_max = 'lots'");
        let replaced = declare(rate(3, 60_000, false)).await;
        assert!(replaced.is_empty(), "an unreadable row is no declaration");
        let [limited, _] = <[Vec<String>; 2]>::try_from(claim_both(&store).await).unwrap();
        assert_eq!(limited.len(), 1, "3 a minute, 2 started");
        store.close().await.unwrap();
    }
}

/// What only SQLite can hold (a REAL in an integer column), and what
/// `OpenMode::MigrateOwn` refuses.
mod hardening {
    use cairnq_core::store::{ListInput, OpenMode, SubmitInput, Target};
    use cairnq_core::{Error, Store};
    use rusqlite::Connection;

    /// SQLite keeps a REAL where another SDK computed a time in floating
    /// point or past the 64-bit range: reads take it truncated and saturated
    /// instead of failing for every row they return.
    #[tokio::test]
    async fn a_real_in_an_integer_column_reads_as_an_integer() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("q.db");
        let store = Store::sqlite(path.to_str().unwrap(), None);
        let task = store
            .submit(SubmitInput {
                name: "job".into(),
                ..SubmitInput::default()
            })
            .await
            .unwrap();
        let other = Connection::open(&path).unwrap();
        other
            .execute(
                "update cairnq_tasks set run_at_ms = 9.3e18, attempt = 1.75, lease_until_ms = 1.5e12, completed_at_ms = -9.3e18 where id = ?1",
                [&task.id],
            )
            .unwrap();
        let kind: String = other
            .query_row("select typeof(run_at_ms) from cairnq_tasks", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(kind, "real");
        let read = store
            .get(Target::Id(task.id.clone()))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(read.run_at_ms, i64::MAX);
        assert_eq!(read.attempt, 1);
        assert_eq!(read.lease_until_ms, Some(1_500_000_000_000));
        assert_eq!(read.completed_at_ms, Some(i64::MIN));
        assert_eq!(store.list(ListInput::default()).await.unwrap().len(), 1);
        assert!(store.cancel(Target::Id(task.id)).await.unwrap().is_some());
        store.close().await.unwrap();
    }

    /// `OpenMode::MigrateOwn`: a file of another application is refused
    /// before anything is written (no cairnq tables, no WAL switch); a new,
    /// empty or cairnq file opens as with `Migrate`.
    #[tokio::test]
    async fn migrate_own_refuses_another_applications_file() {
        let dir = tempfile::tempdir().unwrap();
        let app = dir.path().join("app.db");
        let conn = Connection::open(&app).unwrap();
        conn.execute_batch(
            "create table users (id integer primary key); insert into users default values;",
        )
        .unwrap();
        drop(conn);
        let before = std::fs::read(&app).unwrap();
        let store = Store::sqlite_with(app.to_str().unwrap(), None, OpenMode::MigrateOwn);
        match store.connect().await.unwrap_err() {
            Error::NoCairnqDatabase { message, .. } => {
                assert!(
                    message.contains("another application's tables (users)"),
                    "{message}"
                )
            }
            other => panic!("expected NoCairnqDatabase, got {other:?}"),
        }
        assert_eq!(std::fs::read(&app).unwrap(), before);
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["app.db"]);
        for fresh in ["new.db", "empty.db"] {
            let path = dir.path().join(fresh);
            if fresh == "empty.db" {
                std::fs::write(&path, b"").unwrap();
            }
            let store = Store::sqlite_with(path.to_str().unwrap(), None, OpenMode::MigrateOwn);
            store.connect().await.unwrap();
            store.close().await.unwrap();
            // Once installed, the file is cairnq's: it opens again.
            let again = Store::sqlite_with(path.to_str().unwrap(), None, OpenMode::MigrateOwn);
            again.connect().await.unwrap();
            again.close().await.unwrap();
        }
    }

    /// `OpenMode::MigrateOwn` refuses what the command line cannot keep: an
    /// in-memory database, and a file in a directory that does not exist
    /// (created by `Migrate` alone).
    #[tokio::test]
    async fn migrate_own_refuses_memory_and_a_missing_directory() {
        for memory in [
            ":memory:",
            "file:m?mode=memory",
            "file::memory:",
            "file:m?vfs=memdb",
        ] {
            let store = Store::sqlite_with(memory, None, OpenMode::MigrateOwn);
            match store.connect().await.unwrap_err() {
                Error::Invalid(message) => assert!(
                    message.starts_with("db must be a database that outlives this process"),
                    "{message}"
                ),
                other => panic!("{memory}: expected Invalid, got {other:?}"),
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("typo");
        let path = missing.join("q.db");
        let store = Store::sqlite_with(path.to_str().unwrap(), None, OpenMode::MigrateOwn);
        match store.connect().await.unwrap_err() {
            Error::NoCairnqDatabase { message, .. } => assert!(
                message.ends_with(&format!(
                    "the directory {} does not exist (nothing was created)",
                    missing.display()
                )),
                "{message}"
            ),
            other => panic!("expected NoCairnqDatabase, got {other:?}"),
        }
        assert!(!missing.exists());
        let store = Store::sqlite_with(path.to_str().unwrap(), None, OpenMode::Migrate);
        store.connect().await.unwrap();
        store.close().await.unwrap();
    }
}

/// Durable steps: the table's ledger row (the shared checks of
/// `common::steps` run as `shared::steps`).
mod steps {
    use super::{common, store_in};

    /// The table's ledger row: a name other SDKs ignore.
    #[tokio::test]
    async fn the_ledger_records_the_steps_table() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_in(&dir);
        common::steps::the_table_appears_on_first_use_and_goes_with_purged_tasks(store.clone())
            .await;
        store.close().await.unwrap();
        let conn = rusqlite::Connection::open(dir.path().join("q.db")).unwrap();
        let ledger: Vec<String> = conn
            .prepare("select name from cairnq_migrations where name not like '00%'")
            .unwrap()
            .query_map([], |row| row.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(ledger, vec!["node_steps_0001.sql".to_string()]);
    }
}

/// Flow control (docs/protocol.md, "Flow control tables"): the tables' first
/// use, refused input leaving them absent, and the plans of the flow
/// statements (the other shared checks run as `shared::flow`).
mod flow {
    use super::common::flow;
    use super::{analyzed_database, assert_reaches, store_in};
    use cairnq_core::protocol::flow::{
        sqlite_draw_scan, LEDGER_NAME, SHARED_KEYS_LEDGER_NAME, SQLITE as FLOW,
        SQLITE_GROUP_RUNNING, SQLITE_GROUP_STARTS, SQLITE_SHARED_KEYS,
    };
    use cairnq_core::protocol::SQLITE_CLAIM_IDS;
    use rusqlite::Connection;

    /// Names of the tables in the file whose names start with `cairnq_flow`,
    /// and the ledger rows of this SDK's own tables.
    fn flow_tables_and_ledger(dir: &tempfile::TempDir) -> (Vec<String>, Vec<String>) {
        let conn = Connection::open(dir.path().join("q.db")).unwrap();
        let read = |sql: &str| -> Vec<String> {
            conn.prepare(sql)
                .unwrap()
                .query_map([], |row| row.get(0))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap()
        };
        (
            read("select name from sqlite_master where type = 'table' and name like 'cairnq_flow%' order by name"),
            read("select name from cairnq_migrations where name not like '00%'"),
        )
    }

    #[tokio::test]
    async fn the_latest_declaration_wins_and_the_tables_appear_with_it() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_in(&dir);
        store.connect().await.unwrap();
        assert_eq!(flow_tables_and_ledger(&dir), (vec![], vec![]));
        flow::the_latest_declaration_wins(store.clone()).await;
        store.close().await.unwrap();
        assert_eq!(
            flow_tables_and_ledger(&dir),
            (
                vec![
                    "cairnq_flow_keys".into(),
                    "cairnq_flow_limits".into(),
                    "cairnq_flow_starts".into()
                ],
                vec![LEDGER_NAME.into(), SHARED_KEYS_LEDGER_NAME.into()]
            )
        );
    }

    #[tokio::test]
    async fn bad_flow_input_is_refused_and_nothing_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_in(&dir);
        flow::bad_input_is_refused_and_nothing_is_written(store.clone()).await;
        store.close().await.unwrap();
        assert_eq!(flow_tables_and_ledger(&dir), (vec![], vec![]));
    }

    /// A chunk's scan walks the per-name claim index in order, its groups'
    /// running rows come through the partial lease index, their starts
    /// through the window index, and the claim by ids through the primary
    /// key; the due count walks the claim index alone. None reads the table.
    #[tokio::test]
    async fn the_flow_statements_reach_their_indexes() {
        let dir = tempfile::tempdir().unwrap();
        let conn = analyzed_database(dir.path()).await;
        conn.execute_batch(FLOW.migration.sql).unwrap();
        conn.execute_batch(SQLITE_SHARED_KEYS.sql).unwrap();
        let checks: &[(&str, &str, &str, bool)] = &[
            (
                "draw_scan",
                sqlite_draw_scan(),
                "cairnq_tasks_claim_name_idx",
                true,
            ),
            (
                "group_running",
                SQLITE_GROUP_RUNNING,
                "cairnq_tasks_lease_idx",
                false,
            ),
            (
                "group_starts",
                SQLITE_GROUP_STARTS,
                "cairnq_flow_starts_budget_idx",
                false,
            ),
            (
                "claim_ids",
                SQLITE_CLAIM_IDS,
                "sqlite_autoindex_cairnq_tasks_1",
                false,
            ),
        ];
        for (label, sql, index, in_order) in checks {
            assert_reaches(&conn, label, sql, index, *in_order);
        }
        // As a new store sees it: analyzed while empty, then filled.
        let fresh = dir.path().join("fresh.db");
        crate::opened(&fresh).await.close().await.unwrap();
        let conn = Connection::open(&fresh).unwrap();
        conn.execute_batch(
            "with recursive n(i) as (select 0 union all select i + 1 from n where i < 3999)
             insert into cairnq_tasks (id, name, status, payload, run_at_ms, created_at_ms,
                                       updated_at_ms)
             select printf('task_%05d', i), 'name', 'queued', '{}', i, i, i from n;",
        )
        .unwrap();
        assert_reaches(
            &conn,
            "claim_ids",
            SQLITE_CLAIM_IDS,
            "sqlite_autoindex_cairnq_tasks_1",
            false,
        );
        assert_reaches(
            &conn,
            "due_count",
            FLOW.due_count,
            "cairnq_tasks_claim_name_idx",
            true,
        );
    }
}

/// A database whose events tables an earlier version made (the first
/// triggers, `node_events_0001.sql`) gets the second form of the update
/// trigger (`node_events_0002.sql`) from its next subscription: the events
/// recorded before stay readable, later ones are recorded once each, in
/// order.
#[tokio::test]
async fn an_earlier_events_install_gets_the_second_triggers() {
    use cairnq_core::events::{EventsOptions, Subscription};
    use cairnq_core::protocol::events::{LEDGER_NAME, SQLITE as EVENTS};
    use cairnq_core::store::{HeldTask, Outcome};

    let dir = tempfile::tempdir().unwrap();
    let store = store_in(&dir);
    let submit = |name: &str| SubmitInput {
        name: name.into(),
        ..SubmitInput::default()
    };
    let before = store.submit(submit("before")).await.unwrap();
    let conn = Connection::open(dir.path().join("q.db")).unwrap();
    conn.execute_batch(EVENTS.migration.sql).unwrap();
    conn.execute(
        "insert into cairnq_migrations (name, applied_at_ms) values (?1, 0)",
        [LEDGER_NAME],
    )
    .unwrap();
    store.cancel(Target::Id(before.id.clone())).await.unwrap();
    assert!(!store.backend().events_installed().await.unwrap());

    let options = EventsOptions::read(r#"{"after": "0"}"#).unwrap();
    let subscription = Subscription::open(store.clone(), options).await.unwrap();
    let trigger: String = conn
        .query_row(
            "select sql from sqlite_master where name = 'cairnq_events_on_update'",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert!(!trigger.contains("from (select"), "{trigger}");

    let task = store.submit(submit("a")).await.unwrap();
    let request = ClaimRequest {
        queues: vec!["default".into()],
        worker_id: "w1".into(),
        lease_ms: 30_000,
        names: None,
    };
    store.claim(request, 1).await.unwrap();
    let held = HeldTask {
        task_id: task.id.clone(),
        worker_id: "w1".into(),
    };
    store.heartbeat(held.clone(), 30_000).await.unwrap();
    store
        .progress(held.clone(), Some(0.5), Some("half".into()))
        .await
        .unwrap();
    let done = Outcome::Complete {
        result: Some(r#"{"ok":true}"#.into()),
    };
    store.finish(held, done).await.unwrap();

    let mut events: Vec<serde_json::Value> = Vec::new();
    while events.len() < 5 {
        let page =
            tokio::time::timeout(std::time::Duration::from_secs(30), subscription.next_page())
                .await
                .expect("events in time")
                .unwrap()
                .expect("open");
        events.extend(serde_json::from_str::<Vec<serde_json::Value>>(&page).unwrap());
    }
    let kinds: Vec<(&str, &str)> = events
        .iter()
        .map(|e| (e["taskId"].as_str().unwrap(), e["kind"].as_str().unwrap()))
        .collect();
    let (old, new) = (before.id.as_str(), task.id.as_str());
    assert_eq!(
        kinds,
        [
            (old, "canceled"),
            (new, "queued"),
            (new, "started"),
            (new, "progress"),
            (new, "succeeded")
        ]
    );
    assert_eq!(events[3]["progress"], 0.5);
    assert_eq!(events[3]["message"], "half");
    assert_eq!(events[4]["result"], serde_json::json!({"ok": true}));
    store.close().await.unwrap();
}
