//! Row helpers every statement of the backend shares: reading a task by id
//! or key, its status, a single-row update and the writes a lease guards.

use rusqlite::Connection;

use super::query::{query, query_task, Params};
use crate::error::{Error, Result};
use crate::protocol::{self, SQLITE as SQL};
use crate::store::backend::{HeldTask, Target, TaskRef, WaitPoll};
use crate::task::Task;

/// A JSON list of strings, bound for a statement's `json_each`.
pub(super) fn json_list<S: AsRef<str>>(items: &[S]) -> String {
    serde_json::to_string(&items.iter().map(AsRef::as_ref).collect::<Vec<_>>())
        .expect("a list of strings encodes")
}

pub(super) fn get_by_id(conn: &Connection, id: &str) -> Result<Option<Task>> {
    query_task(conn, SQL.get, &[(":id", &id)])
}

pub(super) fn get_target(conn: &Connection, target: &Target) -> Result<Option<Task>> {
    match target {
        Target::Id(id) => get_by_id(conn, id),
        Target::Key(key) => query_task(conn, SQL.get_by_key, &[(":key", key)]),
    }
}

/// A single-row update, then the row it changed (`None` if it changed none).
/// Alone in autocommit, one statement with RETURNING does both (one
/// transaction, so one round of locks). Inside a shared transaction RETURNING
/// would cost the statement a statement journal and a result table, while
/// reading the row back by its key costs one index seek.
pub(super) fn update_one(
    conn: &Connection,
    sql: &'static str,
    id: &str,
    params: &Params<'_>,
) -> Result<Option<Task>> {
    if conn.is_autocommit() {
        return query_task(conn, protocol::returning_row(sql), params);
    }
    query(conn, sql, params, |_| Ok(()))?;
    if conn.changes() == 0 {
        return Ok(None);
    }
    get_by_id(conn, id)
}

/// `get_status` or `get_status_by_key`.
pub(super) fn status_of(conn: &Connection, target: &Target) -> Result<Option<TaskRef>> {
    let (sql, param, value) = match target {
        Target::Id(id) => (SQL.get_status, ":id", id),
        Target::Key(key) => (SQL.get_status_by_key, ":key", key),
    };
    let found = query(conn, sql, &[(param, value)], |row| {
        Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?))
    })?;
    found
        .into_iter()
        .next()
        .map(|(id, status)| {
            Ok(TaskRef {
                id,
                status: status.parse()?,
            })
        })
        .transpose()
}

pub(super) fn wait_poll_on(conn: &Connection, target: &Target) -> Result<WaitPoll> {
    let probed = status_of(conn, target)?;
    let row = match &probed {
        Some(found) if found.status.is_terminal() => get_target(conn, target)?,
        _ => None,
    };
    Ok(WaitPoll { probed, row })
}

/// The task a key points at, read under the write lock (`lock_key` + `get_key`).
pub(super) fn resolve_key(conn: &Connection, key: &str) -> Result<Option<Task>> {
    query(conn, SQL.lock_key, &[(":key", &key)], |_| Ok(()))?;
    let pointer: Option<String> = query(conn, SQL.get_key, &[(":key", &key)], |row| row.get(0))?
        .into_iter()
        .next();
    match pointer {
        Some(id) => get_by_id(conn, &id),
        None => Ok(None),
    }
}

pub(super) fn owned_write(
    conn: &Connection,
    sql: &'static str,
    owned: &HeldTask,
    now: i64,
    extra: &Params<'_>,
) -> Result<Task> {
    let mut params: Vec<(&str, &dyn rusqlite::ToSql)> = vec![
        (":id", &owned.task_id),
        (":worker_id", &owned.worker_id),
        (":now", &now),
    ];
    params.extend_from_slice(extra);
    update_one(conn, sql, &owned.task_id, &params)?.ok_or_else(|| Error::LostLease {
        task_id: owned.task_id.clone(),
    })
}
