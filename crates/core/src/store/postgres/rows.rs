//! Single-row statements the backend shares: a task by id, insert, cancel,
//! retry, a key's task under its lock, and the writes a lease guards.

use super::conn::{execute, rows, task};
use super::transport::{params, Param, PgRow, Session};
use crate::deadletter::letter::letter_of;
use crate::error::{Error, Result};
use crate::protocol::POSTGRES as SQL;
use crate::store::backend::{HeldTask, NewTask, Outcome};
use crate::task::Task;

pub(super) async fn get_by_id<S: Session>(client: &S, id: &str) -> Result<Option<Task>> {
    task(client, SQL.get, &params![&id]).await
}

pub(super) async fn insert_new<S: Session>(client: &S, new: &NewTask) -> Result<Task> {
    let params = params![
        &new.id,
        &new.name,
        &new.queue,
        &new.payload,
        &new.metadata,
        &new.max_attempts,
        &new.priority,
        &new.delay_ms,
        &new.parent_id,
        &new.root_id,
        &new.correlation_id,
    ];
    task(client, SQL.insert_task, &params)
        .await?
        .ok_or_else(|| Error::Database {
            code: tokio_postgres::error::SqlState::NO_DATA.code().to_string(),
            message: "insert returned no row".into(),
        })
}

pub(super) async fn cancel_by_id<S: Session>(client: &S, id: &str) -> Result<Option<Task>> {
    task(client, SQL.cancel, &params![&id]).await
}

pub(super) async fn retry_by_id<S: Session>(
    client: &S,
    id: &str,
    reset_attempt: bool,
) -> Result<Option<Task>> {
    task(client, SQL.retry, &params![&id, &reset_attempt]).await
}

/// The task a key points at, read under the key's advisory lock (`lock_key`
/// first, as every SDK does, then `get_key`). A pointer whose task was purged
/// meanwhile reads as no task.
pub(super) async fn resolve_key<S: Session>(tx: &S, key: &str) -> Result<Option<Task>> {
    execute(tx, SQL.lock_key, &params![&key]).await?;
    let pointer = rows(tx, SQL.get_key, &params![&key]).await?;
    match pointer.first() {
        Some(row) => {
            let id = row.text(0)?;
            get_by_id(tx, &id).await
        }
        None => Ok(None),
    }
}

/// A write guarded by the ownership predicate: no row means the lease is lost.
pub(super) async fn owned_write<S: Session>(
    client: &S,
    sql: &str,
    owned: &HeldTask,
    extra: &[Param<'_>],
) -> Result<Task> {
    let mut values = params![&owned.task_id, &owned.worker_id].to_vec();
    values.extend_from_slice(extra);
    task(client, sql, &values)
        .await?
        .ok_or_else(|| Error::LostLease {
            task_id: owned.task_id.clone(),
        })
}

/// `complete_batch` over `(id, result JSON)` pairs of one worker.
pub(super) async fn complete_many<S: Session>(
    client: &S,
    worker_id: &str,
    items: Vec<(String, Option<String>)>,
) -> Result<Vec<String>> {
    let (ids, results): (Vec<String>, Vec<Option<String>>) = items.into_iter().unzip();
    rows(
        client,
        SQL.complete_batch,
        &params![&ids, &results, &worker_id],
    )
    .await?
    .iter()
    .map(|row| row.text(0))
    .collect()
}

/// A settlement of a task `owned` holds: `succeed`, `complete` or `fail`.
pub(super) async fn finish<S: Session>(
    client: &S,
    owned: &HeldTask,
    outcome: &Outcome,
) -> Result<Task> {
    match outcome {
        Outcome::Succeed { result } => {
            owned_write(
                client,
                SQL.succeed,
                owned,
                &params![result, &None::<String>],
            )
            .await
        }
        Outcome::Complete { result } => {
            owned_write(client, SQL.complete, owned, &params![result]).await
        }
        Outcome::Fail {
            error,
            retryable,
            delay_ms,
            dead_letter,
        } => {
            let row = owned_write(
                client,
                SQL.fail,
                owned,
                &params![error, retryable, delay_ms],
            )
            .await?;
            if let Some(letter) = letter_of(&row, dead_letter) {
                insert_new(client, &letter).await?;
            }
            Ok(row)
        }
    }
}

/// `heartbeat_batch`: renews the leases of `ids` that `worker_id` still
/// holds; each id with whether a cancel is requested.
pub(super) async fn heartbeat_batch<S: Session>(
    client: &S,
    ids: &Vec<String>,
    worker_id: &str,
    lease_ms: i64,
) -> Result<Vec<(String, bool)>> {
    rows(
        client,
        SQL.heartbeat_batch,
        &params![ids, &worker_id, &lease_ms],
    )
    .await?
    .iter()
    .map(|row| Ok((row.text(0)?, row.bool(1)?)))
    .collect()
}
