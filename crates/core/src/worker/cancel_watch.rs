//! The worker's cancel watch (docs/api.md, "Time limits and aborts"): a cancel
//! requested by any process aborts the handler's `ctx.signal` within a second,
//! not at the next beat. Every tick it reads the cancel flags of the tasks
//! that were already in flight at the previous tick, so handlers shorter than
//! a tick (the hot path) never cost a statement.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::{interval_at, Instant, MissedTickBehavior};

use super::ledger::RunState;
use super::report::Reporter;
use crate::store::Store;

/// Half the promised second: a cancel lands at most two ticks before it is read.
const TICK: Duration = Duration::from_millis(500);

/// Watches until `done` turns true.
pub(crate) async fn watch_until(
    store: Arc<Store>,
    run: Arc<RunState>,
    reporter: Reporter,
    mut done: watch::Receiver<bool>,
) {
    let mut ticks = interval_at(Instant::now() + TICK, TICK);
    ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let mut seen: HashSet<String> = HashSet::new();
    loop {
        tokio::select! {
            _ = async { done.wait_for(|done| *done).await.is_ok() } => break,
            _ = ticks.tick() => {}
        }
        let live: Vec<_> = run
            .live_contexts()
            .into_iter()
            .filter(|context| !context.cancel_seen())
            .collect();
        let watched: Vec<_> = live
            .iter()
            .filter(|context| seen.contains(context.task_id()))
            .collect();
        if let Some(first) = watched.first() {
            let ids = watched.iter().map(|c| c.task_id().to_string()).collect();
            match store.cancel_requested(ids).await {
                Ok(canceled) => {
                    let canceled: HashSet<String> = canceled.into_iter().collect();
                    for context in &watched {
                        context.observe_cancel(canceled.contains(context.task_id()));
                    }
                }
                Err(err) => reporter.execute(err, first.task_id()),
            }
        }
        seen = live.iter().map(|c| c.task_id().to_string()).collect();
    }
}
