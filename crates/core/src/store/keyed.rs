//! A keyed submit (docs/protocol.md, "Keyed submit" and "Debounced submit"),
//! decided once for every connection it runs on, in both dialects: the
//! store's own and the application's (`submitIn`). The decision names each
//! statement it needs as a `KeyedStep`; a `KeyedConn` runs it and hands back
//! what it read. A connection whose statements are awaited (Postgres) runs
//! the decision through `insert_keyed_awaiting`.

use std::borrow::Cow;
use std::future::Future;

use crate::error::{Error, Result};
use crate::followups::window::{Debounce, DebounceStep, HELD_BACK_DELAY_MS};
use crate::store::backend::{Conflict, KeyDecision, NewTask};
use crate::store::reserved::key_holder;
use crate::task::Task;

type Text<'a> = Cow<'a, str>;

/// One statement of a keyed submit, with what it binds: borrowed from the
/// decision, owned once it outlives it (`into_owned`).
#[derive(Debug)]
pub enum KeyedStep<'a> {
    /// The key's lock (`lock_key`), then the task it points at: `Row`.
    ReadKey(Text<'a>),
    /// `cancel` of the live task `id`: `Done`.
    Cancel(Text<'a>),
    /// `insert_task`: `Row` of the inserted task.
    Insert(Cow<'a, NewTask>),
    /// `upsert_key`, the key pointed at `id`: `Done`.
    PointKey { key: Text<'a>, id: Text<'a> },
    /// Whether the follow-ups table exists: `Flag`.
    FollowupsInstalled,
    /// Whether `id` is a follow-up still held back (the table exists): `Flag`.
    Held(Text<'a>),
    /// Whether `id` recorded a step, `false` without the steps table: `Flag`.
    HasSteps(Text<'a>),
    /// `debounce` of the queued task `id`: `Row`, none if it is no longer queued.
    Debounce {
        id: Text<'a>,
        payload: Text<'a>,
        window: Debounce,
        held: bool,
    },
    /// The follow-ups' `postpone` of the held-back `id`: `Done`.
    Postpone { id: Text<'a>, window: Debounce },
    /// The follow-ups' `hold` of `task_id` until `after_id` ends, the table
    /// created first if it does not exist: `Done`.
    Hold {
        task_id: Text<'a>,
        after_id: Text<'a>,
        window: Debounce,
    },
}

impl KeyedStep<'_> {
    /// The step with its values copied out of the decision that asked it.
    pub fn into_owned(self) -> KeyedStep<'static> {
        let own = |text: Text<'_>| Cow::Owned(text.into_owned());
        match self {
            KeyedStep::ReadKey(key) => KeyedStep::ReadKey(own(key)),
            KeyedStep::Cancel(id) => KeyedStep::Cancel(own(id)),
            KeyedStep::Insert(task) => KeyedStep::Insert(Cow::Owned(task.into_owned())),
            KeyedStep::PointKey { key, id } => KeyedStep::PointKey {
                key: own(key),
                id: own(id),
            },
            KeyedStep::FollowupsInstalled => KeyedStep::FollowupsInstalled,
            KeyedStep::Held(id) => KeyedStep::Held(own(id)),
            KeyedStep::HasSteps(id) => KeyedStep::HasSteps(own(id)),
            KeyedStep::Debounce {
                id,
                payload,
                window,
                held,
            } => KeyedStep::Debounce {
                id: own(id),
                payload: own(payload),
                window,
                held,
            },
            KeyedStep::Postpone { id, window } => KeyedStep::Postpone {
                id: own(id),
                window,
            },
            KeyedStep::Hold {
                task_id,
                after_id,
                window,
            } => KeyedStep::Hold {
                task_id: own(task_id),
                after_id: own(after_id),
                window,
            },
        }
    }
}

/// What a step read.
// Unboxed: an answer is matched and moved out at once, and a box would cost
// every row read an allocation.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
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

/// A keyed submit under the key's lock, deciding at `now` (a uniqueness
/// window's end is compared with it); the key's task afterwards.
pub fn insert_keyed(
    conn: &mut dyn KeyedConn,
    new: &NewTask,
    key: &str,
    conflict: Conflict,
    now: i64,
) -> Result<Task> {
    let existing = key_holder(conflict, new, row(conn, KeyedStep::ReadKey(key.into()))?);
    match (conflict.decide_at(existing.as_ref(), now), existing) {
        (KeyDecision::ReturnExisting, Some(existing)) => return Ok(existing),
        (KeyDecision::Reject, _) => {
            return Err(Error::AlreadyExists {
                key: key.to_string(),
            })
        }
        (KeyDecision::CancelThenInsert, Some(existing)) => {
            done(conn, KeyedStep::Cancel(existing.id.as_str().into()))?;
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
    let inserted = row(conn, KeyedStep::Insert(Cow::Borrowed(new)))?
        .ok_or_else(|| Error::Connection("a keyed submit's insert returned no row".into()))?;
    done(
        conn,
        KeyedStep::PointKey {
            key: key.into(),
            id: new.id.as_str().into(),
        },
    )?;
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
        && flag(conn, KeyedStep::Held(live.id.as_str().into()))?;
    let has_steps =
        reads_history && !held && flag(conn, KeyedStep::HasSteps(live.id.as_str().into()))?;
    if Debounce::step(live.status, live.attempt, held, has_steps) != DebounceStep::FollowUp {
        // On Postgres a claim may take the row between the key read and this
        // update (claims do not take the key lock): then it matches nothing,
        // and the running task gets a follow-up.
        let step = KeyedStep::Debounce {
            id: live.id.as_str().into(),
            payload: new.payload.as_str().into(),
            window,
            held,
        };
        if let Some(postponed) = row(conn, step)? {
            if held {
                done(
                    conn,
                    KeyedStep::Postpone {
                        id: live.id.as_str().into(),
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
            task_id: follow_up.id.as_str().into(),
            after_id: live.id.as_str().into(),
            window,
        },
    )?;
    Ok(inserted)
}

/// `insert_keyed` on a connection whose statements are awaited: the
/// decision is synchronous, so it runs again from its start with every
/// answer so far until it asks for none more, each run one statement
/// further (its clock is `now`, read once: the same answers, the same
/// steps). `run` runs one step inside the submit's transaction.
pub async fn insert_keyed_awaiting<F, Fut>(
    new: &NewTask,
    key: &str,
    conflict: Conflict,
    now: i64,
    mut run: F,
) -> Result<Task>
where
    F: FnMut(KeyedStep<'static>) -> Fut,
    Fut: Future<Output = Result<KeyedAnswer>>,
{
    let mut answers = Vec::new();
    loop {
        let mut replay = Replay {
            answers: &answers,
            next: 0,
            asked: None,
        };
        let decided = insert_keyed(&mut replay, new, key, conflict, now);
        match replay.asked {
            None => return decided,
            Some(step) => answers.push(run(step).await?),
        }
    }
}

/// The answers so far, in the order the decision asks; the first step past
/// them is kept (`asked`) and the decision stopped.
struct Replay<'r> {
    answers: &'r [KeyedAnswer],
    next: usize,
    asked: Option<KeyedStep<'static>>,
}

impl KeyedConn for Replay<'_> {
    fn run(&mut self, step: KeyedStep<'_>) -> Result<KeyedAnswer> {
        if let Some(answer) = self.answers.get(self.next) {
            self.next += 1;
            return Ok(answer.clone());
        }
        self.asked = Some(step.into_owned());
        Err(Error::Connection("a keyed submit's step is awaited".into()))
    }
}
