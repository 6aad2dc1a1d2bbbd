//! A keyed submit under the key's advisory lock (docs/protocol.md, "Keyed
//! submit"), debounced submits included.

use super::conn::{execute, task};
use super::rows::{cancel_by_id, insert_new, resolve_key};
use super::transport::{params, Session};
use crate::error::{Error, Result};
use crate::protocol::POSTGRES as SQL;
use crate::store::backend::{Conflict, Debounce, KeyDecision, NewTask};
use crate::store::reserved::key_holder;
use crate::task::Task;

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
        (KeyDecision::Postpone(window), Some(queued)) => {
            if let Some(postponed) = postpone(tx, &queued.id, new, window).await? {
                return Ok(postponed);
            }
        }
        _ => {}
    }
    let inserted = insert_new(tx, new).await?;
    execute(tx, SQL.upsert_key, &params![&key, &new.id]).await?;
    Ok(inserted)
}

/// `debounce.sql` on the queued task `id` (docs/protocol.md, "Debounced
/// submit"); `None` when a claim took it first.
pub(super) async fn postpone<S: Session>(
    tx: &S,
    id: &str,
    new: &NewTask,
    window: Debounce,
) -> Result<Option<Task>> {
    task(
        tx,
        SQL.debounce,
        &params![&id, &new.payload, &window.window_ms, &window.max_delay_ms],
    )
    .await
}
