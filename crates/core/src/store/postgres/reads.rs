//! The statements that read many rows or counts: list, status probes,
//! stats, the queues' oldest due task, queue depth, and purge's predicate
//! (which `purge` deletes by and `purge_count` counts).

use super::conn::{rows, tasks};
use super::transport::{params, PgRow, Session};
use crate::error::Result;
use crate::protocol::retention::POSTGRES as KEEP_LAST;
use crate::protocol::{self, specialize_for, POSTGRES as SQL};
use crate::store::backend::{ListFilter, PurgeFilter, StatusCount, Target, TaskRef};
use crate::task::{Status, Task};

pub(super) async fn list<S: Session>(client: &S, f: &ListFilter) -> Result<Vec<Task>> {
    let status = f.status.map(Status::as_str);
    let sql = specialize_for(
        if f.bodies {
            SQL.list
        } else {
            protocol::without_bodies(SQL.list, "*", "'{}'::jsonb", "null::jsonb")
        },
        &[
            ("$1::text", status.is_some()),
            ("$2::text", f.queue.is_some()),
            ("$3::text", f.name.is_some()),
            ("$4::text", f.root_id.is_some()),
            ("$5::text", f.correlation_id.is_some()),
        ],
    );
    tasks(
        client,
        sql,
        &params![
            &status,
            &f.queue,
            &f.name,
            &f.root_id,
            &f.correlation_id,
            &f.limit,
            &f.offset,
        ],
    )
    .await
}

/// `get_status` or `get_status_by_key`.
pub(super) async fn status_of<S: Session>(client: &S, target: &Target) -> Result<Option<TaskRef>> {
    let (sql, value) = match target {
        Target::Id(id) => (SQL.get_status, id),
        Target::Key(key) => (SQL.get_status_by_key, key),
    };
    let found = rows(client, sql, &params![value]).await?;
    found
        .first()
        .map(|row| {
            let status = row.text(1)?;
            Ok(TaskRef {
                id: row.text(0)?,
                status: status.parse()?,
            })
        })
        .transpose()
}

pub(super) async fn stats<S: Session>(
    client: &S,
    queue: &Option<String>,
) -> Result<Vec<StatusCount>> {
    let sql = specialize_for(SQL.stats, &[("$1::text", queue.is_some())]);
    rows(client, sql, &params![queue])
        .await?
        .iter()
        .map(|row| {
            let status = row.text(1)?;
            Ok(StatusCount {
                queue: row.text(0)?,
                status: status.parse()?,
                count: row.int(2)?,
            })
        })
        .collect()
}

pub(super) async fn oldest_due<S: Session>(client: &S) -> Result<Vec<(String, i64)>> {
    rows(client, SQL.oldest_due, &[])
        .await?
        .iter()
        .map(|row| Ok((row.text(0)?, row.int(1)?)))
        .collect()
}

/// `cancel_requested`: which of `ids` a cancel was requested for.
pub(super) async fn cancel_requested<S: Session>(
    client: &S,
    ids: &Vec<String>,
) -> Result<Vec<String>> {
    rows(client, SQL.cancel_requested, &params![ids])
        .await?
        .iter()
        .map(|row| row.text(0))
        .collect()
}

pub(super) async fn queue_depth<S: Session>(
    client: &S,
    queue: &str,
    max_depth: i64,
) -> Result<i64> {
    let found = rows(client, SQL.queue_depth, &params![&queue, &max_depth]).await?;
    match found.first() {
        Some(row) => row.int(0),
        None => Ok(max_depth),
    }
}

/// `purge` (the ids deleted) or its count (`counting`: one count) of `f`,
/// by cutoff or past the newest `keep_last`: the same predicate and
/// parameters, with `f`'s set filters made required.
pub(super) async fn purge_query<S: Session>(
    client: &S,
    counting: bool,
    f: &PurgeFilter,
) -> Result<Vec<S::Row>> {
    let (statement, first) = match (f.keep_last, counting) {
        (None, false) => (SQL.purge, f.older_than_ms),
        (None, true) => (SQL.purge_count, f.older_than_ms),
        (Some(keep), false) => (KEEP_LAST.keep_last, keep),
        (Some(keep), true) => (KEEP_LAST.keep_last_count, keep),
    };
    let status = f.status.map(Status::as_str);
    let sql = specialize_for(
        statement,
        &[
            ("$2::text", f.queue.is_some()),
            ("$3::text", f.status.is_some()),
            ("$4::text", f.name.is_some()),
        ],
    );
    let params = params![&first, &f.queue, &status, &f.name, &f.limit];
    rows(client, sql, &params).await
}
