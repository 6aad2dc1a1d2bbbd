//! Signals (docs/api.md, "Signals"): `client.signal` stores a signal for a
//! task and wakes it when it waits for the name; `ctx.waitForSignal` is a
//! step that consumes the oldest signal of its name, or suspends the task
//! until one comes or its timeout passes. The tables are created by the
//! first signal sent or waited for on a database.
//!
//! The feature's seam with the dialects lives here too: `backend` (what each
//! dialect's `signals.rs` runs), `rows` (what its statements take and answer,
//! and a wait's decisions) and `transaction` (a signal's and a wait's
//! transaction, decided once over each dialect's `SignalTransaction`).

pub mod backend;
pub mod rows;
pub mod transaction;

use crate::error::{js_number, Error, Result};
use crate::input::{name_field, stored_ms, Options, FOREVER_MS};
use crate::signals::rows::{NewSignal, Sent, SignalSummaries, SignalWait, SignalWaitInput};
use crate::steps::rows::Suspended;
use crate::store::{HeldTask, Store, Target};

/// A signal's checks: a name as task names are, a payload that is JSON text.
/// Nothing is written when one fails.
pub fn new_signal(name: &str, payload: Option<String>) -> Result<NewSignal> {
    name_field("signal name", name)?;
    if let Some(text) = &payload {
        if let Err(err) = serde_json::from_str::<serde::de::IgnoredAny>(text) {
            return Err(Error::Invalid(format!("payload must be JSON text: {err}")));
        }
    }
    Ok(NewSignal {
        name: name.to_string(),
        payload,
    })
}

/// `ctx.waitForSignal`'s options as JS sends them (`input::Options`): the
/// wait's `timeoutMs`, read as `timeout_ms`.
pub fn wait_options(options: &str) -> Result<i64> {
    let mut fields = Options::parse("waitForSignal options", options, &["timeoutMs"])?;
    timeout_ms(fields.number("timeoutMs")?)
}

/// `waitForSignal`'s `timeoutMs`: a stored duration that is not negative;
/// absent, the wait has no end the task will live to see (`FOREVER_MS`).
pub fn timeout_ms(v: Option<f64>) -> Result<i64> {
    let Some(v) = v else {
        return Ok(FOREVER_MS as i64);
    };
    let ms = stored_ms("timeoutMs", v)?;
    if ms < 0 {
        return Err(Error::Invalid(format!(
            "timeoutMs must be >= 0, got {}",
            js_number(v)
        )));
    }
    Ok(ms)
}

impl Store {
    /// Whether the signals tables exist: a catalog read until they have
    /// been seen (nothing drops them).
    pub async fn signals_installed(&self) -> Result<bool> {
        if self.signals_seen() {
            return Ok(true);
        }
        let installed = self.backend().signals_installed().await?;
        if installed {
            self.mark_signals_seen();
        }
        Ok(installed)
    }

    async fn install_signals(&self) -> Result<()> {
        if !self.signals_seen() {
            self.backend().install_signals().await?;
            self.mark_signals_seen();
        }
        Ok(())
    }

    /// `signal` / `signalByKey`: `Some(true)` stored for a task that has not
    /// finished, `Some(false)` for a finished one, `None` for no task (as
    /// `cancel` answers). The tables are created by the first signal.
    pub async fn signal(&self, target: Target, signal: NewSignal) -> Result<Option<bool>> {
        self.install_signals().await?;
        Ok(match self.backend().send_signal(target, signal).await? {
            Sent::Stored => Some(true),
            Sent::Finished => Some(false),
            Sent::NoTask => None,
        })
    }

    /// A wait step of the task `owned` holds (`SignalBackend::wait_for_signal`).
    pub async fn wait_for_signal(
        &self,
        owned: HeldTask,
        wait: SignalWaitInput,
    ) -> Result<SignalWait> {
        self.install_signals().await?;
        self.backend().wait_for_signal(owned, wait).await
    }

    /// The end of a run that left the waits `step_ids` waiting
    /// (`SignalBackend::suspend_for_waits`).
    pub async fn suspend_for_waits(
        &self,
        owned: HeldTask,
        step_ids: Vec<String>,
    ) -> Result<Suspended> {
        self.backend().suspend_for_waits(owned, step_ids).await
    }

    /// The task's waits not yet served and signals not yet consumed (none,
    /// and nothing created, on a database without the tables).
    pub async fn signal_summaries(&self, task_id: &str) -> Result<SignalSummaries> {
        if !self.signals_installed().await? {
            return Ok(SignalSummaries::default());
        }
        self.backend().signal_summaries(task_id.to_string()).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signal_inputs_are_checked_naming_the_field() {
        assert_eq!(
            new_signal("", None).unwrap_err().to_string(),
            "signal name must be a non-empty string, got \"\""
        );
        assert_eq!(
            new_signal("go", Some("{nope".into()))
                .unwrap_err()
                .to_string(),
            "payload must be JSON text: key must be a string at line 1 column 2"
        );
        assert_eq!(
            new_signal("go", Some("{\"a\":1}".into())).unwrap().payload,
            Some("{\"a\":1}".into())
        );
        assert_eq!(timeout_ms(None).unwrap(), FOREVER_MS as i64);
        assert_eq!(timeout_ms(Some(5.5)).unwrap(), 5);
        assert_eq!(
            timeout_ms(Some(-1.0)).unwrap_err().to_string(),
            "timeoutMs must be >= 0, got -1"
        );
    }
}
