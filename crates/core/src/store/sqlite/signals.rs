//! The signals statements on SQLite (docs/protocol.md, "Signals"): a signal
//! and a wait each run as one transaction of the writer, so the write lock
//! orders them.

use async_trait::async_trait;
use rusqlite::Connection;

use super::conn::{apply_in_transaction, feature_installed};
use super::lifecycle::SqliteBackend;
use super::query::{query, Int, Params};
use super::rows::resolve_key;
use super::steps::suspend;
use crate::error::{Error, Result};
use crate::ids::now_ms;
use crate::protocol::signals::SQLITE as SQL;
use crate::store::backend::{HeldTask, SignalBackend, Target};
use crate::store::signal_rows::{
    missed, NewSignal, PendingSignal, Sent, SignalSummaries, SignalWait, SignalWaitInput,
    StoredWait, WaitOutcome, WaitSummary,
};
use crate::store::step_rows::Wake;
use crate::task::Status;

fn task_status(conn: &Connection, id: &str) -> Result<Option<Status>> {
    let found = query(conn, SQL.task_status, &[(":id", &id)], |row| {
        row.get::<_, String>(0)
    })?;
    Ok(found.first().map(|text| text.parse()).transpose()?)
}

/// `signal()` in the caller's transaction: the task's status, then the
/// signal and the wake of a task waiting for its name.
fn send(conn: &Connection, target: &Target, signal: &NewSignal) -> Result<Sent> {
    let id = match target {
        Target::Id(id) => id.clone(),
        Target::Key(key) => match resolve_key(conn, key)? {
            Some(task) => task.id,
            None => return Ok(Sent::NoTask),
        },
    };
    let sent = Sent::of(task_status(conn, &id)?);
    if sent == Sent::Stored {
        let now = now_ms();
        let params: &Params<'_> = &[
            (":task_id", &id),
            (":name", &signal.name),
            (":payload", &signal.payload),
            (":now", &now),
        ];
        query(conn, SQL.send, params, |_| Ok(()))?;
        let params: &Params<'_> = &[(":task_id", &id), (":name", &signal.name), (":now", &now)];
        query(conn, SQL.wake, params, |_| Ok(()))?;
    }
    Ok(sent)
}

fn wait_state(conn: &Connection, task_id: &str, step_id: &str) -> Result<Option<StoredWait>> {
    let params: &Params<'_> = &[(":task_id", &task_id), (":step_id", &step_id)];
    let found = query(conn, SQL.wait_state, params, |row| {
        Ok((
            row.get::<_, String>(0)?,
            row.get::<_, Int>(1)?.0,
            row.get::<_, String>(2)?,
            row.get::<_, Option<String>>(3)?,
        ))
    })?;
    found
        .into_iter()
        .next()
        .map(|(name, timeout_at_ms, outcome, payload)| {
            Ok(StoredWait {
                name,
                timeout_at_ms,
                outcome: outcome.parse()?,
                payload,
            })
        })
        .transpose()
}

/// `take.sql`: the consumed signal's id and payload, if there was one.
fn take(conn: &Connection, owned: &HeldTask, name: &str) -> Result<Option<(i64, Option<String>)>> {
    let params: &Params<'_> = &[
        (":task_id", &owned.task_id),
        (":worker_id", &owned.worker_id),
        (":name", &name),
        (":now", &now_ms()),
    ];
    let taken = query(conn, SQL.take, params, |row| Ok((row.get(0)?, row.get(1)?)))?;
    Ok(taken.into_iter().next())
}

/// `settle_wait.sql`: the stored timeout, or `LostLease` (nothing stored).
fn settle(
    conn: &Connection,
    owned: &HeldTask,
    wait: &SignalWaitInput,
    outcome: WaitOutcome,
    signal_id: Option<i64>,
) -> Result<i64> {
    let outcome = outcome.as_str();
    let params: &Params<'_> = &[
        (":task_id", &owned.task_id),
        (":worker_id", &owned.worker_id),
        (":step_id", &wait.step_id),
        (":name", &wait.name),
        (":timeout_ms", &wait.timeout_ms),
        (":outcome", &outcome),
        (":signal_id", &signal_id),
        (":now", &now_ms()),
    ];
    let stored = query(conn, SQL.settle_wait, params, |row| row.get::<_, Int>(0))?;
    match stored.first() {
        Some(at) => Ok(at.0),
        None => Err(Error::LostLease {
            task_id: owned.task_id.clone(),
        }),
    }
}

/// `ctx.waitForSignal` in the caller's transaction (`SignalBackend`).
fn wait(conn: &Connection, owned: &HeldTask, wait: &SignalWaitInput) -> Result<SignalWait> {
    let stored = wait_state(conn, &owned.task_id, &wait.step_id)?;
    if let Some(done) = stored
        .as_ref()
        .map(|s| s.replayed(wait))
        .transpose()?
        .flatten()
    {
        return Ok(done);
    }
    if let Some((signal_id, payload)) = take(conn, owned, &wait.name)? {
        settle(conn, owned, wait, WaitOutcome::Signaled, Some(signal_id))?;
        return Ok(SignalWait::Received(payload));
    }
    match missed(stored.as_ref(), wait) {
        WaitOutcome::TimedOut => {
            settle(conn, owned, wait, WaitOutcome::TimedOut, None)?;
            Ok(SignalWait::TimedOut)
        }
        outcome => {
            let timeout_at = settle(conn, owned, wait, outcome, None)?;
            suspend(conn, owned, None, Wake::At(timeout_at)).map(SignalWait::Suspended)
        }
    }
}

fn summaries(conn: &Connection, task_id: &str) -> Result<SignalSummaries> {
    let waits = query(conn, SQL.waits, &[(":task_id", &task_id)], |row| {
        Ok(WaitSummary {
            step_id: row.get(0)?,
            name: row.get(1)?,
            timeout_at_ms: row.get::<_, Int>(2)?.0,
            created_at_ms: row.get::<_, Int>(3)?.0,
        })
    })?;
    let pending = query(conn, SQL.pending, &[(":task_id", &task_id)], |row| {
        Ok(PendingSignal {
            name: row.get(0)?,
            size: row.get::<_, Option<Int>>(1)?.map_or(0, |size| size.0),
            sent_at_ms: row.get::<_, Int>(2)?.0,
        })
    })?;
    Ok(SignalSummaries { waits, pending })
}

#[async_trait]
impl SignalBackend for SqliteBackend {
    async fn signals_installed(&self) -> Result<bool> {
        self.read(|conn| feature_installed(conn, SQL.installed))
            .await
    }

    async fn install_signals(&self) -> Result<()> {
        self.transaction(|conn| apply_in_transaction(conn, &SQL.migration))
            .await
    }

    async fn send_signal(&self, target: Target, signal: NewSignal) -> Result<Sent> {
        self.transaction(move |conn| send(conn, &target, &signal))
            .await
    }

    async fn wait_for_signal(&self, owned: HeldTask, input: SignalWaitInput) -> Result<SignalWait> {
        self.transaction(move |conn| wait(conn, &owned, &input))
            .await
    }

    async fn signal_summaries(&self, task_id: String) -> Result<SignalSummaries> {
        self.read(move |conn| summaries(conn, &task_id)).await
    }
}
