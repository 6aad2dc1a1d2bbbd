//! The worker's heartbeat (docs/api.md, "Heartbeat and blocked loops"), one
//! loop per running worker: every interval, one `heartbeat_batch` renews every
//! live task of every call in flight. It runs on the runtime's threads, so a
//! busy handler thread cannot delay it; instead, the loop pings that thread and
//! reports a late answer as `EventLoopBlocked`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::{interval_at, MissedTickBehavior};

use super::ledger::RunState;
use super::report::Reporter;
use crate::error::Error;
use crate::store::Store;

/// What the heartbeat needs of its worker.
pub(crate) struct Beat {
    pub store: Arc<Store>,
    pub worker_id: String,
    pub lease_ms: i64,
    pub interval_ms: i64,
    pub every: Duration,
    pub reporter: Reporter,
}

/// A ping on its way to the handler thread.
struct Ping {
    sent: Instant,
    /// First task of the oldest call in flight when the ping was sent.
    task_id: String,
    answered: JoinHandle<Instant>,
}

/// Beats until `done` turns true.
pub(crate) async fn beat_until(shared: Beat, run: Arc<RunState>, mut done: watch::Receiver<bool>) {
    let every = shared.every;
    let mut ticks = interval_at(tokio::time::Instant::now() + every, every);
    ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let mut ping: Option<Ping> = None;
    loop {
        tokio::select! {
            _ = async { done.wait_for(|done| *done).await.is_ok() } => break,
            answered = async { (&mut ping.as_mut().expect("guarded").answered).await },
                if ping.is_some() =>
            {
                let ping = ping.take().expect("guarded");
                if let Ok(at) = answered {
                    report_if_late(&shared, &ping, at);
                }
            }
            _ = ticks.tick() => {
                if ping.is_none() {
                    ping = send_ping(&run);
                }
                beat(&shared, &run).await;
            }
        }
    }
    if let Some(ping) = ping {
        ping.answered.abort();
    }
}

fn send_ping(run: &Arc<RunState>) -> Option<Ping> {
    let task_id = run.oldest_task_id()?;
    let invoker = run.invoker.clone();
    Some(Ping {
        sent: Instant::now(),
        task_id,
        answered: tokio::spawn(async move {
            invoker.ping().await;
            Instant::now()
        }),
    })
}

fn report_if_late(shared: &Beat, ping: &Ping, answered: Instant) {
    let late_ms = answered.duration_since(ping.sent).as_millis() as i64;
    if late_ms > shared.interval_ms {
        let blocked = Error::EventLoopBlocked {
            late_ms,
            interval_ms: shared.interval_ms,
            lease_ms: shared.lease_ms,
        };
        shared.reporter.execute(blocked, &ping.task_id);
    }
}

/// One beat over the live contexts (not settled, not lease-lost).
async fn beat(shared: &Beat, run: &RunState) {
    let live = run.live_contexts();
    let Some(first) = live.first() else {
        return;
    };
    let ids = live.iter().map(|c| c.task_id().to_string()).collect();
    let renewed = shared
        .store
        .heartbeat_batch(ids, shared.worker_id.clone(), shared.lease_ms)
        .await;
    match renewed {
        Ok(renewed) => {
            let renewed: std::collections::HashMap<String, bool> = renewed.into_iter().collect();
            for context in &live {
                match renewed.get(context.task_id()) {
                    Some(cancel_requested) => context.observe_cancel(*cancel_requested),
                    // Read after the reply: a context that settled meanwhile,
                    // or whose settlement write may have removed it, is fine.
                    None if !context.settled() && !context.is_settling() => {
                        context.mark_lease_lost()
                    }
                    None => {}
                }
            }
        }
        Err(err) => shared.reporter.execute(err, first.task_id()),
    }
}
