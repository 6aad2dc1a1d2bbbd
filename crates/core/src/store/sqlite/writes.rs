//! Every single-row write as the writer runs it inside its transaction
//! (`run_op`): inserts, keyed submits (docs/protocol.md, "Keyed submit"),
//! cancel, retry and the lease-guarded settlements.

use rusqlite::types::ToSql;
use rusqlite::Connection;

use super::conn::sqlite_error;
use super::followups;
use super::query::{execute, query, transaction_control, Params, Repeated};
use super::rows::{json_list, owned_write, resolve_key, update_one};
use crate::deadletter::letter::letter_of;
use crate::deadletter::Route;
use crate::error::Result;
use crate::followups::window::Debounce;
use crate::protocol::{without_returning, SQLITE as SQL};
use crate::store::backend::{
    Conflict, HeldTask, NewTask, Outcome, Target, TaskRef, WriteAnswer, WriteOp,
};
use crate::store::keyed::{self, KeyedAnswer, KeyedConn, KeyedStep};
use crate::task::{Status, Task};

/// Whether `op` runs several statements (and so needs its own savepoint in a group).
pub(super) fn spans_statements(op: &WriteOp) -> bool {
    match op {
        WriteOp::Finish(_, Outcome::Fail { dead_letter, .. }) => *dead_letter != Route::None,
        _ => matches!(
            op,
            WriteOp::InsertKeyed(..)
                | WriteOp::Cancel(Target::Key(_))
                | WriteOp::Retry(Target::Key(_), _)
        ),
    }
}

/// Every single-row write, on the writer's connection inside its
/// transaction, at the store clock's `now`.
pub(super) fn run_op(conn: &Connection, op: &WriteOp, now: i64) -> WriteAnswer {
    match op {
        WriteOp::Insert(task) => insert_new(conn, task, now).map(Some),
        WriteOp::InsertKeyed(task, key, conflict) => {
            insert_keyed(conn, task, key, *conflict, now).map(Some)
        }
        WriteOp::Cancel(Target::Id(id)) => cancel_by_id(conn, id, now),
        WriteOp::Cancel(Target::Key(key)) => match resolve_key(conn, key)? {
            Some(task) => cancel_by_id(conn, &task.id, now),
            None => Ok(None),
        },
        WriteOp::Retry(Target::Id(id), reset) => retry_by_id(conn, id, *reset, now),
        WriteOp::Retry(Target::Key(key), reset) => match resolve_key(conn, key)? {
            Some(task) => retry_by_id(conn, &task.id, *reset, now),
            None => Ok(None),
        },
        WriteOp::Finish(owned, outcome) => finish(conn, owned, outcome, now).map(Some),
        WriteOp::Progress(owned, progress, message) => owned_write(
            conn,
            SQL.progress,
            owned,
            now,
            &[(":progress", progress), (":message", message)],
        )
        .map(Some),
        WriteOp::Heartbeat(owned, lease_ms) => {
            owned_write(conn, SQL.heartbeat, owned, now, &[(":lease_ms", lease_ms)]).map(Some)
        }
    }
}

/// `submitMany`'s ops in order, inside the caller's transaction; each op's
/// task ref. A plain item is one run of `insert_task.sql`, prepared once for
/// them all: on SQLite that is cheaper than one statement over a JSON array
/// of the rows (no encoding, no JSON parse per field).
pub(super) fn insert_all(conn: &Connection, ops: Vec<WriteOp>, now: i64) -> Result<Vec<TaskRef>> {
    let mut insert = Repeated::new(conn, SQL.insert_task, &INSERT_PARAMS)?;
    ops.iter()
        .map(|op| match op {
            WriteOp::Insert(task) => insert.run(&insert_values(task, &now)).map(|()| TaskRef {
                id: task.id.clone(),
                status: Status::Queued,
            }),
            WriteOp::InsertKeyed(task, key, conflict) => {
                insert_keyed(conn, task, key, *conflict, now).map(|row| TaskRef::of(&row))
            }
            other => unreachable!("submitMany passes submits only, got {other:?}"),
        })
        .collect()
}

pub(super) fn insert_new(conn: &Connection, task: &NewTask, now: i64) -> Result<Task> {
    Repeated::new(conn, SQL.insert_task, &INSERT_PARAMS)?.run(&insert_values(task, &now))?;
    Ok(task.inserted_row(now))
}

/// `insert_task.sql`'s parameters, and `insert_values` in the same order.
pub(super) const INSERT_PARAMS: [&str; 12] = [
    ":id",
    ":name",
    ":queue",
    ":payload",
    ":metadata",
    ":max_attempts",
    ":priority",
    ":delay_ms",
    ":parent_id",
    ":root_id",
    ":correlation_id",
    ":now",
];

pub(super) fn insert_values<'a>(task: &'a NewTask, now: &'a i64) -> [&'a dyn ToSql; 12] {
    [
        &task.id,
        &task.name,
        &task.queue,
        &task.payload,
        &task.metadata,
        &task.max_attempts,
        &task.priority,
        &task.delay_ms,
        &task.parent_id,
        &task.root_id,
        &task.correlation_id,
        now,
    ]
}

/// The named parameters of `debounce`, for the writer's connection and the
/// caller's (`submit_in.rs`) alike.
pub(super) fn debounce_params<'a>(
    id: &'a dyn ToSql,
    payload: &'a dyn ToSql,
    window: &'a Debounce,
    held: &'a bool,
    now: &'a i64,
) -> [(&'static str, &'a dyn ToSql); 6] {
    [
        (":id", id),
        (":payload", payload),
        (":debounce_ms", &window.window_ms),
        (":max_delay_ms", &window.max_delay_ms),
        (":held", held),
        (":now", now),
    ]
}

pub(super) fn cancel_by_id(conn: &Connection, id: &str, now: i64) -> Result<Option<Task>> {
    update_one(conn, SQL.cancel, id, &[(":id", &id), (":now", &now)])
}

pub(super) fn retry_by_id(
    conn: &Connection,
    id: &str,
    reset_attempt: bool,
    now: i64,
) -> Result<Option<Task>> {
    update_one(
        conn,
        SQL.retry,
        id,
        &[
            (":id", &id),
            (":reset_attempt", &reset_attempt),
            (":now", &now),
        ],
    )
}

pub(super) fn insert_keyed(
    conn: &Connection,
    task: &NewTask,
    key: &str,
    conflict: Conflict,
    now: i64,
) -> Result<Task> {
    keyed::insert_keyed(&mut StoreConn { conn, now }, task, key, conflict, now)
}

/// The writer's connection inside its transaction, running a keyed submit's
/// steps at the store clock's `now`.
struct StoreConn<'c> {
    conn: &'c Connection,
    now: i64,
}

impl KeyedConn for StoreConn<'_> {
    fn run(&mut self, step: KeyedStep<'_>) -> Result<KeyedAnswer> {
        let (conn, now) = (self.conn, self.now);
        Ok(match &step {
            KeyedStep::ReadKey(key) => KeyedAnswer::Row(resolve_key(conn, key)?),
            KeyedStep::Cancel(id) => {
                cancel_by_id(conn, id, now)?;
                KeyedAnswer::Done
            }
            KeyedStep::Insert(task) => KeyedAnswer::Row(Some(insert_new(conn, task, now)?)),
            KeyedStep::PointKey { key, id } => {
                query(
                    conn,
                    SQL.upsert_key,
                    &[(":key", &key), (":task_id", &id), (":now", &now)],
                    |_| Ok(()),
                )?;
                KeyedAnswer::Done
            }
            KeyedStep::FollowupsInstalled => KeyedAnswer::Flag(followups::installed(conn)?),
            KeyedStep::Held(id) => KeyedAnswer::Flag(followups::held(conn, id)?),
            KeyedStep::HasSteps(id) => KeyedAnswer::Flag(followups::has_steps(conn, id)?),
            KeyedStep::Debounce {
                id,
                payload,
                window,
                held,
            } => KeyedAnswer::Row(update_one(
                conn,
                SQL.debounce,
                id,
                &debounce_params(id, payload, window, held, &now),
            )?),
            KeyedStep::Postpone { id, window } => {
                followups::postpone(conn, id, *window, now)?;
                KeyedAnswer::Done
            }
            KeyedStep::Hold {
                task_id,
                after_id,
                window,
            } => {
                followups::hold(conn, task_id, after_id, *window, now)?;
                KeyedAnswer::Done
            }
        })
    }
}

pub(super) fn finish(
    conn: &Connection,
    owned: &HeldTask,
    outcome: &Outcome,
    now: i64,
) -> Result<Task> {
    match outcome {
        Outcome::Succeed { result } => owned_write(
            conn,
            SQL.succeed,
            owned,
            now,
            &[(":result", result), (":message", &None::<String>)],
        ),
        Outcome::Complete { result } => {
            owned_write(conn, SQL.complete, owned, now, &[(":result", result)])
        }
        Outcome::Fail {
            error,
            retryable,
            delay_ms,
            dead_letter,
        } => {
            let row = owned_write(
                conn,
                SQL.fail,
                owned,
                now,
                &[
                    (":error", error),
                    (":retryable", retryable),
                    (":delay_ms", delay_ms),
                ],
            )?;
            if let Some(letter) = letter_of(&row, dead_letter) {
                insert_new(conn, &letter, now)?;
            }
            Ok(row)
        }
    }
}

/// `complete_batch.sql` over `(id, result JSON)` pairs of one worker: the
/// ids it finished (a missing one's lease was lost). It runs first without
/// its `returning` clause, in a savepoint: a row changed for every item, the
/// rule, means every item finished, and SQLite built no result rows.
/// Otherwise the savepoint undoes it and it runs again, returning the ids.
pub(super) fn complete_many(
    conn: &Connection,
    worker_id: &str,
    items: &[(String, Option<String>)],
    now: i64,
) -> Result<Vec<String>> {
    let encoded = serde_json::to_string(items).expect("ids and JSON texts encode");
    let params: &Params<'_> = &[
        (":items", &encoded),
        (":worker_id", &worker_id),
        (":now", &now),
    ];
    let control = |sql| transaction_control(conn, sql).map_err(sqlite_error);
    control("SAVEPOINT cairnq_complete")?;
    let changed = execute(conn, without_returning(SQL.complete_batch), params);
    let all_finished = matches!(changed, Ok(n) if n == items.len());
    if !all_finished {
        control("ROLLBACK TO cairnq_complete")?;
    }
    control("RELEASE cairnq_complete")?;
    changed?;
    if all_finished {
        return Ok(items.iter().map(|(id, _)| id.clone()).collect());
    }
    query(conn, SQL.complete_batch, params, |row| row.get(0))
}

/// `heartbeat_batch.sql`: renews the leases of `ids` that `worker_id` still
/// holds; each id with whether a cancel is requested.
pub(super) fn heartbeat_batch(
    conn: &Connection,
    ids: &[String],
    worker_id: &str,
    lease_ms: i64,
    now: i64,
) -> Result<Vec<(String, bool)>> {
    let ids = json_list(ids);
    query(
        conn,
        SQL.heartbeat_batch,
        &[
            (":ids", &ids),
            (":worker_id", &worker_id),
            (":lease_ms", &lease_ms),
            (":now", &now),
        ],
        |row| Ok((row.get(0)?, row.get(1)?)),
    )
}
