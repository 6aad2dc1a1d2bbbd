//! Debounce follow-ups on SQLite (docs/protocol.md, "Debounced submit"): what
//! a debounced submit reads of its key's task, the table created by the first
//! follow-up inside the submit's transaction, and the release.

use async_trait::async_trait;
use rusqlite::{Connection, ToSql};

use super::conn::apply_in_transaction;
use super::lifecycle::SqliteBackend;
use super::query::{query, Params};
use crate::error::Result;
use crate::followups::backend::FollowupBackend;
use crate::followups::window::Debounce;
use crate::protocol::followups::{SQLITE as SQL, SQLITE_FORGET, SQLITE_PENDING};
use crate::protocol::steps::SQLITE as STEPS;

fn exists(conn: &Connection, sql: &str, params: &Params<'_>) -> Result<bool> {
    Ok(query(conn, sql, params, |row| row.get(0))?
        .into_iter()
        .next()
        .unwrap_or(false))
}

pub(super) fn installed(conn: &Connection) -> Result<bool> {
    exists(conn, SQL.installed, &[])
}

/// Whether `id` is a follow-up still held back (the table exists).
pub(super) fn held(conn: &Connection, id: &str) -> Result<bool> {
    exists(conn, SQL.held, &[(":id", &id)])
}

/// Whether `id` recorded a step; `false` on a database without steps.
pub(super) fn has_steps(conn: &Connection, id: &str) -> Result<bool> {
    Ok(exists(conn, STEPS.installed, &[])? && exists(conn, SQL.has_steps, &[(":id", &id)])?)
}

/// Hold the new follow-up `task_id` back until `after_id` ends; the table
/// is created first if this is the database's first follow-up.
pub(super) fn hold(
    conn: &Connection,
    task_id: &str,
    after_id: &str,
    window: Debounce,
    now: i64,
) -> Result<()> {
    if !installed(conn)? {
        apply_in_transaction(conn, &SQL.migration)?;
    }
    query(
        conn,
        SQL.hold,
        &hold_params(&task_id, &after_id, &window, &now),
        |_| Ok(()),
    )?;
    Ok(())
}

/// The named parameters of `hold`, for the writer's connection and the
/// caller's (`submit_in.rs`) alike.
pub(super) fn hold_params<'a>(
    task_id: &'a dyn ToSql,
    after_id: &'a dyn ToSql,
    window: &'a Debounce,
    now: &'a i64,
) -> [(&'static str, &'a dyn ToSql); 4] {
    [
        (":task_id", task_id),
        (":after_id", after_id),
        (":debounce_ms", &window.window_ms),
        (":now", now),
    ]
}

/// The held-back follow-up `id` starts later once released.
pub(super) fn postpone(conn: &Connection, id: &str, window: Debounce, now: i64) -> Result<()> {
    query(
        conn,
        SQL.postpone,
        &postpone_params(&id, &window, &now),
        |_| Ok(()),
    )?;
    Ok(())
}

/// The named parameters of `postpone`, for the writer's connection and the
/// caller's (`submit_in.rs`) alike.
pub(super) fn postpone_params<'a>(
    id: &'a dyn ToSql,
    window: &'a Debounce,
    now: &'a i64,
) -> [(&'static str, &'a dyn ToSql); 4] {
    [
        (":id", id),
        (":debounce_ms", &window.window_ms),
        (":max_delay_ms", &window.max_delay_ms),
        (":now", now),
    ]
}

/// Whether any follow-up is held back (the table exists).
fn pending(conn: &Connection) -> Result<bool> {
    exists(conn, SQLITE_PENDING, &[])
}

/// Inside the writer's transaction: the follow-ups whose task ended become
/// due and lose their rows; how many were released.
fn release(conn: &Connection, now: i64) -> Result<u64> {
    query(conn, SQL.release, &[(":now", &now)], |_| Ok(()))?;
    let released = conn.changes();
    query(conn, SQLITE_FORGET, &[], |_| Ok(()))?;
    Ok(released)
}

#[async_trait]
impl FollowupBackend for SqliteBackend {
    async fn followups_installed(&self) -> Result<bool> {
        self.read(installed).await
    }

    /// A read first: `release` takes the write lock.
    async fn release_followups(&self) -> Result<u64> {
        if !self.read(pending).await? {
            return Ok(0);
        }
        let clock = self.clock.clone();
        self.transaction(move |conn| release(conn, clock.now_ms()))
            .await
    }
}
