//! Debounce follow-ups on Postgres (docs/protocol.md, "Debounced submit"),
//! over any transport: what a debounced submit reads of its key's task, the
//! table created by the first follow-up inside the submit's transaction, and
//! the release.

use async_trait::async_trait;

use super::conn::{apply, execute, rows};
use super::lifecycle::PostgresBackend;
use super::listener::PushSource;
use super::transport::{params, Param, PgRow, Session, Transport};
use crate::error::Result;
use crate::followups::backend::FollowupBackend;
use crate::followups::window::Debounce;
use crate::protocol::followups::POSTGRES as SQL;
use crate::protocol::steps::POSTGRES as STEPS;

async fn exists<S: Session>(session: &S, sql: &str, params: &[Param<'_>]) -> Result<bool> {
    match rows(session, sql, params).await?.first() {
        Some(row) => row.bool(0),
        None => Ok(false),
    }
}

pub(super) async fn installed<S: Session>(session: &S) -> Result<bool> {
    exists(session, SQL.installed, &[]).await
}

/// Whether `id` is a follow-up still held back (the table exists).
pub(super) async fn held<S: Session>(tx: &S, id: &str) -> Result<bool> {
    exists(tx, SQL.held, &params![&id]).await
}

/// Whether `id` recorded a step; `false` on a database without steps.
pub(super) async fn has_steps<S: Session>(tx: &S, id: &str) -> Result<bool> {
    Ok(exists(tx, STEPS.installed, &[]).await? && exists(tx, SQL.has_steps, &params![&id]).await?)
}

/// Hold the new follow-up `task_id` back until `after_id` ends; the table
/// is created first (under the ledger's lock) if none exists yet.
pub(super) async fn hold<S: Session>(
    tx: &S,
    task_id: &str,
    after_id: &str,
    window: Debounce,
) -> Result<()> {
    if !installed(tx).await? {
        apply(tx, &SQL.migration).await?;
    }
    execute(
        tx,
        SQL.hold,
        &params![&task_id, &after_id, &window.window_ms],
    )
    .await
}

/// The held-back follow-up `id` starts later once released.
pub(super) async fn postpone<S: Session>(tx: &S, id: &str, window: Debounce) -> Result<()> {
    execute(
        tx,
        SQL.postpone,
        &params![&id, &window.window_ms, &window.max_delay_ms],
    )
    .await
}

/// The follow-ups whose task ended become due and lose their rows (one
/// statement); how many were released.
async fn release<S: Session>(session: &S) -> Result<u64> {
    Ok(rows(session, SQL.release, &[]).await?.len() as u64)
}

#[async_trait]
impl<T: Transport + PushSource> FollowupBackend for PostgresBackend<T> {
    async fn followups_installed(&self) -> Result<bool> {
        installed(&self.client().await?).await
    }

    async fn release_followups(&self) -> Result<u64> {
        release(&self.client().await?).await
    }
}
