//! The statements that read many rows or counts: list, stats, the queues'
//! oldest due task, queue depth, and purge's predicate (which `purge`
//! deletes by and `purge_count` counts).

use rusqlite::Connection;

use super::query::{query, query_tasks};
use super::rows::json_list;
use crate::error::Result;
use crate::protocol::retention::SQLITE as KEEP_LAST;
use crate::protocol::{self, specialize_for, SQLITE as SQL};
use crate::store::backend::{ListFilter, PurgeFilter, StatusCount};
use crate::task::{Status, Task};

pub(super) fn list(conn: &Connection, f: &ListFilter) -> Result<Vec<Task>> {
    let status = f.status.map(Status::as_str);
    let sql = specialize_for(
        if f.bodies {
            SQL.list
        } else {
            protocol::without_bodies(SQL.list, "task.*", "'{}'", "null")
        },
        &[
            (":status", status.is_some()),
            (":queue", f.queue.is_some()),
            (":name", f.name.is_some()),
            (":root_id", f.root_id.is_some()),
            (":correlation_id", f.correlation_id.is_some()),
        ],
    );
    query_tasks(
        conn,
        sql,
        &[
            (":status", &status),
            (":queue", &f.queue),
            (":name", &f.name),
            (":root_id", &f.root_id),
            (":correlation_id", &f.correlation_id),
            (":limit", &f.limit),
            (":offset", &f.offset),
        ],
    )
}

pub(super) fn stats(conn: &Connection, queue: &Option<String>) -> Result<Vec<StatusCount>> {
    let sql = specialize_for(SQL.stats, &[(":queue", queue.is_some())]);
    let rows = query(conn, sql, &[(":queue", queue)], |row| {
        Ok((
            row.get::<_, String>(0)?,
            row.get::<_, String>(1)?,
            row.get::<_, i64>(2)?,
        ))
    })?;
    rows.into_iter()
        .map(|(queue, status, count)| {
            Ok(StatusCount {
                queue,
                status: status.parse()?,
                count,
            })
        })
        .collect()
}

pub(super) fn oldest_due(conn: &Connection, now: i64) -> Result<Vec<(String, i64)>> {
    query(conn, SQL.oldest_due, &[(":now", &now)], |row| {
        Ok((row.get::<_, String>(0)?, row.get::<_, i64>(1)?))
    })
}

/// `cancel_requested.sql`: which of `ids` a cancel was requested for.
pub(super) fn cancel_requested(conn: &Connection, ids: &[String]) -> Result<Vec<String>> {
    let ids = json_list(ids);
    query(conn, SQL.cancel_requested, &[(":ids", &ids)], |row| {
        row.get(0)
    })
}

pub(super) fn queue_depth(conn: &Connection, queue: &str, max_depth: i64) -> Result<i64> {
    let rows = query(
        conn,
        SQL.queue_depth,
        &[(":queue", &queue), (":max_depth", &max_depth)],
        |row| row.get(0),
    )?;
    Ok(rows.into_iter().next().unwrap_or(max_depth))
}

/// `purge` or its count (`counting`) of `f`: by cutoff, or past the newest
/// `keep_last` (the same predicate and parameters either way).
pub(super) fn purge_query<T>(
    conn: &Connection,
    counting: bool,
    f: &PurgeFilter,
    now: i64,
    map: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
) -> Result<Vec<T>> {
    let statement = match (f.keep_last.is_some(), counting) {
        (false, false) => SQL.purge,
        (false, true) => SQL.purge_count,
        (true, false) => KEEP_LAST.keep_last,
        (true, true) => KEEP_LAST.keep_last_count,
    };
    let status = f.status.map(Status::as_str);
    let sql = specialize_for(
        statement,
        &[
            (":queue", f.queue.is_some()),
            (":status", status.is_some()),
            (":name", f.name.is_some()),
        ],
    );
    let before_ms = now.saturating_sub(f.older_than_ms);
    query(
        conn,
        sql,
        &[
            (":before_ms", &before_ms),
            (":queue", &f.queue),
            (":status", &status),
            (":name", &f.name),
            (":limit", &f.limit),
            (":keep", &f.keep_last),
        ],
        map,
    )
}
