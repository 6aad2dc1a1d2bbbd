//! A keyed submit under the key's advisory lock (docs/protocol.md, "Keyed
//! submit"), debounced submits included.

use super::conn::{execute, task};
use super::followups;
use super::rows::{cancel_by_id, insert_new, resolve_key};
use super::transport::{params, Session};
use crate::error::{Error, Result};
use crate::ids::now_ms;
use crate::protocol::{POSTGRES as SQL, POSTGRES_INSERT_TASKS};
use crate::store::backend::{
    insert_steps, Conflict, Debounce, DebounceStep, InsertStep, KeyDecision, NewTask, TaskRef,
    WriteOp, HELD_BACK_DELAY_MS,
};
use crate::store::reserved::key_holder;
use crate::task::Task;

/// `submitMany`'s ops in order, in the caller's transaction
/// (`insert_steps`); each op's task ref.
pub(super) async fn insert_all<S: Session>(tx: &S, ops: Vec<WriteOp>) -> Result<Vec<TaskRef>> {
    let mut refs = Vec::with_capacity(ops.len());
    for step in insert_steps(ops) {
        match step {
            InsertStep::Batch(tasks, inserted) => {
                execute(tx, POSTGRES_INSERT_TASKS, &params![&tasks]).await?;
                refs.extend(inserted);
            }
            InsertStep::Keyed(new, key, conflict) => {
                refs.push(TaskRef::of(&keyed_insert(tx, &new, key, conflict).await?));
            }
        }
    }
    Ok(refs)
}

/// A keyed submit under the key's lock (docs/protocol.md, "Keyed submit").
pub(super) async fn keyed_insert<S: Session>(
    tx: &S,
    new: &NewTask,
    key: String,
    conflict: Conflict,
) -> Result<Task> {
    let existing = key_holder(conflict, new, resolve_key(tx, &key).await?);
    match (conflict.decide_at(existing.as_ref(), now_ms()), existing) {
        (KeyDecision::ReturnExisting, Some(existing)) => return Ok(existing),
        (KeyDecision::Reject, _) => return Err(Error::AlreadyExists { key }),
        (KeyDecision::CancelThenInsert, Some(existing)) => {
            cancel_by_id(tx, &existing.id).await?;
        }
        (KeyDecision::Debounce(window), Some(live)) => {
            return debounce_into(tx, &live, new, &key, window).await;
        }
        _ => {}
    }
    insert_pointed(tx, new, &key).await
}

/// Insert `new` and point `key` at it.
async fn insert_pointed<S: Session>(tx: &S, new: &NewTask, key: &str) -> Result<Task> {
    let inserted = insert_new(tx, new).await?;
    execute(tx, SQL.upsert_key, &params![&key, &new.id]).await?;
    Ok(inserted)
}

/// A debounced submit on a key whose task `live` is queued or running
/// (docs/protocol.md, "Debounced submit").
async fn debounce_into<S: Session>(
    tx: &S,
    live: &Task,
    new: &NewTask,
    key: &str,
    window: Debounce,
) -> Result<Task> {
    let reads_history = Debounce::reads_history(live.status, live.attempt);
    let held =
        reads_history && followups::installed(tx).await? && followups::held(tx, &live.id).await?;
    let has_steps = reads_history && !held && followups::has_steps(tx, &live.id).await?;
    if Debounce::step(live.status, live.attempt, held, has_steps) != DebounceStep::FollowUp {
        // A claim may take the row between the key read and this update
        // (claims do not take the key lock): then it matches nothing, and
        // the running task gets a follow-up.
        let postponed = task(
            tx,
            SQL.debounce,
            &params![
                &live.id,
                &new.payload,
                &window.window_ms,
                &window.max_delay_ms,
                &held
            ],
        )
        .await?;
        if let Some(postponed) = postponed {
            if held {
                followups::postpone(tx, &live.id, window).await?;
            }
            return Ok(postponed);
        }
    }
    let follow_up = NewTask {
        delay_ms: HELD_BACK_DELAY_MS,
        ..new.clone()
    };
    let inserted = insert_pointed(tx, &follow_up, key).await?;
    followups::hold(tx, &follow_up.id, &live.id, window).await?;
    Ok(inserted)
}
