//! A keyed submit (docs/protocol.md, "Keyed submit" and "Debounced submit"),
//! decided once for every connection it runs on: the store's own and the
//! application's (`submitIn`). The decision names each statement it needs as
//! a `KeyedStep`; a `KeyedConn` runs it and hands back what it read.

use crate::error::{Error, Result};
use crate::store::backend::{
    Conflict, Debounce, DebounceStep, KeyDecision, NewTask, HELD_BACK_DELAY_MS,
};
use crate::store::reserved::key_holder;
use crate::task::Task;

/// One statement of a keyed submit, with what it binds.
#[derive(Debug)]
pub enum KeyedStep<'a> {
    /// The key's lock (`lock_key`), then the task it points at: `Row`.
    ReadKey(&'a str),
    /// `cancel` of the live task `id`: `Done`.
    Cancel(&'a str),
    /// `insert_task`: `Row` of the inserted task.
    Insert(&'a NewTask),
    /// `upsert_key`, the key pointed at `id`: `Done`.
    PointKey { key: &'a str, id: &'a str },
    /// Whether the follow-ups table exists: `Flag`.
    FollowupsInstalled,
    /// Whether `id` is a follow-up still held back (the table exists): `Flag`.
    Held(&'a str),
    /// Whether `id` recorded a step, `false` without the steps table: `Flag`.
    HasSteps(&'a str),
    /// `debounce` of the queued task `id`: `Row`, none if it is no longer queued.
    Debounce {
        id: &'a str,
        payload: &'a str,
        window: Debounce,
        held: bool,
    },
    /// The follow-ups' `postpone` of the held-back `id`: `Done`.
    Postpone { id: &'a str, window: Debounce },
    /// The follow-ups' `hold` of `task_id` until `after_id` ends, the table
    /// created first if it does not exist: `Done`.
    Hold {
        task_id: &'a str,
        after_id: &'a str,
        window: Debounce,
    },
}

/// What a step read.
// Unboxed: an answer is matched and moved out at once, and a box would cost
// every row read an allocation.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum KeyedAnswer {
    Done,
    Flag(bool),
    Row(Option<Task>),
}

/// A connection inside the submit's transaction: runs each step.
pub trait KeyedConn {
    fn run(&mut self, step: KeyedStep<'_>) -> Result<KeyedAnswer>;
}

fn flag(conn: &mut dyn KeyedConn, step: KeyedStep<'_>) -> Result<bool> {
    match conn.run(step)? {
        KeyedAnswer::Flag(answer) => Ok(answer),
        other => Err(misanswered("a flag", &other)),
    }
}

fn row(conn: &mut dyn KeyedConn, step: KeyedStep<'_>) -> Result<Option<Task>> {
    match conn.run(step)? {
        KeyedAnswer::Row(answer) => Ok(answer),
        other => Err(misanswered("a row", &other)),
    }
}

fn done(conn: &mut dyn KeyedConn, step: KeyedStep<'_>) -> Result<()> {
    conn.run(step).map(drop)
}

fn misanswered(wanted: &str, got: &KeyedAnswer) -> Error {
    Error::Connection(format!(
        "a keyed submit's statement answered {got:?} where {wanted} was expected"
    ))
}

/// A keyed submit under the key's lock; the key's task afterwards.
pub fn insert_keyed(
    conn: &mut dyn KeyedConn,
    new: &NewTask,
    key: &str,
    conflict: Conflict,
) -> Result<Task> {
    let existing = key_holder(conflict, new, row(conn, KeyedStep::ReadKey(key))?);
    match (
        conflict.decide(existing.as_ref().map(|t| t.status)),
        existing,
    ) {
        (KeyDecision::ReturnExisting, Some(existing)) => return Ok(existing),
        (KeyDecision::Reject, _) => {
            return Err(Error::AlreadyExists {
                key: key.to_string(),
            })
        }
        (KeyDecision::CancelThenInsert, Some(existing)) => {
            done(conn, KeyedStep::Cancel(&existing.id))?;
        }
        (KeyDecision::Debounce(window), Some(live)) => {
            return debounce_into(conn, &live, new, key, window);
        }
        _ => {}
    }
    insert_pointed(conn, new, key)
}

/// Insert `new` and point `key` at it.
fn insert_pointed(conn: &mut dyn KeyedConn, new: &NewTask, key: &str) -> Result<Task> {
    let inserted = row(conn, KeyedStep::Insert(new))?
        .ok_or_else(|| Error::Connection("a keyed submit's insert returned no row".into()))?;
    done(conn, KeyedStep::PointKey { key, id: &new.id })?;
    Ok(inserted)
}

/// A debounced submit on a key whose task `live` is queued or running
/// (docs/protocol.md, "Debounced submit").
fn debounce_into(
    conn: &mut dyn KeyedConn,
    live: &Task,
    new: &NewTask,
    key: &str,
    window: Debounce,
) -> Result<Task> {
    let reads_history = Debounce::reads_history(live.status, live.attempt);
    let held = reads_history
        && flag(conn, KeyedStep::FollowupsInstalled)?
        && flag(conn, KeyedStep::Held(&live.id))?;
    let has_steps = reads_history && !held && flag(conn, KeyedStep::HasSteps(&live.id))?;
    if Debounce::step(live.status, live.attempt, held, has_steps) != DebounceStep::FollowUp {
        // On Postgres a claim may take the row between the key read and this
        // update (claims do not take the key lock): then it matches nothing,
        // and the running task gets a follow-up.
        let step = KeyedStep::Debounce {
            id: &live.id,
            payload: &new.payload,
            window,
            held,
        };
        if let Some(postponed) = row(conn, step)? {
            if held {
                done(
                    conn,
                    KeyedStep::Postpone {
                        id: &live.id,
                        window,
                    },
                )?;
            }
            return Ok(postponed);
        }
    }
    let follow_up = NewTask {
        delay_ms: HELD_BACK_DELAY_MS,
        ..new.clone()
    };
    let inserted = insert_pointed(conn, &follow_up, key)?;
    done(
        conn,
        KeyedStep::Hold {
            task_id: &follow_up.id,
            after_id: &live.id,
            window,
        },
    )?;
    Ok(inserted)
}
