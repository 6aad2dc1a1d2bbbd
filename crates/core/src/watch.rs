//! `watch` (docs/api.md, "Watch"): notify-accelerated polling, not an event
//! log. A signal means "read again now": a poll tick on a timer, and on a
//! store with push, a signal per notification as it arrives.

use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinHandle;

use crate::input::duration_ms;
use crate::store::{Push, Store};

/// The timer's period when `pollMs` is not given.
pub const DEFAULT_WATCH_POLL_MS: f64 = 2_000.0;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WatchSignal {
    /// Something was queued on this queue.
    Queued(String),
    /// This task finished.
    Done(String),
    /// The timer fired.
    Poll,
}

pub type SignalSink = Arc<dyn Fn(WatchSignal) + Send + Sync>;

/// One subscription; `stop` (or drop) ends its delivery.
pub struct Watch {
    store: Arc<Store>,
    push: Option<u64>,
    timer: JoinHandle<()>,
}

impl Watch {
    /// `queues` filters queued signals only: a done notification carries no
    /// queue, so those are never filtered.
    pub fn start(
        store: Arc<Store>,
        queues: Option<Vec<String>>,
        poll_ms: Option<f64>,
        sink: SignalSink,
        runtime: &tokio::runtime::Handle,
    ) -> Watch {
        let period = duration_ms(poll_ms.unwrap_or(DEFAULT_WATCH_POLL_MS).max(1.0))
            .max(Duration::from_millis(1));
        let pushed = sink.clone();
        let push = store
            .backend()
            .subscribe_push(Arc::new(move |push| match push {
                Push::Queued(queue) => {
                    if queues.as_ref().is_none_or(|q| q.iter().any(|q| q == queue)) {
                        pushed(WatchSignal::Queued(queue.to_string()))
                    }
                }
                Push::Done(task_id) => pushed(WatchSignal::Done(task_id.to_string())),
            }));
        let timer = runtime.spawn(async move {
            let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                ticks.tick().await;
                sink(WatchSignal::Poll);
            }
        });
        Watch { store, push, timer }
    }

    pub fn stop(&mut self) {
        self.timer.abort();
        if let Some(id) = self.push.take() {
            self.store.backend().unsubscribe_push(id);
        }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.stop()
    }
}
