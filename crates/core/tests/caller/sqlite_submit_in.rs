//! `submitIn` on SQLite's caller path (`store::sqlite::submit_in`): a second
//! connection to the store's file, inside its own transaction, answers each
//! statement as the JS drivers do (values bound by position, rows as
//! objects). Keys, conflicts and debounce decide there as the store decides.

use std::sync::Arc;

use cairnq_core::followups::window::HELD_BACK_DELAY_MS;
use cairnq_core::store::sqlite::submit_in::submit_in;
use cairnq_core::store::submit_in::{submit_in_ops, submit_many_in_ops};
use cairnq_core::store::{ClaimRequest, SubmitInput, Target, TaskRef};
use cairnq_core::wire::read_items;
use cairnq_core::{Error, Status, Store};
use rusqlite::types::Value as Sql;
use rusqlite::Connection;
use serde_json::{json, Map, Value};

/// One statement as a JS driver runs it for `submitIn`.
fn answer(conn: &Connection, request: &str) -> cairnq_core::Result<String> {
    let request: Value = serde_json::from_str(request).unwrap();
    let sql = request["sql"].as_str().unwrap();
    let values: Vec<Sql> = request["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| match v {
            Value::Null => Sql::Null,
            Value::Number(n) if n.is_i64() => Sql::Integer(n.as_i64().unwrap()),
            Value::Number(n) => Sql::Real(n.as_f64().unwrap()),
            Value::String(s) => Sql::Text(s.clone()),
            other => panic!("a value no driver binds: {other}"),
        })
        .collect();
    let failed = |e: rusqlite::Error| Error::Connection(e.to_string());
    let rows = match request["mode"].as_str().unwrap() {
        "script" => conn
            .execute_batch(sql)
            .map(|()| Vec::new())
            .map_err(failed)?,
        "write" => conn
            .execute(sql, rusqlite::params_from_iter(values))
            .map(|_| Vec::new())
            .map_err(failed)?,
        _ => {
            let mut statement = conn.prepare(sql).map_err(failed)?;
            let names: Vec<String> = statement.column_names().map(str::to_string).collect();
            let rows = statement
                .query_map(rusqlite::params_from_iter(values), |row| {
                    let mut object = Map::new();
                    for (index, name) in names.iter().enumerate() {
                        let value = match row.get::<_, Sql>(index)? {
                            Sql::Null => Value::Null,
                            Sql::Integer(i) => json!(i),
                            Sql::Real(f) => json!(f),
                            Sql::Text(s) => json!(s),
                            Sql::Blob(_) => panic!("no task column is a blob"),
                        };
                        object.insert(name.clone(), value);
                    }
                    Ok(Value::Object(object))
                })
                .map_err(failed)?;
            rows.collect::<rusqlite::Result<Vec<_>>>().map_err(failed)?
        }
    };
    Ok(Value::Array(rows).to_string())
}

/// A migrated store and the application's connection to its file.
async fn opened(dir: &tempfile::TempDir) -> (Arc<Store>, Connection) {
    let path = dir.path().join("q.db");
    let store = Store::sqlite(path.to_str().unwrap(), None);
    store.connect().await.unwrap();
    let conn = Connection::open(&path).unwrap();
    conn.busy_timeout(std::time::Duration::from_secs(10))
        .unwrap();
    (store, conn)
}

/// `submitIn(options)` on `conn`.
fn submit(conn: &Connection, options: Value) -> cairnq_core::Result<TaskRef> {
    let ops = submit_in_ops(&options.to_string())?;
    let mut run = |request: String| answer(conn, &request);
    Ok(submit_in(ops, false, cairnq_core::ids::now_ms(), &mut run)?.remove(0))
}

fn count(conn: &Connection, sql: &str) -> i64 {
    conn.query_row(sql, [], |row| row.get(0)).unwrap()
}

/// A plain submit is one insert: the row `submit` writes, unseen by the
/// store before the caller's commit, gone after its rollback.
#[tokio::test]
async fn a_plain_submit_writes_submits_row_in_the_callers_transaction() {
    let dir = tempfile::tempdir().unwrap();
    let (store, conn) = opened(&dir).await;
    let options = json!({"name": "resize", "payload": r#"{"w":64}"#, "queue": "images", "priority": -2,
        "maxAttempts": 5, "metadata": r#"{"by":"test"}"#, "group": "g", "runAtDelayMs": 1500});
    conn.execute_batch("begin").unwrap();
    let rolled_back = submit(&conn, options.clone()).unwrap();
    conn.execute_batch("rollback").unwrap();
    assert_eq!(store.get(Target::Id(rolled_back.id)).await.unwrap(), None);

    conn.execute_batch("begin").unwrap();
    let id = submit(&conn, options).unwrap().id;
    assert_eq!(store.get(Target::Id(id.clone())).await.unwrap(), None);
    conn.execute_batch("commit").unwrap();
    let row = store.get(Target::Id(id.clone())).await.unwrap().unwrap();
    assert_eq!(
        (row.name.as_str(), row.queue.as_str()),
        ("resize", "images")
    );
    assert_eq!((row.priority, row.max_attempts), (-2, 5));
    assert_eq!(row.run_at_ms - row.created_at_ms, 1500);
    assert_eq!(row.payload, r#"{"w":64}"#);
    assert_eq!(row.metadata, r#"{"by":"test","cairnq.group":"g"}"#);
    assert_eq!(row.root_id.as_deref(), Some(id.as_str()));
    store.close().await.unwrap();
}

#[tokio::test]
async fn keys_and_conflicts_decide_inside_the_callers_transaction() {
    let dir = tempfile::tempdir().unwrap();
    let (store, conn) = opened(&dir).await;
    conn.execute_batch("begin").unwrap();
    let first = submit(
        &conn,
        json!({"name": "receipt", "key": "order-1", "priority": 4}),
    )
    .unwrap();
    let reused = submit(&conn, json!({"name": "receipt", "key": "order-1"})).unwrap();
    assert_eq!(reused.id, first.id, "reuse hands back the live task");
    let refused = submit(
        &conn,
        json!({"name": "receipt", "key": "order-1", "conflict": "reject"}),
    );
    assert!(
        matches!(refused, Err(Error::AlreadyExists { .. })),
        "{refused:?}"
    );
    let replaced = submit(
        &conn,
        json!({"name": "receipt", "key": "order-1", "conflict": "replace"}),
    )
    .unwrap();
    assert_ne!(replaced.id, first.id);
    assert_eq!(count(&conn, "select count(*) from cairnq_tasks"), 2);
    assert!(
        store
            .get(Target::Id(first.id.clone()))
            .await
            .unwrap()
            .is_none(),
        "nothing seen before the commit"
    );
    conn.execute_batch("commit").unwrap();

    let old = store.get(Target::Id(first.id)).await.unwrap().unwrap();
    assert_eq!((old.status, old.priority), (Status::Canceled, 4));
    let current = store
        .get(Target::Key("order-1".into()))
        .await
        .unwrap()
        .unwrap();
    assert_eq!((current.id, current.status), (replaced.id, Status::Queued));
    store.close().await.unwrap();
}

#[tokio::test]
async fn a_rollback_leaves_no_task_and_no_key() {
    let dir = tempfile::tempdir().unwrap();
    let (store, conn) = opened(&dir).await;
    conn.execute_batch("begin").unwrap();
    submit(
        &conn,
        json!({"name": "receipt", "key": "order-2", "runAtDelayMs": 5000}),
    )
    .unwrap();
    conn.execute_batch("rollback").unwrap();
    assert_eq!(count(&conn, "select count(*) from cairnq_tasks"), 0);
    assert_eq!(count(&conn, "select count(*) from cairnq_task_keys"), 0);
    assert!(store
        .get(Target::Key("order-2".into()))
        .await
        .unwrap()
        .is_none());
    store.close().await.unwrap();
}

/// An item refused by its key undoes the items before it (a savepoint), and
/// the caller's transaction goes on with what it wrote itself.
#[tokio::test]
async fn a_refused_item_undoes_the_whole_call_only() {
    let dir = tempfile::tempdir().unwrap();
    let (store, conn) = opened(&dir).await;
    store
        .submit(SubmitInput {
            name: "receipt".into(),
            key: Some("taken".into()),
            ..SubmitInput::default()
        })
        .await
        .unwrap();
    conn.execute_batch("begin; create table orders (id integer primary key)")
        .unwrap();
    conn.execute_batch("insert into orders default values")
        .unwrap();
    let items = read_items(
        &json!([
            {"task": "receipt"},
            {"task": "receipt", "options": {"key": "fresh"}},
            {"task": "receipt", "options": {"key": "taken", "conflict": "reject"}},
        ])
        .to_string(),
    )
    .unwrap();
    let mut run = |request: String| answer(&conn, &request);
    let refused = submit_in(
        submit_many_in_ops(items).unwrap(),
        true,
        cairnq_core::ids::now_ms(),
        &mut run,
    );
    assert!(
        matches!(refused, Err(Error::AlreadyExists { .. })),
        "{refused:?}"
    );
    assert_eq!(count(&conn, "select count(*) from cairnq_tasks"), 1);
    assert_eq!(count(&conn, "select count(*) from cairnq_task_keys"), 1);
    conn.execute_batch("commit").unwrap();
    assert_eq!(count(&conn, "select count(*) from orders"), 1);
    store.close().await.unwrap();
}

/// A burst of debounced submits in the caller's transaction makes one task
/// with the last payload; once it runs, the next makes the follow-up, whose
/// table the caller's transaction creates (and a rollback takes away).
#[tokio::test]
async fn debounce_merges_and_follows_up_inside_the_callers_transaction() {
    let dir = tempfile::tempdir().unwrap();
    let (store, conn) = opened(&dir).await;
    let debounced = |v: i64| json!({"name": "save", "key": "doc-1", "payload": format!(r#"{{"v":{v}}}"#), "debounceMs": 60_000});
    conn.execute_batch("begin").unwrap();
    let first = submit(&conn, debounced(1)).unwrap();
    let merged = submit(&conn, debounced(2)).unwrap();
    assert_eq!(merged.id, first.id);
    conn.execute_batch("commit").unwrap();
    let row = store
        .get(Target::Id(first.id.clone()))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(row.payload, r#"{"v":2}"#);
    assert!(
        row.run_at_ms >= row.created_at_ms + 59_000,
        "postponed by the window"
    );

    conn.execute_batch("update cairnq_tasks set run_at_ms = 0")
        .unwrap();
    let claimed = store
        .claim(
            ClaimRequest {
                queues: vec!["default".into()],
                worker_id: "w1".into(),
                lease_ms: 30_000,
                names: None,
            },
            1,
        )
        .await
        .unwrap();
    assert_eq!(claimed[0].id, first.id);
    let followups = "select count(*) from sqlite_master where name = 'cairnq_followups'";
    for commit in [false, true] {
        conn.execute_batch("begin").unwrap();
        let follow_up = submit(&conn, debounced(3)).unwrap();
        assert_ne!(follow_up.id, first.id);
        assert_eq!(count(&conn, followups), 1);
        conn.execute_batch(if commit { "commit" } else { "rollback" })
            .unwrap();
        assert_eq!(count(&conn, followups), i64::from(commit));
        if commit {
            let held = store
                .get(Target::Key("doc-1".into()))
                .await
                .unwrap()
                .unwrap();
            assert_eq!(held.id, follow_up.id);
            assert!(
                held.run_at_ms >= HELD_BACK_DELAY_MS,
                "held back while the first runs"
            );
        }
    }
    store.close().await.unwrap();
}
