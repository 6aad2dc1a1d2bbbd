//! A keyed submit under the key's advisory lock (docs/protocol.md, "Keyed
//! submit"), debounced submits included: `store::keyed` decides, each of its
//! steps a statement here.

use super::conn::{execute, task};
use super::followups;
use super::rows::{cancel_by_id, insert_new, resolve_key};
use super::transport::{params, Session};
use crate::error::Result;
use crate::ids::now_ms;
use crate::protocol::{POSTGRES as SQL, POSTGRES_INSERT_TASKS};
use crate::store::backend::{insert_steps, Conflict, InsertStep, NewTask, TaskRef, WriteOp};
use crate::store::keyed::{self, KeyedAnswer, KeyedStep};
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

/// A keyed submit under the key's lock (docs/protocol.md, "Keyed submit"),
/// as `store::keyed` decides it.
pub(super) async fn keyed_insert<S: Session>(
    tx: &S,
    new: &NewTask,
    key: String,
    conflict: Conflict,
) -> Result<Task> {
    keyed::insert_keyed_awaiting(new, &key, conflict, now_ms(), |step| run_step(tx, step)).await
}

/// One step of a keyed submit inside `tx`.
async fn run_step<S: Session>(tx: &S, step: KeyedStep<'static>) -> Result<KeyedAnswer> {
    Ok(match step {
        KeyedStep::ReadKey(key) => KeyedAnswer::Row(resolve_key(tx, &key).await?),
        KeyedStep::Cancel(id) => {
            cancel_by_id(tx, &id).await?;
            KeyedAnswer::Done
        }
        KeyedStep::Insert(task) => KeyedAnswer::Row(Some(insert_new(tx, &task).await?)),
        KeyedStep::PointKey { key, id } => {
            let (key, id): (&str, &str) = (&key, &id);
            execute(tx, SQL.upsert_key, &params![&key, &id]).await?;
            KeyedAnswer::Done
        }
        KeyedStep::FollowupsInstalled => KeyedAnswer::Flag(followups::installed(tx).await?),
        KeyedStep::Held(id) => KeyedAnswer::Flag(followups::held(tx, &id).await?),
        KeyedStep::HasSteps(id) => KeyedAnswer::Flag(followups::has_steps(tx, &id).await?),
        KeyedStep::Debounce {
            id,
            payload,
            window,
            held,
        } => {
            let (id, payload): (&str, &str) = (&id, &payload);
            KeyedAnswer::Row(
                task(
                    tx,
                    SQL.debounce,
                    &params![
                        &id,
                        &payload,
                        &window.window_ms,
                        &window.max_delay_ms,
                        &held
                    ],
                )
                .await?,
            )
        }
        KeyedStep::Postpone { id, window } => {
            followups::postpone(tx, &id, window).await?;
            KeyedAnswer::Done
        }
        KeyedStep::Hold {
            task_id,
            after_id,
            window,
        } => {
            followups::hold(tx, &task_id, &after_id, window).await?;
            KeyedAnswer::Done
        }
    })
}
