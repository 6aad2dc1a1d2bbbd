//! A keyed submit under the key's advisory lock (docs/protocol.md, "Keyed
//! submit"), debounced submits included.

use super::conn::{execute, task};
use super::followups;
use super::rows::{cancel_by_id, insert_new, resolve_key};
use super::transport::{params, Session};
use crate::error::{Error, Result};
use crate::protocol::POSTGRES as SQL;
use crate::store::backend::{
    insert_batch, Conflict, Debounce, DebounceStep, KeyDecision, NewTask, TaskRef, WriteOp,
    HELD_BACK_DELAY_MS,
};
use crate::store::reserved::key_holder;
use crate::task::Task;

/// `submitMany`'s ops in order, in the caller's transaction: each run of
/// plain inserts in one statement (`insert_tasks.sql`), a keyed one after
/// everything before it, so it sees those items.
pub(super) async fn insert_all<S: Session>(tx: &S, ops: Vec<WriteOp>) -> Result<Vec<TaskRef>> {
    let mut refs = Vec::with_capacity(ops.len());
    let mut run: Vec<NewTask> = Vec::new();
    let mut ops = ops.into_iter();
    loop {
        let next = ops.next();
        if let Some(WriteOp::Insert(new)) = next {
            run.push(new);
            continue;
        }
        if !run.is_empty() {
            let (tasks, inserted) = insert_batch(&run);
            execute(tx, SQL.insert_tasks, &params![&tasks]).await?;
            refs.extend(inserted);
            run.clear();
        }
        match next {
            None => return Ok(refs),
            Some(WriteOp::InsertKeyed(new, key, conflict)) => {
                refs.push(TaskRef::of(&keyed_insert(tx, &new, key, conflict).await?));
            }
            Some(other) => unreachable!("submitMany passes submits only, got {other:?}"),
        }
    }
}

/// A keyed submit under the key's lock (docs/protocol.md, "Keyed submit").
pub(super) async fn keyed_insert<S: Session>(
    tx: &S,
    new: &NewTask,
    key: String,
    conflict: Conflict,
) -> Result<Task> {
    let existing = key_holder(conflict, new, resolve_key(tx, &key).await?);
    match (
        conflict.decide(existing.as_ref().map(|t| t.status)),
        existing,
    ) {
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
