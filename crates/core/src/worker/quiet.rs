//! When a worker has nothing left to do now (cairnq/testing's `drain`,
//! docs/api.md, "Testing"): a poll turn that claimed nothing with no call
//! in flight and nothing left to write, begun after every schedule and
//! debounce follow-up due on the store's clock was fired or released.
//!
//! The poll loop only counts: a relaxed add per turn and per dispatched
//! task, and one store into a watch per turn that claimed nothing.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

use tokio::sync::watch;

use crate::error::Result;
use crate::input::{integer_at_least_one, Options};
use crate::schedule::clock::fire_once;
use crate::store::Store;

/// The tasks a drain runs at most when its options name no `max`.
pub const DEFAULT_DRAIN_MAX: u64 = 1_000;

/// `drain(options)`'s options as JS sends them: the most tasks it may run
/// (`max`, an integer >= 1).
pub fn drain_max(options_json: &str) -> Result<u64> {
    let mut options = Options::parse("drain options", options_json, &["max"])?;
    match options.number("max")? {
        Some(max) => Ok(integer_at_least_one("max", max)? as u64),
        None => Ok(DEFAULT_DRAIN_MAX),
    }
}

/// How often a wait for a quiet turn looks at the task count, to end a
/// drain that never quiets (a handler submitting its own name forever).
const LIMIT_CHECK: Duration = Duration::from_millis(20);

pub(crate) struct Quiet {
    /// Poll turns begun.
    turns: AtomicU64,
    /// The latest turn that found nothing to do (0: none yet).
    quiet_turn: watch::Sender<u64>,
    /// Tasks handed to handlers (or ended unregistered).
    dispatched: AtomicU64,
    /// Calls ended.
    ended: AtomicU64,
}

impl Default for Quiet {
    fn default() -> Quiet {
        Quiet {
            turns: AtomicU64::new(0),
            quiet_turn: watch::channel(0).0,
            dispatched: AtomicU64::new(0),
            ended: AtomicU64::new(0),
        }
    }
}

impl Quiet {
    /// A turn begins; its number.
    pub(crate) fn turn(&self) -> u64 {
        self.turns.fetch_add(1, Relaxed) + 1
    }

    /// Turn `turn` claimed nothing and the run had nothing in flight.
    pub(crate) fn found_nothing(&self, turn: u64) {
        self.quiet_turn.send_replace(turn);
    }

    pub(crate) fn dispatched(&self, tasks: usize) {
        self.dispatched.fetch_add(tasks as u64, Relaxed);
    }

    pub(crate) fn ended(&self) {
        self.ended.fetch_add(1, Relaxed);
    }

    fn activity(&self) -> u64 {
        self.dispatched.load(Relaxed) + self.ended.load(Relaxed)
    }
}

/// How a drain ended: the tasks the worker dispatched, and whether it
/// stopped at its limit with work perhaps left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Drained {
    pub tasks: u64,
    pub limit_reached: bool,
}

impl Quiet {
    /// Resolves when the worker counted here has nothing to do now on the
    /// store's clock, or once it has dispatched more than `max_tasks` tasks
    /// (`limit_reached`), or when `stopped` turns true. A drain runs a worker
    /// of its own, so the count is the drain's from the worker's first
    /// claim, whenever this call began. `wake` cuts the worker's idle sleep
    /// short.
    pub(crate) async fn wait(
        &self,
        store: &Store,
        queues: &[String],
        max_tasks: u64,
        mut stopped: watch::Receiver<bool>,
        wake: impl Fn(),
    ) -> Result<Drained> {
        let drained = |limit_reached| Drained {
            tasks: self.dispatched.load(Relaxed),
            limit_reached,
        };
        let mut quiet_turns = self.quiet_turn.subscribe();
        loop {
            let before = self.activity();
            fire_once(store, queues).await?;
            let mark = self.turns.load(Relaxed);
            wake();
            while *quiet_turns.borrow_and_update() <= mark {
                if drained(false).tasks > max_tasks {
                    return Ok(drained(true));
                }
                tokio::select! {
                    _ = quiet_turns.changed() => {}
                    _ = tokio::time::sleep(LIMIT_CHECK) => {}
                    _ = stopped.wait_for(|stopped| *stopped) => return Ok(drained(false)),
                }
            }
            // Nothing ran since the look: nothing could have become due.
            if self.activity() == before {
                return Ok(drained(false));
            }
            if drained(false).tasks > max_tasks {
                return Ok(drained(true));
            }
        }
    }
}
