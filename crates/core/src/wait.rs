//! Waiting for a task to finish (docs/api.md, "Waits and call"): poll with
//! growing intervals, sleeping on the store's wake channel so push-capable
//! backends end a sleep early. A timeout never touches the task.

use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::input::duration_ms;
use crate::store::{Store, Target};
use crate::task::Task;

pub const DEFAULT_POLL_MS: f64 = 100.0;
pub const MAX_POLL_MS: f64 = 500.0;
pub const DEFAULT_TIMEOUT_MS: f64 = 30_000.0;

/// The interval after `current`: ×1.5, at least +1, at most 500 ms.
pub fn next_poll_ms(current: f64) -> f64 {
    MAX_POLL_MS.min((current + 1.0).max((current * 1.5).floor()))
}

/// Resolve with the task once it is terminal (whatever the terminal status),
/// or fail with `TaskTimeout` carrying the last snapshot. A key is resolved
/// again on every poll, so a `replace` mid-wait moves the wait to the new task.
pub async fn wait(
    store: &Store,
    target: Target,
    timeout_ms: Option<f64>,
    poll_ms: Option<f64>,
) -> Result<Task> {
    let timeout_ms = timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS);
    // An infinite timeout waits for as long as it takes.
    let deadline = timeout_ms
        .is_finite()
        .then(|| Instant::now() + duration_ms(timeout_ms));
    let mut interval = poll_ms.unwrap_or(DEFAULT_POLL_MS);
    loop {
        let ticket = store.wake_ticket();
        let snapshot = store.get(target.clone()).await?;
        if let Some(task) = &snapshot {
            if task.status.is_terminal() {
                return Ok(snapshot.expect("checked above"));
            }
        }
        let remaining = deadline.map_or(Duration::MAX, |d| {
            d.saturating_duration_since(Instant::now())
        });
        if remaining.is_zero() {
            return Err(timeout(target, snapshot, timeout_ms));
        }
        let sleep = remaining.min(duration_ms(interval));
        match &snapshot {
            Some(task) => store.task_done_wake(&task.id, ticket, sleep).await,
            None => tokio::time::sleep(sleep).await,
        }
        interval = next_poll_ms(interval);
    }
}

fn timeout(target: Target, snapshot: Option<Task>, timeout_ms: f64) -> Error {
    let (waited, key) = match target {
        Target::Id(id) => (id, None),
        Target::Key(key) => (key.clone(), Some(key)),
    };
    Error::TaskTimeout {
        task_id: snapshot.as_ref().map_or(waited, |t| t.id.clone()),
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
        assert_eq!(next_poll_ms(100.0), 150.0);
        assert_eq!(next_poll_ms(1.0), 2.0);
        assert_eq!(next_poll_ms(400.0), 500.0);
        assert_eq!(next_poll_ms(2_000.0), 500.0);
    }

    #[test]
    fn any_number_is_a_duration() {
        assert_eq!(duration_ms(f64::NAN), Duration::ZERO);
        assert_eq!(duration_ms(-5.0), Duration::ZERO);
        assert_eq!(duration_ms(250.0), Duration::from_millis(250));
        assert!(duration_ms(f64::INFINITY) > Duration::from_secs(1_000_000_000));
    }
}
