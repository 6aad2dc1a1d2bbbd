//! Waiting for a task to finish (docs/api.md, "Waits and call"): poll with
//! growing intervals, sleeping on the store's wake channel so push-capable
//! backends end a sleep early. A timeout never touches the task.

use std::time::Duration;

use tokio::time::Instant;

use crate::error::{Error, Result};
use crate::input::{duration_ms, Options};
use crate::store::{Store, Target, WaitPoll};
use crate::task::Task;

pub const DEFAULT_POLL_MS: f64 = 100.0;
/// The interval ceiling when `maxPollMs` is not given.
pub const DEFAULT_MAX_POLL_MS: f64 = 500.0;
pub const DEFAULT_TIMEOUT_MS: f64 = 30_000.0;

/// How a wait polls: `timeoutMs`, `pollMs`, `maxPollMs` as the API receives them.
#[derive(Clone, Copy, Debug, Default)]
pub struct WaitOptions {
    pub timeout_ms: Option<f64>,
    pub poll_ms: Option<f64>,
    pub max_poll_ms: Option<f64>,
}

impl WaitOptions {
    /// The options as JS sends them (`input::Options`).
    pub fn read(options: &str) -> Result<WaitOptions> {
        let mut fields = Options::parse(
            "wait options",
            options,
            &["timeoutMs", "pollMs", "maxPollMs"],
        )?;
        Ok(WaitOptions {
            timeout_ms: fields.number("timeoutMs")?,
            poll_ms: fields.number("pollMs")?,
            max_poll_ms: fields.number("maxPollMs")?,
        })
    }

    /// `timeoutMs`, `DEFAULT_TIMEOUT_MS` when absent.
    pub fn timeout_ms(&self) -> f64 {
        self.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS)
    }
}

/// When a wait of `timeout_ms` from now runs out; `None`: an infinite (or
/// NaN) timeout waits for as long as it takes.
fn deadline(timeout_ms: f64) -> Option<Instant> {
    timeout_ms
        .is_finite()
        .then(|| Instant::now() + duration_ms(timeout_ms))
}

/// A wait on an id or key that names no task (one that is not a string):
/// nothing to poll, so it only runs out. Resolves when `wait` with `opts`
/// would time out, with the timeout it ran out (the default applied).
pub async fn run_out(opts: WaitOptions) -> f64 {
    let timeout_ms = opts.timeout_ms();
    match deadline(timeout_ms) {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
    timeout_ms
}

/// The interval after `current`: ×1.5, at least +1, at most `ceiling`.
pub fn next_poll_ms(current: f64, ceiling: f64) -> f64 {
    ceiling.min((current + 1.0).max((current * 1.5).floor()))
}

/// Resolve with the task once it is terminal (whatever the terminal status),
/// or fail with `TaskTimeout` carrying the last snapshot. Each poll is the
/// status probe; the row (payload and all) is read only once the probe sees a
/// terminal status, or at the deadline for the timeout's snapshot. A key is
/// resolved again on every probe, so a `replace` mid-wait moves the wait to
/// the new task.
pub async fn wait(store: &Store, target: Target, opts: WaitOptions) -> Result<Task> {
    let timeout_ms = opts.timeout_ms();
    let ceiling = opts.max_poll_ms.unwrap_or(DEFAULT_MAX_POLL_MS);
    let deadline = deadline(timeout_ms);
    let mut interval = opts.poll_ms.unwrap_or(DEFAULT_POLL_MS);
    loop {
        let ticket = store.wake_ticket();
        let WaitPoll { probed, mut row } = store.wait_poll(target.clone()).await?;
        if let Some(task) = row.take_if(|task| task.status.is_terminal()) {
            return Ok(task);
        }
        let remaining = deadline.map_or(Duration::MAX, |d| {
            d.saturating_duration_since(Instant::now())
        });
        if remaining.is_zero() {
            let snapshot = match (&probed, row) {
                (Some(_), None) => store.get(target.clone()).await?,
                (_, row) => row,
            };
            return Err(timeout(target, probed.map(|r| r.id), snapshot, timeout_ms));
        }
        let sleep = remaining.min(duration_ms(interval));
        match &probed {
            Some(found) => store.task_done_wake(&found.id, ticket, sleep).await,
            None => tokio::time::sleep(sleep).await,
        }
        interval = next_poll_ms(interval, ceiling);
    }
}

/// `TaskTimeout` naming the probed task (else what was waited on), with the
/// snapshot read at the deadline.
fn timeout(
    target: Target,
    probed_id: Option<String>,
    snapshot: Option<Task>,
    timeout_ms: f64,
) -> Error {
    let (waited, key) = match target {
        Target::Id(id) => (id, None),
        Target::Key(key) => (key.clone(), Some(key)),
    };
    Error::TaskTimeout {
        task_id: probed_id.unwrap_or(waited),
        key,
        task: snapshot.map(Box::new),
        timeout_ms,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poll_intervals_grow_to_the_ceiling() {
        assert_eq!(next_poll_ms(100.0, DEFAULT_MAX_POLL_MS), 150.0);
        assert_eq!(next_poll_ms(1.0, DEFAULT_MAX_POLL_MS), 2.0);
        assert_eq!(next_poll_ms(400.0, DEFAULT_MAX_POLL_MS), 500.0);
        assert_eq!(next_poll_ms(2_000.0, DEFAULT_MAX_POLL_MS), 500.0);
        // A ceiling below pollMs applies from the second sleep on.
        assert_eq!(next_poll_ms(100.0, 20.0), 20.0);
    }

    #[tokio::test(start_paused = true)]
    async fn a_wait_on_no_task_runs_out_at_its_deadline() {
        let opts = |timeout_ms| WaitOptions {
            timeout_ms,
            ..Default::default()
        };
        let started = Instant::now();
        assert_eq!(run_out(opts(Some(50.0))).await, 50.0);
        assert_eq!(started.elapsed(), Duration::from_millis(50));
        assert_eq!(run_out(opts(None)).await, DEFAULT_TIMEOUT_MS);
        assert_eq!(run_out(opts(Some(-1.0))).await, -1.0);
        let forever =
            tokio::time::timeout(Duration::from_secs(1 << 40), run_out(opts(Some(f64::NAN))));
        assert!(forever.await.is_err(), "a NaN timeout never runs out");
    }

    #[test]
    fn any_number_is_a_duration() {
        assert_eq!(duration_ms(f64::NAN), Duration::ZERO);
        assert_eq!(duration_ms(-5.0), Duration::ZERO);
        assert_eq!(duration_ms(250.0), Duration::from_millis(250));
        assert!(duration_ms(f64::INFINITY) > Duration::from_secs(1_000_000_000));
    }
}
