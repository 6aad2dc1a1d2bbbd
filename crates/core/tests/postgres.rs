//! The Postgres backend against a real server. Each test gets a database of
//! its own (created from `CAIRNQ_TEST_PG_DSN`, dropped afterwards), so tests
//! run in parallel without seeing each other's rows or notifications.
//!
//! Without `CAIRNQ_TEST_PG_DSN` the tests skip, unless `CI` is set: then a
//! missing server is a failure. `scripts/test/postgres.sh start` prints a DSN.

#[macro_use]
mod common;

use std::collections::HashSet;
use std::future::Future;
use std::pin::pin;
use std::str::FromStr;
use std::sync::Arc;
use std::task::Poll;
use std::time::{Duration, Instant};

use cairnq_core::store::postgres::{NativeTransport, PostgresBackend};
use cairnq_core::store::{
    ClaimRequest, HeldTask, ListInput, Outcome, PurgeInput, SubmitInput, Target,
};
use cairnq_core::{Error, Status, Store, Task};
use serde_json::{json, Value};
use tokio_postgres::config::Host;
use tokio_postgres::{Client, Config, NoTls};

/// How long a condition may take to become true before a test gives up.
const PATIENCE: Duration = Duration::from_secs(30);
/// A sleep no test should ever sit out: a wake must end it long before.
const LONG_SLEEP: Duration = Duration::from_secs(120);

fn server_dsn() -> Option<String> {
    match std::env::var("CAIRNQ_TEST_PG_DSN") {
        Ok(dsn) if !dsn.trim().is_empty() => Some(dsn),
        _ if std::env::var_os("CI").is_some() => {
            panic!("CAIRNQ_TEST_PG_DSN must name a Postgres server when CI is set")
        }
        _ => {
            eprintln!("skipped: set CAIRNQ_TEST_PG_DSN (see scripts/test/postgres.sh) to run the Postgres tests");
            None
        }
    }
}

/// A key=value DSN for `config`'s server with another database and password.
fn dsn_for(config: &Config, dbname: &str, password: Option<&str>) -> String {
    let quote = |v: &str| format!("'{}'", v.replace('\\', "\\\\").replace('\'', "\\'"));
    let mut parts = Vec::new();
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .map(|h| match h {
            Host::Tcp(name) => name.clone(),
            Host::Unix(path) => path.display().to_string(),
        })
        .collect();
    if !hosts.is_empty() {
        parts.push(format!("host={}", quote(&hosts.join(","))));
    }
    if !config.get_ports().is_empty() {
        let ports: Vec<String> = config.get_ports().iter().map(u16::to_string).collect();
        parts.push(format!("port={}", ports.join(",")));
    }
    if let Some(user) = config.get_user() {
        parts.push(format!("user={}", quote(user)));
    }
    let password = password.map(str::to_string).or_else(|| {
        config
            .get_password()
            .map(|p| String::from_utf8_lossy(p).into_owned())
    });
    if let Some(password) = password {
        parts.push(format!("password={}", quote(&password)));
    }
    parts.push(format!("dbname={}", quote(dbname)));
    parts.join(" ")
}

async fn connect_raw(dsn: &str) -> Client {
    let (client, connection) = tokio_postgres::connect(dsn, NoTls)
        .await
        .expect("connect to the test server");
    tokio::spawn(connection);
    client
}

/// A database of the test's own, dropped when the test ends (even by panic).
/// Tests use the multi-threaded runtime: the drop blocks one worker, and the
/// other must stay free to finish closing connections the server waits on.
struct TestDb {
    server: Config,
    server_dsn: String,
    name: String,
    dsn: String,
}

impl TestDb {
    async fn create() -> Option<TestDb> {
        let server_dsn = server_dsn()?;
        let server = Config::from_str(&server_dsn).expect("CAIRNQ_TEST_PG_DSN parses");
        let name = format!(
            "cairnq_test_{}",
            ulid::Ulid::generate().to_string().to_lowercase()
        );
        connect_raw(&server_dsn)
            .await
            .batch_execute(&format!("create database {name}"))
            .await
            .expect("create a test database");
        let dsn = dsn_for(&server, &name, None);
        Some(TestDb {
            server,
            server_dsn,
            name,
            dsn,
        })
    }

    fn store(&self) -> Arc<Store> {
        Store::postgres(&self.dsn, None).expect("a valid DSN")
    }

    /// A store whose backend the test can ask whether push wakeups are live.
    fn store_with_backend(&self) -> (Arc<Store>, Arc<PostgresBackend<NativeTransport>>) {
        let backend = Arc::new(PostgresBackend::new(&self.dsn, None).expect("a valid DSN"));
        (Store::new(backend.clone()), backend)
    }

    async fn sql(&self) -> Client {
        connect_raw(&self.dsn).await
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        let (dsn, name) = (self.server_dsn.clone(), self.name.clone());
        // Drop runs outside any runtime (or on one that is unwinding): use a fresh one.
        let dropped = std::thread::spawn(move || {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime")
                .block_on(async move {
                    connect_raw(&dsn)
                        .await
                        .batch_execute(&format!("drop database if exists {name} with (force)"))
                        .await
                })
        })
        .join();
        if !matches!(dropped, Ok(Ok(()))) {
            eprintln!("could not drop test database {}", self.name);
        }
    }
}

macro_rules! test_db {
    () => {
        match $crate::TestDb::create().await {
            Some(db) => db,
            None => return,
        }
    };
}

shared_suite! {
    test: #[tokio::test(flavor = "multi_thread", worker_threads = 2)],
    threaded: #[tokio::test(flavor = "multi_thread", worker_threads = 2)],
    db: test_db!(),
    store: crate::TestDb::store,
}

fn submit_input(name: &str, queue: &str) -> SubmitInput {
    SubmitInput {
        name: name.into(),
        queue: Some(queue.into()),
        ..SubmitInput::default()
    }
}

async fn submit(store: &Store, name: &str, queue: &str) -> Task {
    store.submit(submit_input(name, queue)).await.unwrap()
}

async fn submit_keyed(store: &Store, name: &str, key: &str, conflict: &str) -> Result<Task, Error> {
    store
        .submit(SubmitInput {
            key: Some(key.into()),
            conflict: Some(conflict.into()),
            ..submit_input(name, "default")
        })
        .await
}

fn request(queues: &[&str], worker: &str, lease_ms: i64) -> ClaimRequest {
    ClaimRequest {
        queues: queues.iter().map(|q| q.to_string()).collect(),
        worker_id: worker.into(),
        lease_ms,
        names: None,
    }
}

async fn claim(store: &Store, queues: &[&str], worker: &str, limit: i64) -> Vec<Task> {
    store
        .claim(request(queues, worker, 30_000), limit)
        .await
        .unwrap()
}

fn owned(task: &Task, worker: &str) -> HeldTask {
    HeldTask {
        task_id: task.id.clone(),
        worker_id: worker.into(),
    }
}

async fn get(store: &Store, id: &str) -> Task {
    store
        .get(Target::Id(id.into()))
        .await
        .unwrap()
        .expect("the task exists")
}

fn ids(tasks: &[Task]) -> Vec<&str> {
    tasks.iter().map(|t| t.id.as_str()).collect()
}

fn parse(json: &str) -> Value {
    serde_json::from_str(json).expect("a JSON column holds JSON")
}

/// Poll `probe` until it yields a value; fails the test after `PATIENCE`.
async fn eventually<T, F, Fut>(what: &str, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = Instant::now() + PATIENCE;
    loop {
        if let Some(value) = probe().await {
            return value;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn wait_listening(backend: &PostgresBackend<NativeTransport>) {
    eventually("the LISTEN connection", || async {
        backend.listening().then_some(())
    })
    .await
}

async fn strings(client: &Client, sql: &str) -> Vec<String> {
    client
        .query(sql, &[])
        .await
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect()
}

async fn ledger(sql: &Client) -> Vec<(String, i64)> {
    sql.query(
        "select name, applied_at_ms from cairnq_migrations order by name",
        &[],
    )
    .await
    .unwrap()
    .iter()
    .map(|row| (row.get(0), row.get(1)))
    .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrations_build_the_protocol_schema_once() {
    let db = test_db!();
    let store = db.store();
    store.connect().await.unwrap();
    assert_eq!(store.protocol_version().await.unwrap(), 1);

    let sql = db.sql().await;
    let applied = ledger(&sql).await;
    let names: Vec<&str> = applied.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names, common::ledger_names("postgres"));
    assert_eq!(
        strings(
            &sql,
            "select key || '=' || value from cairnq_meta order by key"
        )
        .await,
        ["protocol_version=1", "schema_version=10"]
    );
    assert_eq!(
        strings(
            &sql,
            "select tgname::text from pg_trigger \
             where tgrelid = 'cairnq_tasks'::regclass and not tgisinternal"
        )
        .await,
        ["cairnq_tasks_notify"]
    );
    assert_eq!(
        strings(
            &sql,
            "select proname::text from pg_proc where proname = 'cairnq_notify'"
        )
        .await,
        ["cairnq_notify"]
    );
    // docs/protocol.md, "Schema": the secondary indexes at schema_version 10,
    // as Postgres renders them (keys, DESC on priority, partial predicates).
    let indexes = strings(
        &sql,
        "select indexdef from pg_indexes where tablename = 'cairnq_tasks' \
         and indexname <> 'cairnq_tasks_pkey' order by indexname",
    )
    .await;
    let on = "ON public.cairnq_tasks USING btree";
    assert_eq!(
        indexes,
        [
            format!("CREATE INDEX cairnq_tasks_claim_idx {on} (queue, status, priority DESC, run_at_ms, id)"),
            format!("CREATE INDEX cairnq_tasks_claim_name_idx {on} (queue, status, name, priority DESC, run_at_ms, id)"),
            format!("CREATE INDEX cairnq_tasks_completed_idx {on} (completed_at_ms)"),
            format!("CREATE INDEX cairnq_tasks_correlation_idx {on} (correlation_id)"),
            format!("CREATE INDEX cairnq_tasks_lease_idx {on} (lease_until_ms) WHERE ((status = 'running'::text) AND (lease_until_ms IS NOT NULL))"),
            format!("CREATE INDEX cairnq_tasks_name_idx {on} (name)"),
            format!("CREATE INDEX cairnq_tasks_queue_completed_idx {on} (queue, completed_at_ms) WHERE (status = ANY (ARRAY['succeeded'::text, 'failed'::text, 'canceled'::text]))"),
            format!("CREATE INDEX cairnq_tasks_root_idx {on} (root_id)"),
            format!("CREATE INDEX cairnq_tasks_status_completed_idx {on} (status, completed_at_ms)"),
        ]
    );
    assert_eq!(
        strings(
            &sql,
            "select column_name || ' ' || data_type from information_schema.columns \
             where table_name = 'cairnq_tasks' \
               and column_name in ('payload', 'progress', 'attempt', 'lease_until_ms') \
             order by ordinal_position"
        )
        .await,
        [
            "payload jsonb",
            "progress double precision",
            "attempt integer",
            "lease_until_ms bigint"
        ]
    );

    // Another store on the same database finds nothing left to apply.
    let second = db.store();
    second.connect().await.unwrap();
    assert_eq!(ledger(&sql).await, applied);
    second.close().await.unwrap();
    store.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_cold_starts_apply_each_migration_once() {
    let db = test_db!();
    let stores: Vec<_> = (0..4).map(|_| db.store()).collect();
    let connects = stores.iter().map(|store| {
        let store = store.clone();
        tokio::spawn(async move { store.connect().await })
    });
    for connected in connects.collect::<Vec<_>>() {
        connected.await.unwrap().unwrap();
    }
    assert_eq!(ledger(&db.sql().await).await.len(), 10);
    for store in stores {
        store.close().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_protocol_version_is_refused_and_left_alone() {
    let db = test_db!();
    let sql = db.sql().await;
    sql.batch_execute(
        "create table cairnq_meta (key text primary key, value text not null);
         insert into cairnq_meta values ('protocol_version', '2');",
    )
    .await
    .unwrap();
    let store = db.store();
    match store.connect().await {
        Err(Error::ProtocolVersionMismatch { found }) => assert_eq!(found, "2"),
        other => panic!("expected ProtocolVersionMismatch, got {other:?}"),
    }
    assert_eq!(
        strings(
            &sql,
            "select coalesce(to_regclass('cairnq_migrations')::text, 'none') \
             || ' ' || coalesce(to_regclass('cairnq_tasks')::text, 'none') \
             || ' ' || (select value from cairnq_meta where key = 'protocol_version')"
        )
        .await,
        ["none none 2"]
    );
    // Every later operation is refused the same way.
    let err = store.get(Target::Id("task_x".into())).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "storage protocol_version=2, SDK supports 1"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_migrated_database_restamped_by_a_newer_sdk_is_refused() {
    let db = test_db!();
    let store = db.store();
    store.connect().await.unwrap();
    store.close().await.unwrap();
    let sql = db.sql().await;
    sql.batch_execute("update cairnq_meta set value = '2' where key = 'protocol_version'")
        .await
        .unwrap();
    let again = db.store();
    assert!(matches!(
        again.connect().await,
        Err(Error::ProtocolVersionMismatch { found }) if found == "2"
    ));
    assert_eq!(ledger(&sql).await.len(), 10);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keyed_submits_follow_their_strategy() {
    let db = test_db!();
    let store = db.store();

    let first = submit_keyed(&store, "job", "k", "reuse").await.unwrap();
    let reused = submit_keyed(&store, "job", "k", "reuse").await.unwrap();
    assert_eq!(reused.id, first.id);
    assert!(matches!(
        submit_keyed(&store, "job", "k", "reject").await,
        Err(Error::AlreadyExists { key }) if key == "k"
    ));

    let replacement = submit_keyed(&store, "job", "k", "replace").await.unwrap();
    assert_ne!(replacement.id, first.id);
    assert_eq!(get(&store, &first.id).await.status, Status::Canceled);
    let pointed = store.get(Target::Key("k".into())).await.unwrap().unwrap();
    assert_eq!(pointed.id, replacement.id);

    // Finish the replacement: reuse-succeeded hands it back, reuse starts anew.
    let claimed = claim(&store, &["default"], "w1", 1).await;
    assert_eq!(ids(&claimed), [replacement.id.as_str()]);
    store
        .finish(
            owned(&replacement, "w1"),
            Outcome::Complete {
                result: Some(r#"{"ok":true}"#.into()),
            },
        )
        .await
        .unwrap();
    let kept = submit_keyed(&store, "job", "k", "reuse-succeeded")
        .await
        .unwrap();
    assert_eq!(kept.id, replacement.id);
    assert_eq!(parse(kept.result.as_deref().unwrap()), json!({"ok": true}));
    let fresh = submit_keyed(&store, "job", "k", "reuse").await.unwrap();
    assert_ne!(fresh.id, replacement.id);
    assert_eq!(get(&store, &replacement.id).await.status, Status::Succeeded);

    let canceled = store
        .cancel(Target::Key("k".into()))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (canceled.id.as_str(), canceled.status),
        (fresh.id.as_str(), Status::Canceled)
    );
    let retried = store
        .retry(Target::Key("k".into()), true)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (retried.id.as_str(), retried.status),
        (fresh.id.as_str(), Status::Queued)
    );
    assert!(store
        .cancel(Target::Key("missing".into()))
        .await
        .unwrap()
        .is_none());
    store.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_of_same_key_submits_makes_one_task() {
    let db = test_db!();
    let store = db.store();
    store.connect().await.unwrap();
    let submits: Vec<_> = (0..12)
        .map(|_| {
            let store = store.clone();
            tokio::spawn(async move { submit_keyed(&store, "burst", "same", "reuse").await })
        })
        .collect();
    let mut seen = HashSet::new();
    for submitted in submits {
        seen.insert(submitted.await.unwrap().unwrap().id);
    }
    assert_eq!(seen.len(), 1);
    let all = store
        .list(ListInput {
            name: Some("burst".into()),
            ..ListInput::default()
        })
        .await
        .unwrap();
    assert_eq!(all.len(), 1);
    store.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_skips_rows_another_transaction_holds() {
    let db = test_db!();
    let store = db.store();
    let urgent = store
        .submit(SubmitInput {
            priority: Some(10.0),
            ..submit_input("job", "default")
        })
        .await
        .unwrap();
    let later = submit(&store, "job", "default").await;

    let mut holder = db.sql().await;
    let tx = holder.transaction().await.unwrap();
    tx.query(
        "select id from cairnq_tasks where id = $1 for update",
        &[&urgent.id],
    )
    .await
    .unwrap();
    let claimed = claim(&store, &["default"], "w1", 1).await;
    assert_eq!(ids(&claimed), [later.id.as_str()]);
    tx.commit().await.unwrap();
    let claimed = claim(&store, &["default"], "w1", 1).await;
    assert_eq!(ids(&claimed), [urgent.id.as_str()]);
    store.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_claimers_never_share_a_task() {
    let db = test_db!();
    let store = db.store();
    let mut submitted = HashSet::new();
    for i in 0..240 {
        submitted.insert(
            submit(&store, "job", if i % 2 == 0 { "a" } else { "b" })
                .await
                .id,
        );
    }
    let claimers: Vec<_> = (0..4)
        .map(|n| {
            let store = Store::postgres(&db.dsn, Some(2.0)).unwrap();
            tokio::spawn(async move {
                let worker = format!("w{n}");
                // Vary the shape: list of queues, or one queue.
                let queues: &[&str] = if n % 2 == 0 { &["a", "b"] } else { &["b", "a"] };
                let mut mine = Vec::new();
                loop {
                    let got = claim(&store, queues, &worker, 7).await;
                    if got.is_empty() {
                        break;
                    }
                    mine.extend(got.into_iter().map(|t| (t.id, t.worker_id.unwrap())));
                }
                store.close().await.unwrap();
                (worker, mine)
            })
        })
        .collect();
    let mut claimed = HashSet::new();
    for claimer in claimers {
        let (worker, mine) = claimer.await.unwrap();
        for (id, holder) in mine {
            assert_eq!(holder, worker);
            assert!(claimed.insert(id.clone()), "{id} was claimed twice");
        }
    }
    assert_eq!(claimed, submitted);
    let stats = store.stats(None).await.unwrap();
    assert_eq!(stats["a"][Status::Running as usize], 120);
    assert_eq!(stats["b"][Status::Running as usize], 120);
    store.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claims_follow_priority_then_age_and_filter_by_name() {
    let db = test_db!();
    let store = db.store();
    let low = submit(&store, "x", "q1").await;
    let high = store
        .submit(SubmitInput {
            priority: Some(5.0),
            ..submit_input("y", "q2")
        })
        .await
        .unwrap();
    let other = submit(&store, "z", "q1").await;
    let delayed = store
        .submit(SubmitInput {
            run_at_delay_ms: Some(3_600_000.0),
            ..submit_input("x", "q1")
        })
        .await
        .unwrap();
    assert!(delayed.run_at_ms >= delayed.created_at_ms + 3_600_000);

    let by_names = |names: Vec<&str>| ClaimRequest {
        names: Some(names.into_iter().map(String::from).collect()),
        ..request(&["q1", "q2"], "w1", 30_000)
    };
    assert!(store.claim(by_names(vec![]), 10).await.unwrap().is_empty());
    assert!(store
        .claim(by_names(vec!["none"]), 10)
        .await
        .unwrap()
        .is_empty());
    let one_name = store.claim(by_names(vec!["y"]), 10).await.unwrap();
    assert_eq!(ids(&one_name), [high.id.as_str()]);
    let claimed = store.claim(by_names(vec!["x", "z"]), 1).await.unwrap();
    assert_eq!(ids(&claimed), [low.id.as_str()]);
    let one_queue = claim(&store, &["q1"], "w1", 10).await;
    assert_eq!(ids(&one_queue), [other.id.as_str()]);
    assert_eq!(one_queue[0].attempt, 1);
    assert_eq!(one_queue[0].status, Status::Running);
    assert!(one_queue[0].lease_until_ms.unwrap() >= one_queue[0].updated_at_ms + 30_000);
    assert!(claim(&store, &["q1", "q2"], "w1", 10).await.is_empty());
    store.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expired_leases_are_recovered_by_the_next_claim_session() {
    let db = test_db!();
    let store = db.store();
    let task = store
        .submit(SubmitInput {
            max_attempts: Some(2.0),
            ..submit_input("job", "default")
        })
        .await
        .unwrap();
    let first = store
        .claim(request(&["default"], "w1", 1), 1)
        .await
        .unwrap();
    assert_eq!(ids(&first), [task.id.as_str()]);

    // Once the lease has run out, another worker's session recovers and claims it.
    let second = eventually("the first lease to be recovered", || async {
        let got = store
            .claim(request(&["default"], "w2", 1), 1)
            .await
            .unwrap();
        got.into_iter().next()
    })
    .await;
    assert_eq!((second.id.as_str(), second.attempt), (task.id.as_str(), 2));
    assert!(matches!(
        store.heartbeat(owned(&task, "w1"), 30_000).await,
        Err(Error::LostLease { .. })
    ));

    // Attempts are used up: recovery fails it with the protocol's envelope. A
    // claim for no names still runs recovery.
    let nothing = ClaimRequest {
        names: Some(Vec::new()),
        ..request(&["default"], "w3", 30_000)
    };
    let failed = eventually("the exhausted task to fail", || async {
        store.claim(nothing.clone(), 1).await.unwrap();
        let now = get(&store, &task.id).await;
        (now.status == Status::Failed).then_some(now)
    })
    .await;
    assert_eq!(
        parse(failed.error.as_deref().unwrap()),
        json!({"type": "LeaseExpired", "code": "lease_expired",
               "message": "task lease expired and max attempts reached",
               "retryable": false, "details": {}})
    );
    assert_eq!(failed.lease_until_ms, None);
    assert_eq!(failed.worker_id.as_deref(), Some("w2"));
    assert!(failed.completed_at_ms.is_some());

    // A cancel requested while running wins over the requeue.
    let flagged = submit(&store, "job", "default").await;
    store
        .claim(request(&["default"], "w4", 1), 1)
        .await
        .unwrap();
    let marked = store
        .cancel(Target::Id(flagged.id.clone()))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(marked.status, Status::Running);
    assert!(marked.cancel_requested_at_ms.is_some());
    eventually("the flagged task to end canceled", || async {
        store.claim(nothing.clone(), 1).await.unwrap();
        (get(&store, &flagged.id).await.status == Status::Canceled).then_some(())
    })
    .await;
    store.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn worker_writes_require_ownership() {
    let db = test_db!();
    let store = db.store();
    let task = submit(&store, "job", "default").await;
    let spare = submit(&store, "job", "default").await;
    let held = store
        .claim(request(&["default"], "w1", 5_000), 2)
        .await
        .unwrap();
    assert_eq!(held.len(), 2);
    let lease = get(&store, &task.id).await.lease_until_ms.unwrap();

    let beat = store.heartbeat(owned(&task, "w1"), 60_000).await.unwrap();
    assert!(beat.lease_until_ms.unwrap() > lease);
    assert!(matches!(
        store.heartbeat(owned(&task, "intruder"), 60_000).await,
        Err(Error::LostLease { task_id }) if task_id == task.id
    ));

    store.cancel(Target::Id(spare.id.clone())).await.unwrap();
    let mut beats = store
        .heartbeat_batch(
            vec![task.id.clone(), spare.id.clone(), "task_missing".into()],
            "w1".into(),
            60_000,
        )
        .await
        .unwrap();
    beats.sort();
    let mut expected = vec![(task.id.clone(), false), (spare.id.clone(), true)];
    expected.sort();
    assert_eq!(beats, expected);

    let progressed = store
        .progress(owned(&task, "w1"), Some(0.25), Some("a quarter".into()))
        .await
        .unwrap();
    assert_eq!(progressed.progress, Some(0.25));
    let kept = store
        .progress(owned(&task, "w1"), None, None)
        .await
        .unwrap();
    assert_eq!(
        (kept.progress, kept.message.as_deref()),
        (Some(0.25), Some("a quarter"))
    );

    // A retryable failure with attempts left re-queues after the delay and
    // clears the attempt's progress.
    let failed = store
        .finish(
            owned(&task, "w1"),
            Outcome::Fail {
                error: r#"{"type":"Error","code":"handler_error","message":"boom","retryable":true,"details":{}}"#.into(),
                retryable: true,
                delay_ms: 60_000,
                dead_letter: Default::default(),
            },
        )
        .await
        .unwrap();
    assert_eq!(failed.status, Status::Queued);
    assert_eq!(
        (failed.worker_id.as_deref(), failed.lease_until_ms),
        (None, None)
    );
    assert_eq!((failed.progress, failed.message.as_deref()), (None, None));
    assert!(failed.run_at_ms >= failed.updated_at_ms + 60_000);
    assert_eq!(
        parse(failed.error.as_deref().unwrap())["code"],
        "handler_error"
    );

    // The canceled-while-running task: complete loses to the cancel.
    let completed = store
        .finish(
            owned(&spare, "w1"),
            Outcome::Complete {
                result: Some("42".into()),
            },
        )
        .await
        .unwrap();
    assert_eq!(completed.status, Status::Canceled);
    assert_eq!(completed.result, None);
    assert_eq!(completed.lease_until_ms, None);
    assert!(matches!(
        store
            .finish(owned(&spare, "w1"), Outcome::Succeed { result: None })
            .await,
        Err(Error::LostLease { .. })
    ));
    store.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn raw_succeed_ignores_a_pending_cancel() {
    let db = test_db!();
    let store = db.store();
    let task = submit(&store, "job", "default").await;
    claim(&store, &["default"], "w1", 1).await;
    store.cancel(Target::Id(task.id.clone())).await.unwrap();
    let done = store
        .finish(
            owned(&task, "w1"),
            Outcome::Succeed {
                result: Some(r#"[1,"two"]"#.into()),
            },
        )
        .await
        .unwrap();
    assert_eq!(done.status, Status::Succeeded);
    assert_eq!(done.progress, Some(1.0));
    assert_eq!(parse(done.result.as_deref().unwrap()), json!([1, "two"]));
    store.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_columns_round_trip() {
    let db = test_db!();
    let store = db.store();
    let payload = json!({"text": "héllo \"wörld\" 🎉", "nested": {"list": [1, 2.5, null, true]}, "empty": {}});
    let metadata = json!({"tenant": "t-1"});
    let task = store
        .submit(SubmitInput {
            payload: Some(payload.to_string()),
            metadata: Some(metadata.to_string()),
            correlation_id: Some("c-1".into()),
            ..submit_input("job", "default")
        })
        .await
        .unwrap();
    let read = get(&store, &task.id).await;
    assert_eq!(parse(&read.payload), payload);
    assert_eq!(parse(&read.metadata), metadata);
    assert_eq!(
        (read.result.as_deref(), read.error.as_deref()),
        (None, None)
    );
    assert_eq!(read.root_id.as_deref(), Some(task.id.as_str()));
    let row: Value = serde_json::from_str(&read.to_json()).unwrap();
    assert_eq!(row["payload"], payload);

    // jsonb refuses NUL characters: the server's SQLSTATE comes through.
    match store
        .submit(SubmitInput {
            payload: Some(r#"{"bad":"\u0000"}"#.into()),
            ..submit_input("job", "default")
        })
        .await
    {
        Err(Error::Database { code, .. }) => assert_eq!(code, "22P05"),
        other => panic!("expected a database error, got {other:?}"),
    }
    store.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_reads_and_purge() {
    let db = test_db!();
    let store = db.store();
    let a = submit(&store, "alpha", "q1").await;
    let b = submit(&store, "beta", "q1").await;
    let c = submit(&store, "alpha", "q2").await;
    let keyed = submit_keyed(&store, "gamma", "purge-me", "reuse")
        .await
        .unwrap();

    let listed = store.list(ListInput::default()).await.unwrap();
    assert_eq!(listed.len(), 4);
    assert!(listed
        .windows(2)
        .all(|w| (w[0].created_at_ms, &w[0].id) >= (w[1].created_at_ms, &w[1].id)));
    let alphas = store
        .list(ListInput {
            name: Some("alpha".into()),
            queue: Some("q1".into()),
            ..ListInput::default()
        })
        .await
        .unwrap();
    assert_eq!(ids(&alphas), [a.id.as_str()]);
    let page = store
        .list(ListInput {
            limit: Some(2.0),
            offset: Some(1.0),
            ..ListInput::default()
        })
        .await
        .unwrap();
    assert_eq!(ids(&page), ids(&listed[1..3]));

    assert_eq!(store.queue_depth("q1".into(), 5.0).await.unwrap(), 3);
    assert_eq!(store.queue_depth("q1".into(), 2.0).await.unwrap(), 0);

    store.cancel(Target::Id(b.id.clone())).await.unwrap();
    store.cancel(Target::Id(keyed.id.clone())).await.unwrap();
    let stats = store.stats(None).await.unwrap();
    assert_eq!(stats["q1"], [1, 0, 0, 0, 1]);
    assert_eq!(stats["q2"], [1, 0, 0, 0, 0]);
    assert_eq!(stats["default"], [0, 0, 0, 0, 1]);

    // Nothing finished an hour ago; with no age limit both canceled rows go,
    // and the key goes with its task.
    assert!(store
        .purge(PurgeInput {
            older_than_ms: Some(3_600_000.0),
            ..PurgeInput::default()
        })
        .await
        .unwrap()
        .is_empty());
    let mut purged = store.purge(PurgeInput::default()).await.unwrap();
    purged.sort();
    let mut expected = vec![b.id.clone(), keyed.id.clone()];
    expected.sort();
    assert_eq!(purged, expected);
    assert!(store
        .get(Target::Key("purge-me".into()))
        .await
        .unwrap()
        .is_none());
    assert!(store.get(Target::Id(c.id.clone())).await.unwrap().is_some());
    store.close().await.unwrap();
}

/// Poll a future once so it registers its interest, without waiting on it.
async fn poll_once<F: Future + Unpin>(future: &mut F) -> Poll<F::Output> {
    std::future::poll_fn(|cx| Poll::Ready(std::pin::Pin::new(&mut *future).poll(cx))).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claim_wake_ends_early_when_work_arrives() {
    let db = test_db!();
    let (store, backend) = db.store_with_backend();
    store.connect().await.unwrap();
    wait_listening(&backend).await;

    let queues = vec!["wq".to_string()];
    let mut wake = pin!(store.claim_wake(&queues, store.wake_ticket(), LONG_SLEEP));
    assert!(poll_once(&mut wake).await.is_pending());
    let started = Instant::now();
    submit(&store, "job", "wq").await;
    tokio::time::timeout(PATIENCE, wake)
        .await
        .expect("the insert's notification ends the sleep");

    // A notification nobody waited for is kept for the next sleep on its queue.
    submit(&store, "job", "wq").await;
    eventually("the remembered notification", || async {
        tokio::time::timeout(
            Duration::from_millis(200),
            store.claim_wake(&queues, store.wake_ticket(), LONG_SLEEP),
        )
        .await
        .ok()
    })
    .await;
    assert!(started.elapsed() < LONG_SLEEP);

    // Sleeps on other queues still end by their timeout.
    tokio::time::timeout(
        PATIENCE,
        store.claim_wake(
            &["elsewhere".to_string()],
            store.wake_ticket(),
            Duration::from_millis(50),
        ),
    )
    .await
    .expect("a sleep ends by its timeout");
    store.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn task_done_wake_ends_early_when_the_task_finishes() {
    let db = test_db!();
    let (store, backend) = db.store_with_backend();
    let task = submit(&store, "job", "default").await;
    wait_listening(&backend).await;
    claim(&store, &["default"], "w1", 1).await;

    // Taken as a wait takes it, before the probe that decides to sleep.
    let probed = store.wake_ticket();
    let mut wake = pin!(store.task_done_wake(&task.id, probed, LONG_SLEEP));
    assert!(poll_once(&mut wake).await.is_pending());
    store
        .finish(owned(&task, "w1"), Outcome::Complete { result: None })
        .await
        .unwrap();
    tokio::time::timeout(PATIENCE, wake)
        .await
        .expect("the completion's notification ends the sleep");

    // A wait whose probe saw the task unfinished and which only now goes to
    // sleep: the notification already came, so the sleep ends at once
    // (docs/protocol.md, "Wakes (LISTEN/NOTIFY)"), not at its poll interval.
    tokio::time::timeout(PATIENCE, store.task_done_wake(&task.id, probed, LONG_SLEEP))
        .await
        .expect("a notification after the ticket ends the sleep at once");
    let mut later = pin!(store.task_done_wake(&task.id, store.wake_ticket(), LONG_SLEEP));
    assert!(
        poll_once(&mut later).await.is_pending(),
        "a ticket taken after the notification sleeps"
    );
    store.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_listener_comes_back_after_losing_its_connection() {
    let db = test_db!();
    let (store, backend) = db.store_with_backend();
    store.connect().await.unwrap();
    wait_listening(&backend).await;

    let queues = vec!["rq".to_string()];
    let mut wake = pin!(store.claim_wake(&queues, store.wake_ticket(), LONG_SLEEP));
    assert!(poll_once(&mut wake).await.is_pending());
    let killed = strings(
        &db.sql().await,
        "select pg_terminate_backend(pid)::text from pg_stat_activity \
         where datname = current_database() and query like 'listen cairnq_%'",
    )
    .await;
    assert_eq!(killed, ["true"]);
    tokio::time::timeout(PATIENCE, wake)
        .await
        .expect("losing the connection sends sleepers back to polling");

    wait_listening(&backend).await;
    // What was notified while no LISTEN was in place reached nobody: the
    // first wake after the new subscription is answered at once, so its
    // sleeper probes again.
    tokio::time::timeout(
        PATIENCE,
        store.claim_wake(&queues, store.wake_ticket(), LONG_SLEEP),
    )
    .await
    .expect("the new subscription sends a watched queue's sleeper back to its probe");
    let mut wake = pin!(store.claim_wake(&queues, store.wake_ticket(), LONG_SLEEP));
    assert!(poll_once(&mut wake).await.is_pending());
    submit(&store, "job", "rq").await;
    tokio::time::timeout(PATIENCE, wake)
        .await
        .expect("the new connection delivers notifications");
    store.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_ends_push_wakeups_and_operations_reconnect() {
    let db = test_db!();
    let (store, backend) = db.store_with_backend();
    let task = submit(&store, "job", "default").await;
    wait_listening(&backend).await;
    store.close().await.unwrap();
    assert!(!backend.listening());
    tokio::time::timeout(
        PATIENCE,
        store.claim_wake(
            &["default".to_string()],
            store.wake_ticket(),
            Duration::from_millis(50),
        ),
    )
    .await
    .expect("a sleep ends by its timeout");

    // The pool comes back on demand; push wakeups stay off.
    assert_eq!(get(&store, &task.id).await.id, task.id);
    assert!(!backend.listening());
    store.close().await.unwrap();
}

/// A connect still in flight when `close()` is called publishes nothing: it
/// fails saying so, starts no LISTEN and closes the pool it opened; the
/// store connects again on a later call.
/// `close()` never waits for a connect in flight: against a server that
/// accepts and never answers, it returns while the connect still waits;
/// that connect, once the server hangs up, fails saying the store closed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_returns_while_a_connect_waits_on_a_silent_server() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let backend = PostgresBackend::new(&format!("postgres://cairnq@127.0.0.1:{port}/silent"), None);
    let store = Store::new(Arc::new(backend.unwrap()));
    let connecting = tokio::spawn({
        let store = store.clone();
        async move { store.connect().await }
    });
    let (socket, _) = listener.accept().await.unwrap();
    tokio::time::timeout(PATIENCE, store.close())
        .await
        .expect("close() waited for the connect")
        .unwrap();
    assert!(!connecting.is_finished(), "the server never answered");
    drop(socket);
    match connecting.await.unwrap() {
        Err(Error::Connection(message)) => {
            assert_eq!(message, "store was closed while connecting")
        }
        other => panic!("expected the connect to be refused, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_closed_while_connecting_publishes_nothing() {
    let db = test_db!();
    let (store, backend) = db.store_with_backend();
    // Polled in order: the connect is under way when the close arrives.
    let (connected, closed) = tokio::join!(store.connect(), store.close());
    closed.unwrap();
    match connected {
        Err(Error::Connection(message)) => {
            assert_eq!(message, "store was closed while connecting")
        }
        other => panic!("expected the connect to be refused, got {other:?}"),
    }
    let sql = db.sql().await;
    let others = format!(
        "select count(*)::text from pg_stat_activity where datname = '{}' and pid <> pg_backend_pid()",
        db.name
    );
    eventually("the connect's sessions to end", || async {
        (strings(&sql, &others).await == ["0"]).then_some(())
    })
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!backend.listening(), "no LISTEN after the close");
    assert_eq!(strings(&sql, &others).await, ["0"]);

    store.connect().await.unwrap();
    wait_listening(&backend).await;
    store.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connection_failures_never_show_the_password() {
    let db = test_db!();
    let secret = "not-the-password-4711";
    let wrong_password =
        Store::postgres(&dsn_for(&db.server, &db.name, Some(secret)), None).unwrap();
    match wrong_password.connect().await {
        Err(Error::Connection(message)) => {
            assert!(
                message.contains("password authentication failed"),
                "{message}"
            );
            assert!(!message.contains(secret), "{message}");
        }
        other => panic!("expected a connection error, got {other:?}"),
    }
    // The next operation tries again, and fails the same way.
    assert!(matches!(
        wrong_password.get(Target::Id("task_x".into())).await,
        Err(Error::Connection(_))
    ));

    let nowhere = Store::postgres(
        &format!("postgres://cairnq:{secret}@127.0.0.1:1/nothing?connect_timeout=5"),
        None,
    )
    .unwrap();
    match nowhere.connect().await {
        Err(Error::Connection(message)) => {
            assert!(message.contains("127.0.0.1:1"), "{message}");
            assert!(!message.contains(secret), "{message}");
        }
        other => panic!("expected a connection error, got {other:?}"),
    }

    assert!(matches!(
        Store::postgres(&db.dsn, Some(0.0)),
        Err(Error::Invalid(message)) if message == "max must be an integer >= 1, got 0"
    ));
}

/// A claim that holds the queued row when a debounced submit arrives wins:
/// the submit waits on the row lock, finds the row running and makes a
/// follow-up instead of postponing one that has started.
#[tokio::test(flavor = "multi_thread")]
async fn a_debounce_racing_a_claim_makes_a_new_task() {
    let Some(db) = TestDb::create().await else {
        return;
    };
    let store = db.store();
    let submit = |payload: &str| SubmitInput {
        name: "save".into(),
        key: Some("doc".into()),
        payload: Some(payload.into()),
        debounce_ms: Some(60_000.0),
        ..SubmitInput::default()
    };
    let queued = store.submit(submit(r#"{"v":1}"#)).await.unwrap();
    let mut raw = db.sql().await;
    let claim = raw.transaction().await.unwrap();
    claim
        .execute(
            "update cairnq_tasks set status = 'running', attempt = 1, worker_id = 'w', \
             lease_until_ms = run_at_ms + 60000 where id = $1",
            &[&queued.id],
        )
        .await
        .unwrap();
    let racing = tokio::spawn({
        let store = store.clone();
        async move { store.submit(submit(r#"{"v":2}"#)).await }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!racing.is_finished(), "the submit waits on the claimed row");
    claim.commit().await.unwrap();
    let answered = racing.await.unwrap().unwrap();
    assert_ne!(answered.id, queued.id);
    assert_eq!(answered.status, Status::Queued);
    assert_eq!(
        answered.run_at_ms - answered.created_at_ms,
        cairnq_core::followups::window::HELD_BACK_DELAY_MS
    );
    let first = store
        .get(Target::Id(queued.id.clone()))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(first.status, Status::Running);
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&first.payload).unwrap(),
        serde_json::json!({"v": 1})
    );
    let keyed = store.get(Target::Key("doc".into())).await.unwrap().unwrap();
    assert_eq!(keyed.id, answered.id);
    store.close().await.unwrap();
}

/// libpq's sslmode meanings: `require` encrypts without checking the
/// certificate, `disable` never encrypts, `verify-full` refuses a certificate
/// no trusted root signed. `scripts/test/postgres.sh` serves a self-signed one.
#[tokio::test(flavor = "multi_thread")]
async fn sslmode_follows_libpq() {
    let Some(db) = TestDb::create().await else {
        return;
    };
    let encrypted_sessions = |ssl: bool| {
        let name = db.name.clone();
        let admin = db.server_dsn.clone();
        async move {
            let admin = connect_raw(&admin).await;
            let row = admin
                .query_one(
                    "select count(*) from pg_stat_ssl s join pg_stat_activity a using (pid) \
                     where a.datname = $1 and s.ssl = $2",
                    &[&name, &ssl],
                )
                .await
                .unwrap();
            row.get::<_, i64>(0)
        }
    };
    for (mode, ssl) in [("require", true), ("disable", false)] {
        let store = Store::postgres(&format!("{} sslmode={mode}", db.dsn), Some(1.0)).unwrap();
        store.connect().await.unwrap();
        assert!(
            encrypted_sessions(ssl).await >= 1,
            "no session with ssl={ssl} for sslmode={mode}"
        );
        store.close().await.unwrap();
    }
    let verified = Store::postgres(&format!("{} sslmode=verify-full", db.dsn), None).unwrap();
    match verified.connect().await {
        Err(Error::Connection(message)) => {
            assert!(
                message.contains("certificate") || message.contains("Certificate"),
                "{message}"
            )
        }
        other => panic!("a self-signed certificate passed verify-full: {other:?}"),
    }
}

/// `OpenMode::Existing`: an empty database (no cairnq tables) is refused with
/// a typed error and nothing is created in it; a cairnq database opens and
/// reads without a migration being applied.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn existing_mode_refuses_a_foreign_database_and_never_migrates() {
    use cairnq_core::error::NOT_CAIRNQ_CODE;
    use cairnq_core::store::OpenMode;
    let db = test_db!();
    let tables = |client: Client| async move {
        client
            .query_one(
                "select count(*) from pg_tables where schemaname not in ('pg_catalog', 'information_schema')",
                &[],
            )
            .await
            .unwrap()
            .get::<_, i64>(0)
    };
    let store = Store::postgres_with(&db.dsn, Some(1.0), None, OpenMode::Existing).unwrap();
    match store.stats(None).await {
        Err(Error::NoCairnqDatabase { code, message }) => {
            assert_eq!(code, NOT_CAIRNQ_CODE);
            assert!(message.contains("is not a cairnq database"), "{message}");
            // Where the connection looked, and no installation elsewhere.
            assert!(
                message.contains("schema \"public\" (its search_path) has no cairnq_meta")
                    && !message.contains("installed in"),
                "{message}"
            );
            assert!(!message.contains("postgres:postgres"), "{message}");
        }
        other => panic!("expected NoCairnqDatabase, got {other:?}"),
    }
    store.close().await.unwrap();
    assert_eq!(
        tables(db.sql().await).await,
        0,
        "the refused open created tables"
    );

    let made = db.store();
    let task = submit(&made, "greet", "default").await;
    made.close().await.unwrap();
    let client = db.sql().await;
    let last: String = client
        .query_one(
            "select name from cairnq_migrations order by name desc limit 1",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    client
        .execute("delete from cairnq_migrations where name = $1", &[&last])
        .await
        .unwrap();
    let store = Store::postgres_with(&db.dsn, Some(1.0), None, OpenMode::Existing).unwrap();
    let listed = store.list(ListInput::default()).await.unwrap();
    assert_eq!(
        listed.iter().map(|t| t.id.clone()).collect::<Vec<_>>(),
        [task.id]
    );
    store.close().await.unwrap();
    let reapplied: bool = client
        .query_one(
            "select exists (select 1 from cairnq_migrations where name = $1)",
            &[&last],
        )
        .await
        .unwrap()
        .get(0);
    assert!(!reapplied, "an Existing open applied {last}");
}

/// A connection to `db`, migrated, with a few thousand rows spread over
/// queues, names and statuses, analyzed, and sequential scans priced out: a
/// small table then shows which index a statement's predicates make usable.
async fn planning_connection(db: &TestDb) -> Client {
    let store = db.store();
    store.connect().await.unwrap();
    store.close().await.unwrap();
    let sql = db.sql().await;
    sql.batch_execute(
        "insert into cairnq_tasks (id, name, queue, status, payload, run_at_ms, created_at_ms,
                                   updated_at_ms, completed_at_ms, lease_until_ms, root_id, correlation_id)
         select format('task_%s', lpad(i::text, 5, '0')), 'name' || (i % 20), 'q' || (i % 8),
                (array['queued', 'running', 'succeeded', 'failed', 'canceled'])[i % 5 + 1],
                '{}', i, i, i,
                case when i % 5 >= 2 then i end,
                case when i % 5 = 1 then i end,
                format('task_%s', lpad((i / 4)::text, 5, '0')), 'c' || (i % 100)
         from generate_series(0, 3999) as i;
         analyze cairnq_tasks;
         set enable_seqscan = off;",
    )
    .await
    .unwrap();
    sql
}

/// docs/protocol.md, "Statements": each statement can reach the index it is
/// written for, and no filtered call needs the table.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_statement_reaches_its_index() {
    use cairnq_core::protocol::{specialize, POSTGRES as SQL};
    use tokio_postgres::types::ToSql;

    let db = test_db!();
    let sql = planning_connection(&db).await;

    let queues = vec!["q1".to_string(), "q2".to_string()];
    let names = Some(vec!["name1".to_string(), "name2".to_string()]);
    let no_names: Option<Vec<String>> = None;
    let (queue, name, worker) = ("q1".to_string(), "name1".to_string(), "w".to_string());
    let (lease, limit, older) = (30_000_i64, 10_i64, 0_i64);
    let none: Option<String> = None;
    let (some_queue, some_status, some_name) = (
        Some(queue.clone()),
        Some("failed".to_string()),
        Some(name.clone()),
    );
    let list = |set: &[&str]| specialize(SQL.list, set);
    let purge = |set: &[&str]| specialize(SQL.purge, set);
    // Filtered purges walk one of the completion indexes; which one is the
    // planner's cost call on Postgres (the SQLite test pins the choice).
    const COMPLETION: &str = "cairnq_tasks_completed_idx|cairnq_tasks_status_completed_idx|cairnq_tasks_queue_completed_idx";
    // Each entry names an index the plan must use; `a|b` accepts either.
    type Check<'a> = (&'a str, &'a str, Vec<&'a (dyn ToSql + Sync)>, &'a [&'a str]);
    let checks: Vec<Check<'_>> = vec![
        (
            "claim_one_queue",
            SQL.claim_one_queue,
            vec![&queue, &no_names, &worker, &lease, &limit],
            &["cairnq_tasks_claim_idx"],
        ),
        (
            "claim_one_queue_one_name",
            SQL.claim_one_queue_one_name,
            vec![&queue, &name, &worker, &lease, &limit],
            &["cairnq_tasks_claim_name_idx"],
        ),
        (
            "claim_one_name",
            SQL.claim_one_name,
            vec![&queues, &name, &worker, &lease, &limit],
            &["cairnq_tasks_claim_name_idx"],
        ),
        (
            "claim",
            SQL.claim,
            vec![&queues, &names, &worker, &lease, &limit],
            &["cairnq_tasks_claim"],
        ),
        (
            "claimable_probe",
            SQL.claimable_probe,
            vec![&queues, &no_names],
            &["cairnq_tasks_claim", "cairnq_tasks_lease_idx"],
        ),
        (
            "claimable_probe names",
            specialize(SQL.claimable_probe, &["$2::text[]"]),
            vec![&queues, &names],
            &["cairnq_tasks_claim", "cairnq_tasks_lease_idx"],
        ),
        (
            "recover_leases",
            SQL.recover_leases,
            vec![],
            &["cairnq_tasks_lease_idx"],
        ),
        (
            "get_status",
            SQL.get_status,
            vec![&name],
            &["cairnq_tasks_pkey"],
        ),
        (
            "get_status_by_key",
            SQL.get_status_by_key,
            vec![&name],
            &["cairnq_task_keys_pkey", "cairnq_tasks_pkey"],
        ),
        (
            "queue_depth",
            SQL.queue_depth,
            vec![&queue, &limit],
            &["cairnq_tasks_claim"],
        ),
        (
            "oldest_due",
            SQL.oldest_due,
            vec![],
            // Any index with the status first: the planner's cost call.
            &["cairnq_tasks_claim|cairnq_tasks_status_idx|cairnq_tasks_status_completed_idx"],
        ),
        (
            "purge",
            SQL.purge,
            vec![&older, &none, &none, &none, &limit],
            &["cairnq_tasks_completed_idx"],
        ),
        (
            "purge status",
            purge(&["$3::text"]),
            vec![&older, &none, &some_status, &none, &limit],
            &[COMPLETION],
        ),
        (
            "purge queue",
            purge(&["$2::text"]),
            vec![&older, &some_queue, &none, &none, &limit],
            &[COMPLETION],
        ),
        (
            "purge queue+status",
            purge(&["$2::text", "$3::text"]),
            vec![&older, &some_queue, &some_status, &none, &limit],
            &[COMPLETION],
        ),
        (
            "stats queue",
            specialize(SQL.stats, &["$1::text"]),
            vec![&some_queue],
            &["cairnq_tasks_claim"],
        ),
        (
            "list queue",
            list(&["$2::text"]),
            vec![&none, &some_queue, &none, &none, &none, &limit, &older],
            &["cairnq_tasks_claim"],
        ),
        (
            "list status",
            list(&["$1::text"]),
            vec![&some_status, &none, &none, &none, &none, &limit, &older],
            &["cairnq_tasks_status_completed_idx"],
        ),
        (
            "list name",
            list(&["$3::text"]),
            vec![&none, &none, &some_name, &none, &none, &limit, &older],
            &["cairnq_tasks_name_idx"],
        ),
        (
            "list root_id",
            list(&["$4::text"]),
            vec![&none, &none, &none, &some_name, &none, &limit, &older],
            &["cairnq_tasks_root_idx"],
        ),
        (
            "list correlation_id",
            list(&["$5::text"]),
            vec![&none, &none, &none, &none, &some_name, &limit, &older],
            &["cairnq_tasks_correlation_idx"],
        ),
    ];
    for (label, statement, params, indexes) in checks {
        let plan: Vec<String> = sql
            .query(&format!("explain (costs off) {statement}"), &params)
            .await
            .unwrap_or_else(|e| panic!("{label}: {e}"))
            .iter()
            .map(|row| row.get(0))
            .collect();
        let plan = plan.join("\n");
        for index in indexes {
            assert!(
                index.split('|').any(|one| plan.contains(one)),
                "{label} does not reach {index}:\n{plan}"
            );
        }
        assert!(
            !plan.contains("Seq Scan on cairnq_tasks"),
            "{label} scans the table:\n{plan}"
        );
    }
}

/// Statistics taken while every task was queued, then a burst of finishing:
/// the planner believes almost nothing is purgeable. Left to itself it reads
/// every finished row and sorts them for each batch; in `purge_in_order`'s
/// transaction each filter shape walks a completion index in order instead.
#[tokio::test]
async fn purge_walks_in_order_under_stale_statistics() {
    use cairnq_core::protocol::{specialize, POSTGRES as SQL, POSTGRES_PURGE_IN_ORDER};
    use tokio_postgres::types::ToSql;

    let db = test_db!();
    let store = db.store();
    store.connect().await.unwrap();
    store.close().await.unwrap();
    let mut sql = db.sql().await;
    sql.batch_execute(
        "insert into cairnq_tasks (id, name, queue, status, payload, run_at_ms, created_at_ms, updated_at_ms)
         select format('task_%s', lpad(i::text, 5, '0')), 'job', 'default', 'queued', '{}', i, i, i
         from generate_series(0, 19999) as i;
         alter table cairnq_tasks set (autovacuum_enabled = false);
         analyze cairnq_tasks;
         update cairnq_tasks set status = 'canceled', completed_at_ms = run_at_ms;",
    )
    .await
    .unwrap();

    let (limit, older) = (1000_i64, 0_i64);
    let none: Option<String> = None;
    let (queue, status) = (Some("default".to_string()), Some("canceled".to_string()));
    let shapes: Vec<(&str, &str, Vec<&(dyn ToSql + Sync)>)> = vec![
        (
            "unfiltered",
            SQL.purge,
            vec![&older, &none, &none, &none, &limit],
        ),
        (
            "queue",
            specialize(SQL.purge, &["$2::text"]),
            vec![&older, &queue, &none, &none, &limit],
        ),
        (
            "status",
            specialize(SQL.purge, &["$3::text"]),
            vec![&older, &none, &status, &none, &limit],
        ),
    ];
    let plan = |rows: Vec<tokio_postgres::Row>| {
        rows.iter()
            .map(|row| row.get::<_, String>(0))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let (_, unfiltered, params) = &shapes[0];
    let unsteered = plan(
        sql.query(&format!("explain (costs off) {unfiltered}"), params)
            .await
            .unwrap(),
    );
    assert!(
        unsteered.contains("Sort"),
        "the statistics no longer mislead the planner, so this test proves nothing:\n{unsteered}"
    );
    for (label, statement, params) in &shapes {
        let tx = sql.transaction().await.unwrap();
        tx.batch_execute(POSTGRES_PURGE_IN_ORDER).await.unwrap();
        let steered = plan(
            tx.query(&format!("explain (costs off) {statement}"), params)
                .await
                .unwrap(),
        );
        tx.rollback().await.unwrap();
        assert!(!steered.contains("Sort"), "{label} sorts:\n{steered}");
        assert!(steered.contains("completed_idx"), "{label}:\n{steered}");
    }
    let store = db.store();
    let mut purged = 0;
    loop {
        let batch = store
            .purge(PurgeInput {
                older_than_ms: Some(0.0),
                limit: Some(1000.0),
                ..Default::default()
            })
            .await
            .unwrap();
        purged += batch.len();
        if batch.len() < 1000 {
            break;
        }
    }
    assert_eq!(purged, 20_000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schedules_table_appears_on_first_use_with_its_ledger_row() {
    let db = test_db!();
    let store = db.store();
    common::schedules::the_table_appears_on_first_use(store.clone()).await;
    store.close().await.unwrap();
    let ledger: Vec<String> = db
        .sql()
        .await
        .query(
            "select name from cairnq_migrations where name not like '00%'",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    assert_eq!(
        ledger,
        ["node_schedules_0001.sql", "node_schedules_0002.sql"]
    );
}

/// 1000 due schedules another program wrote with a cron nobody can read do
/// not keep a healthy one from firing (docs/security.md, "Rows written by
/// others").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schedules_unfirable_rows_never_starve_a_healthy_one() {
    let db = test_db!();
    let store = db.store();
    common::schedules::a_healthy_schedule_among_unfirable_ones(&store).await;
    let insert = format!(
        "insert into cairnq_schedules (name, task_name, cron, tz, queue, payload, metadata, priority,
                     max_attempts, catch_up, paused, next_run_at_ms, last_run_at_ms, created_at_ms,
                     updated_at_ms)
                 select 'bad-' || i, 'report', '{}', 'UTC', 'default',
             '{{}}', '{{}}', 0, 3, 'latest', 0, {}, null, 0, 0 from generate_series(1, 1000) as i",
        common::schedules::UNFIRABLE_CRON,
        common::schedules::T0
    );
    db.sql().await.batch_execute(&insert).await.unwrap();
    common::schedules::the_healthy_schedule_fires(&store).await;
    store.close().await.unwrap();
}

/// The steps table's ledger row: a name other SDKs ignore (the shared checks
/// of `common::steps` run as `shared::steps`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn steps_the_ledger_records_the_steps_table() {
    let db = test_db!();
    let store = db.store();
    common::steps::the_table_appears_on_first_use_and_goes_with_purged_tasks(store.clone()).await;
    store.close().await.unwrap();
    let ledger: Vec<String> = db
        .sql()
        .await
        .query(
            "select name from cairnq_migrations where name not like '00%'",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    assert_eq!(ledger, vec!["node_steps_0001.sql".to_string()]);
}

/// Flow control (docs/protocol.md, "Flow control tables"): the tables' first
/// use, refused input leaving them absent, claimers of two pools racing for
/// the same slots and windows, and the plans of the flow statements (the
/// other shared checks run as `shared::flow`).
mod flow {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use super::common::flow;
    use super::{planning_connection, TestDb};
    use cairnq_core::protocol::flow::{LEDGER_NAME, POSTGRES as FLOW, SHARED_KEYS_LEDGER_NAME};
    use cairnq_core::store::{HeldTask, Outcome};
    use cairnq_core::{Store, Task};

    /// The tables named `cairnq_flow…` and the ledger rows of this SDK's own tables.
    async fn flow_tables_and_ledger(db: &TestDb) -> (Vec<String>, Vec<String>) {
        let sql = db.sql().await;
        let read = |rows: Vec<tokio_postgres::Row>| -> Vec<String> {
            rows.iter().map(|row| row.get(0)).collect()
        };
        (
            read(sql
                .query("select tablename::text from pg_tables where tablename like 'cairnq_flow%' order by 1", &[])
                .await
                .unwrap()),
            read(sql
                .query("select name from cairnq_migrations where name not like '00%'", &[])
                .await
                .unwrap()),
        )
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_latest_declaration_wins_and_the_tables_appear_with_it() {
        let db = test_db!();
        let store = db.store();
        store.connect().await.unwrap();
        assert_eq!(flow_tables_and_ledger(&db).await, (vec![], vec![]));
        flow::the_latest_declaration_wins(store.clone()).await;
        store.close().await.unwrap();
        assert_eq!(
            flow_tables_and_ledger(&db).await,
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

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn bad_flow_input_is_refused_and_nothing_is_written() {
        let db = test_db!();
        let store = db.store();
        flow::bad_input_is_refused_and_nothing_is_written(store.clone()).await;
        store.close().await.unwrap();
        assert_eq!(flow_tables_and_ledger(&db).await, (vec![], vec![]));
    }

    /// A draw in flight elsewhere holds the head of the queue (its rows and
    /// its groups' locks, as its transaction does until it commits): another
    /// draw reads past those rows and claims the groups behind them, rather
    /// than trying the same groups and coming back empty.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_draw_reads_past_the_rows_another_draw_holds() {
        let db = test_db!();
        let store = db.store();
        flow::declare(&store, "w", "export", flow::group_concurrency(1)).await;
        let mut tasks = Vec::new();
        for group in ["g0", "g1", "g2", "g3"] {
            tasks.push(flow::submit(&store, "export", Some(group)).await);
        }
        let other = db.sql().await;
        other.batch_execute("begin").await.unwrap();
        let held = other
            .query(
                "select id from cairnq_tasks where id = any($1) for update",
                &[&vec![tasks[0].id.clone(), tasks[1].id.clone()]],
            )
            .await
            .unwrap();
        assert_eq!(held.len(), 2);
        for group in ["g0", "g1"] {
            other
                .query(
                    "select pg_advisory_xact_lock(hashtextextended('cairnq.flow:' || jsonb_build_array('export', $1::text)::text, 1))",
                    &[&group],
                )
                .await
                .unwrap();
        }
        let (claimed, _) = flow::draw(&store, "export", 2).await;
        let mut claimed: Vec<&str> = claimed.iter().map(|t| t.id.as_str()).collect();
        claimed.sort_unstable();
        let mut behind = vec![tasks[2].id.as_str(), tasks[3].id.as_str()];
        behind.sort_unstable();
        assert_eq!(claimed, behind, "the groups behind the held head");
        other.batch_execute("rollback").await.unwrap();
        store.close().await.unwrap();
    }

    /// Six claimers on two pools (as two processes) draw `name` until `total`
    /// tasks have run, each task held a few milliseconds, then completed.
    /// Answers each task as claimed and as finished.
    async fn race(stores: [Arc<Store>; 2], name: &'static str, total: usize) -> Vec<(Task, Task)> {
        let ran = Arc::new(Mutex::new(Vec::new()));
        let mut claimers = Vec::new();
        for i in 0..6 {
            let (store, ran) = (stores[i % 2].clone(), ran.clone());
            claimers.push(tokio::spawn(async move {
                let worker = format!("w{i}");
                let deadline = std::time::Instant::now() + Duration::from_secs(60);
                while ran.lock().unwrap().len() < total {
                    assert!(std::time::Instant::now() < deadline, "the race never ended");
                    let (tasks, _) =
                        flow::draw_with(&store, flow::request(&worker, 30_000), name, 3).await;
                    tokio::time::sleep(Duration::from_millis(3)).await;
                    for task in tasks {
                        let owned = HeldTask {
                            task_id: task.id.clone(),
                            worker_id: worker.clone(),
                        };
                        let done = store
                            .finish(owned, Outcome::Complete { result: None })
                            .await
                            .unwrap();
                        ran.lock().unwrap().push((task, done));
                    }
                }
            }));
        }
        for claimer in claimers {
            claimer.await.unwrap();
        }
        let ran = ran.lock().unwrap().clone();
        ran
    }

    /// The last slot of a group is taken by one claimer only, whatever the
    /// interleaving: by the database's own times, each group's tasks ran one
    /// at a time.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn claimers_of_two_pools_never_share_a_group_slot() {
        let db = test_db!();
        let stores = [db.store(), db.store()];
        flow::declare(&stores[0], "w", "export", flow::group_concurrency(1)).await;
        for i in 0..60 {
            let group = format!("g{}", i % 4);
            flow::submit(&stores[0], "export", Some(&group)).await;
        }
        let ran = race(stores.clone(), "export", 60).await;
        assert_eq!(ran.len(), 60);
        let mut by_group: HashMap<String, Vec<(i64, i64)>> = HashMap::new();
        for (claimed, done) in &ran {
            let metadata: serde_json::Value = serde_json::from_str(&claimed.metadata).unwrap();
            let group = metadata["cairnq.group"].as_str().unwrap().to_string();
            let ended = done.completed_at_ms.expect("completed");
            by_group
                .entry(group)
                .or_default()
                .push((claimed.updated_at_ms, ended));
        }
        for (group, mut runs) in by_group {
            runs.sort_unstable();
            for pair in runs.windows(2) {
                assert!(pair[1].0 >= pair[0].1, "{group} ran two at once: {runs:?}");
            }
        }
        for store in stores {
            store.close().await.unwrap();
        }
    }

    /// Claimers of two pools together start at most `max` tasks in any window.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn claimers_of_two_pools_keep_one_window() {
        let db = test_db!();
        let stores = [db.store(), db.store()];
        flow::declare(&stores[0], "w", "embed", flow::rate(4, 400, false)).await;
        for _ in 0..16 {
            flow::submit(&stores[0], "embed", None).await;
        }
        let ran = race(stores.clone(), "embed", 16).await;
        let mut starts: Vec<i64> = ran.iter().map(|(t, _)| t.updated_at_ms).collect();
        starts.sort_unstable();
        for (i, start) in starts.iter().enumerate() {
            let inside = starts[i..].iter().filter(|s| **s < start + 400).count();
            assert!(inside <= 4, "{starts:?}");
        }
        for store in stores {
            store.close().await.unwrap();
        }
    }

    /// A chunk's scan and its locks reach the per-name claim index, its counts
    /// the partial lease index for the running rows, its claim the primary
    /// key, the due count the claim index; none reads the table. (Whether a
    /// walk sorts is the planner's cost call on a table this small; the
    /// SQLite test pins the ordered walk.)
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_flow_statements_reach_their_indexes() {
        use cairnq_core::protocol::flow::{
            POSTGRES_CLAIM_IDS, POSTGRES_DRAW_SCAN, POSTGRES_GROUP_RUNNING, POSTGRES_GROUP_STARTS,
            POSTGRES_LIMITS_AND_LOCKS, POSTGRES_SHARED_KEYS,
        };
        use cairnq_core::protocol::with_literal_limit;
        use tokio_postgres::types::ToSql;

        let db = test_db!();
        let sql = planning_connection(&db).await;
        sql.batch_execute(FLOW.migration.sql).await.unwrap();
        sql.batch_execute(POSTGRES_SHARED_KEYS.sql).await.unwrap();
        let (queue, name, now, rows, limit) = (
            "q1".to_string(),
            "name1".to_string(),
            10_000_i64,
            32_i64,
            10_i64,
        );
        let held = vec!["g".to_string()];
        let ids = vec!["a".to_string(), "b".to_string()];
        let (no, since) = (false, 0_i64);
        let (worker, lease) = ("w".to_string(), 30_000_i64);
        let own_budget = 0_i64;
        type Check<'a> = (&'a str, &'a str, Vec<&'a (dyn ToSql + Sync)>, &'a str);
        let groups = vec!["g".to_string()];
        let checks: Vec<Check<'_>> = vec![
            (
                "draw_scan",
                with_literal_limit(POSTGRES_DRAW_SCAN, "$4", rows),
                vec![&queue, &name, &now],
                "cairnq_tasks_claim_name_idx",
            ),
            (
                "group_running",
                POSTGRES_GROUP_RUNNING,
                vec![&name],
                "cairnq_tasks_lease_idx",
            ),
            (
                "group_starts",
                POSTGRES_GROUP_STARTS,
                vec![&groups, &name, &own_budget, &since],
                "cairnq_flow_starts_budget_idx",
            ),
            (
                "claim_ids",
                POSTGRES_CLAIM_IDS,
                vec![&ids, &worker, &lease, &no, &no, &name, &own_budget],
                "cairnq_tasks_pkey",
            ),
            (
                "limits_and_locks",
                with_literal_limit(POSTGRES_LIMITS_AND_LOCKS, "$5", rows),
                vec![&queue, &name, &limit, &held],
                "cairnq_tasks_claim_name_idx",
            ),
            (
                "due_count",
                FLOW.due_count,
                vec![&queue, &name, &now, &limit],
                "cairnq_tasks_claim_name_idx",
            ),
        ];
        for (label, statement, params, index) in checks {
            let plan: Vec<String> = sql
                .query(&format!("explain (costs off) {statement}"), &params)
                .await
                .unwrap_or_else(|e| panic!("{label}: {e}"))
                .iter()
                .map(|row| row.get(0))
                .collect();
            let plan = plan.join("\n");
            assert!(
                plan.contains(index),
                "{label} does not reach {index}:\n{plan}"
            );
            assert!(
                !plan.contains("Seq Scan on cairnq_tasks"),
                "{label} scans the table:\n{plan}"
            );
        }
    }
}

/// A database whose events tables an earlier version made (the per-row
/// triggers of `node_events_0001.sql`) gets the per-statement ones of
/// `node_events_0002.sql` from its next subscription: the events recorded
/// before stay readable, later ones are recorded once each, in order, and a
/// heartbeat records none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_earlier_events_install_moves_to_per_statement_triggers() {
    use cairnq_core::events::{EventsOptions, Subscription};
    use cairnq_core::protocol::events::{LEDGER_NAME, POSTGRES as EVENTS};

    let db = test_db!();
    let store = db.store();
    let before = submit(&store, "before", "default").await;
    let sql = db.sql().await;
    sql.batch_execute(EVENTS.migration.sql).await.unwrap();
    sql.execute(
        "insert into cairnq_migrations (name, applied_at_ms) values ($1, 0)",
        &[&LEDGER_NAME],
    )
    .await
    .unwrap();
    store.cancel(Target::Id(before.id.clone())).await.unwrap();
    assert!(!store.backend().events_installed().await.unwrap());

    let options = EventsOptions::read(r#"{"after": "0"}"#).unwrap();
    let subscription = Subscription::open(store.clone(), options).await.unwrap();
    let triggers = strings(
        &sql,
        "select tgname::text from pg_trigger where tgrelid = 'cairnq_tasks'::regclass \
         and tgname::text like 'cairnq_events%' order by 1",
    )
    .await;
    assert_eq!(
        triggers,
        [
            "cairnq_events_on_insert",
            "cairnq_events_on_running",
            "cairnq_events_on_update"
        ]
    );
    let names: Vec<String> = ledger(&sql).await.into_iter().map(|(n, _)| n).collect();
    for applied in ["node_events_0002.sql", "node_events_0003.sql"] {
        assert!(names.contains(&applied.to_string()), "{names:?}");
    }

    let a = submit(&store, "a", "default").await;
    let b = submit(&store, "b", "default").await;
    let claimed = claim(&store, &["default"], "w1", 2).await;
    assert_eq!(claimed.len(), 2);
    store.heartbeat(owned(&a, "w1"), 30_000).await.unwrap();
    store
        .progress(owned(&a, "w1"), Some(0.5), Some("half".into()))
        .await
        .unwrap();
    for task in [&a, &b] {
        let done = Outcome::Complete {
            result: Some(r#"{"ok":true}"#.into()),
        };
        store.finish(owned(task, "w1"), done).await.unwrap();
    }

    let mut events: Vec<Value> = Vec::new();
    while events.len() < 8 {
        let page = tokio::time::timeout(PATIENCE, subscription.next_page())
            .await
            .unwrap_or_else(|_| panic!("8 events in time, got {events:?}"))
            .unwrap()
            .expect("open");
        events.extend(serde_json::from_str::<Vec<Value>>(&page).unwrap());
    }
    let kinds = |id: &str| -> Vec<&str> {
        events
            .iter()
            .filter(|e| e["taskId"] == id)
            .map(|e| e["kind"].as_str().unwrap())
            .collect()
    };
    assert_eq!(kinds(&before.id), ["canceled"], "{events:?}");
    assert_eq!(kinds(&a.id), ["queued", "started", "progress", "succeeded"]);
    assert_eq!(kinds(&b.id), ["queued", "started", "succeeded"]);
    assert_eq!(events.len(), 8, "{events:?}");
    let succeeded = events
        .iter()
        .find(|e| e["taskId"] == b.id.as_str() && e["kind"] == "succeeded")
        .unwrap();
    assert_eq!(succeeded["result"], json!({"ok": true}));
    let none = tokio::time::timeout(Duration::from_millis(200), subscription.next_page()).await;
    assert!(none.is_err(), "nothing more (no heartbeat event): {none:?}");
}

/// A database with the per-statement triggers of `node_events_0002.sql`
/// gets the join plan of `node_events_0003.sql` from its next subscription:
/// the transitions trigger no longer runs a nested loop (quadratic in the
/// rows one update changes), and one completion of many tasks still records
/// one event each.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_0002_events_install_gets_a_join_without_nested_loops() {
    use cairnq_core::events::{EventsOptions, Subscription};
    use cairnq_core::protocol::events::{
        JOIN_PLAN_LEDGER_NAME, LEDGER_NAME, POSTGRES as EVENTS, POSTGRES_TRIGGERS,
    };

    let db = test_db!();
    let store = db.store();
    // The protocol's tables first: the triggers' migration goes on them.
    let before = submit(&store, "before", "default").await;
    let sql = db.sql().await;
    sql.batch_execute(EVENTS.migration.sql).await.unwrap();
    sql.batch_execute(POSTGRES_TRIGGERS.sql).await.unwrap();
    store.cancel(Target::Id(before.id.clone())).await.unwrap();
    for name in [LEDGER_NAME, POSTGRES_TRIGGERS.name] {
        sql.execute(
            "insert into cairnq_migrations (name, applied_at_ms) values ($1, 0)",
            &[&name],
        )
        .await
        .unwrap();
    }
    assert!(!store.backend().events_installed().await.unwrap());
    let settings = "select coalesce(array_to_string(proconfig, ','), '') from pg_proc \
                    where proname = 'cairnq_events_transitions'";
    assert_eq!(strings(&sql, settings).await, [""]);

    let options = EventsOptions::read(r#"{"after": "0"}"#).unwrap();
    let subscription = Subscription::open(store.clone(), options).await.unwrap();
    assert_eq!(strings(&sql, settings).await, ["enable_nestloop=off"]);
    let names: Vec<String> = ledger(&sql).await.into_iter().map(|(n, _)| n).collect();
    assert!(
        names.contains(&JOIN_PLAN_LEDGER_NAME.to_string()),
        "{names:?}"
    );
    assert!(store.backend().events_installed().await.unwrap());

    const TASKS: usize = 300;
    for i in 0..TASKS {
        submit(&store, &format!("t{i}"), "default").await;
    }
    let claimed = claim(&store, &["default"], "w1", TASKS as i64).await;
    assert_eq!(claimed.len(), TASKS);
    let items = claimed
        .iter()
        .map(|task| (task.id.clone(), Some("1".to_string())))
        .collect();
    let done = store.complete_batch("w1".into(), items).await.unwrap();
    assert_eq!(done.len(), TASKS);

    let mut succeeded = std::collections::HashSet::new();
    let mut events = 0;
    while events < 3 * TASKS + 1 {
        let page = tokio::time::timeout(PATIENCE, subscription.next_page())
            .await
            .unwrap_or_else(|_| panic!("{} events in time, got {events}", 3 * TASKS + 1))
            .unwrap()
            .expect("open");
        for event in serde_json::from_str::<Vec<Value>>(&page).unwrap() {
            events += 1;
            if event["kind"] == "succeeded" {
                assert_eq!(event["result"], json!(1));
                succeeded.insert(event["taskId"].as_str().unwrap().to_string());
            }
        }
    }
    assert_eq!(events, 3 * TASKS + 1, "one canceled, then three a task");
    assert_eq!(succeeded.len(), TASKS, "one succeeded event a task");
}

/// An event whose transaction committed while an older one (which records
/// no event, so notifies nobody) was still open is delivered soon after that
/// one ends, not a poll period later.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_behind_an_older_transaction_comes_when_it_ends() {
    use cairnq_core::events::{EventsOptions, Subscription};

    let db = test_db!();
    let store = db.store();
    let options = EventsOptions::read(r#"{"pollMs": 600000}"#).unwrap();
    let subscription = Subscription::open(store.clone(), options).await.unwrap();
    let holder = db.sql().await;
    holder
        .batch_execute("begin; select pg_current_xact_id()")
        .await
        .unwrap();
    let task = submit(&store, "behind", "default").await;
    let next = tokio::spawn(async move { subscription.next_page().await });
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!next.is_finished(), "not final while the older one is open");
    holder.batch_execute("commit").await.unwrap();
    let page = tokio::time::timeout(PATIENCE, next)
        .await
        .expect("delivered long before the poll")
        .unwrap()
        .unwrap()
        .expect("open");
    let events: Vec<Value> = serde_json::from_str(&page).unwrap();
    assert_eq!(events[0]["taskId"], task.id.as_str());
}
