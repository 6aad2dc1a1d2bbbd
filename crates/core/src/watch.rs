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

/// Which notifications a subscription hears: `queues` filters queued ones
/// only (a done notification carries no queue, so those always pass).
#[derive(Clone, Debug, Default)]
pub struct WatchFilter {
    queues: Option<Vec<String>>,
}

impl WatchFilter {
    pub fn new(queues: Option<Vec<String>>) -> WatchFilter {
        WatchFilter { queues }
    }

    /// The signal `push` is to this subscription, if it hears it.
    pub fn signal(&self, push: Push<'_>) -> Option<WatchSignal> {
        match push {
            Push::Queued(queue) => self
                .queues
                .as_ref()
                .is_none_or(|q| q.iter().any(|q| q == queue))
                .then(|| WatchSignal::Queued(queue.to_string())),
            Push::Done(task_id) => Some(WatchSignal::Done(task_id.to_string())),
        }
    }
}

/// Where a subscription's push signals are delivered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PushDelivery {
    /// Through the sink, from the store's listener.
    Sink,
    /// By the caller, which hears the notifications itself (an application
    /// executor's `listen`, on the JS thread) and asks `Watch::signal_of`.
    Caller,
}

/// One subscription; `stop` (or drop) ends its delivery.
pub struct Watch {
    store: Arc<Store>,
    filter: WatchFilter,
    push: Option<u64>,
    timer: JoinHandle<()>,
}

impl Watch {
    pub fn start(
        store: Arc<Store>,
        filter: WatchFilter,
        poll_ms: Option<f64>,
        sink: SignalSink,
        delivery: PushDelivery,
        runtime: &tokio::runtime::Handle,
    ) -> Watch {
        let period = duration_ms(poll_ms.unwrap_or(DEFAULT_WATCH_POLL_MS).max(1.0))
            .max(Duration::from_millis(1));
        let push = match delivery {
            PushDelivery::Caller => None,
            PushDelivery::Sink => {
                let (filter, pushed) = (filter.clone(), sink.clone());
                store.backend().subscribe_push(Arc::new(move |push| {
                    if let Some(signal) = filter.signal(push) {
                        pushed(signal)
                    }
                }))
            }
        };
        let timer = runtime.spawn(async move {
            let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                ticks.tick().await;
                sink(WatchSignal::Poll);
            }
        });
        Watch {
            store,
            filter,
            push,
            timer,
        }
    }

    /// The signal a notification the caller heard (`PushDelivery::Caller`)
    /// is to this subscription, if any.
    pub fn signal_of(&self, channel: &str, payload: &str) -> Option<WatchSignal> {
        Push::of_notification(channel, payload).and_then(|push| self.filter.signal(push))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queues_filter_queued_signals_only() {
        let filter = WatchFilter::new(Some(vec!["a".into()]));
        assert_eq!(
            filter.signal(Push::Queued("a")),
            Some(WatchSignal::Queued("a".into()))
        );
        assert_eq!(filter.signal(Push::Queued("b")), None);
        assert_eq!(
            filter.signal(Push::Done("task_1")),
            Some(WatchSignal::Done("task_1".into()))
        );
        assert_eq!(
            WatchFilter::default().signal(Push::Queued("b")),
            Some(WatchSignal::Queued("b".into()))
        );
        assert_eq!(Push::of_notification("other", "a"), None);
    }
}
