//! Backpressure: `QueueDepthGate` (docs/api.md, "Backpressure") holds submits
//! while a queue is at its depth limit. Probes are shared and their headroom is
//! handed out as grants, so a burst of producers costs one read per 64 submits.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;

use super::backend::Backend;
use crate::error::{Error, Result};
use crate::input::{integer_at_least_one, Options};

const GRANT_CAP: i64 = 64;
const MAX_BACKOFF_MS: f64 = 5_000.0;
pub const DEFAULT_MAX_QUEUE_WAIT_MS: f64 = 600_000.0;
pub const DEFAULT_QUEUE_POLL_INTERVAL_MS: f64 = 250.0;

/// `QueueDepthLimit`: one limit for every queue, or limits for listed queues only.
#[derive(Clone, Debug)]
pub enum QueueDepthLimit {
    All(f64),
    PerQueue(BTreeMap<String, f64>),
}

#[derive(Clone, Debug)]
pub struct BackpressureOptions {
    pub max_queue_depth: QueueDepthLimit,
    pub max_queue_wait_ms: Option<f64>,
    pub queue_poll_interval_ms: Option<f64>,
}

impl BackpressureOptions {
    /// The options that ask for backpressure.
    pub const KEYS: [&'static str; 3] = ["maxQueueDepth", "maxQueueWaitMs", "queuePollIntervalMs"];

    /// `QueueDepthGate`'s options as JS sends them (`input::Options`).
    pub fn parse(options: &str) -> Result<BackpressureOptions> {
        let mut fields = Options::parse("backpressure options", options, &Self::KEYS)?;
        let field = fields.field("maxQueueDepth");
        BackpressureOptions::read(&mut fields)?
            .ok_or_else(|| Error::Invalid(format!("{field} must be a number, got undefined")))
    }

    /// `maxQueueDepth` (a number, or an object of numbers by queue) and the
    /// others; `None` when `maxQueueDepth` is absent (no gate).
    pub fn read(fields: &mut Options) -> Result<Option<BackpressureOptions>> {
        let max_queue_depth = if fields.holds_object("maxQueueDepth") {
            fields
                .numbers_by_name("maxQueueDepth")?
                .map(|per_queue| QueueDepthLimit::PerQueue(per_queue.into_iter().collect()))
        } else {
            fields.number("maxQueueDepth")?.map(QueueDepthLimit::All)
        };
        let max_queue_wait_ms = fields.number("maxQueueWaitMs")?;
        let queue_poll_interval_ms = fields.number("queuePollIntervalMs")?;
        Ok(max_queue_depth.map(|max_queue_depth| BackpressureOptions {
            max_queue_depth,
            max_queue_wait_ms,
            queue_poll_interval_ms,
        }))
    }
}

/// Where the gate reads a queue's headroom: a store's backend, or (from the
/// binding) an application's object with a `queueDepth` method.
#[async_trait]
pub trait DepthProbe: Send + Sync {
    async fn queue_depth(&self, queue: String, max_depth: i64) -> Result<i64>;
}

#[async_trait]
impl DepthProbe for Arc<dyn Backend> {
    async fn queue_depth(&self, queue: String, max_depth: i64) -> Result<i64> {
        Backend::queue_depth(&**self, queue, max_depth).await
    }
}

#[derive(Default)]
struct QueueState {
    grant: i64,
    /// Bumped by every probe, so waiters that queued behind one can tell it ran.
    probes: u64,
}

pub struct QueueDepthGate {
    probe: Arc<dyn DepthProbe>,
    limit: QueueDepthLimit,
    max_wait_ms: f64,
    first_backoff_ms: f64,
    queues: Mutex<HashMap<String, Arc<tokio::sync::Mutex<QueueState>>>>,
}

impl QueueDepthGate {
    pub fn new(probe: Arc<dyn DepthProbe>, opts: BackpressureOptions) -> Result<QueueDepthGate> {
        let check = |queue: &str, v: f64| {
            integer_at_least_one(&format!("maxQueueDepth for {queue}"), v).map(|_| ())
        };
        match &opts.max_queue_depth {
            QueueDepthLimit::All(v) => check("*", *v)?,
            QueueDepthLimit::PerQueue(map) => {
                for (queue, v) in map {
                    check(queue, *v)?;
                }
            }
        }
        Ok(QueueDepthGate {
            probe,
            limit: opts.max_queue_depth,
            max_wait_ms: opts.max_queue_wait_ms.unwrap_or(DEFAULT_MAX_QUEUE_WAIT_MS),
            first_backoff_ms: opts
                .queue_poll_interval_ms
                .unwrap_or(DEFAULT_QUEUE_POLL_INTERVAL_MS),
            queues: Mutex::new(HashMap::new()),
        })
    }

    /// The limit that applies to `queue`, `None` when it is ungated.
    pub fn limit_for(&self, queue: &str) -> Option<i64> {
        match &self.limit {
            QueueDepthLimit::All(v) => Some(*v as i64),
            QueueDepthLimit::PerQueue(map) => map.get(queue).map(|v| *v as i64),
        }
    }

    /// Wait for headroom on `queue`, or fail with `QueueFull` after `maxQueueWaitMs`.
    pub async fn acquire(&self, queue: &str) -> Result<()> {
        let Some(limit) = self.limit_for(queue) else {
            return Ok(());
        };
        let state = self
            .queues
            .lock()
            .expect("gate map lock")
            .entry(queue.to_string())
            .or_default()
            .clone();
        let start = Instant::now();
        let mut backoff_ms = self.first_backoff_ms;
        loop {
            let seen = state.lock().await.probes;
            {
                // Holding the queue's lock across the probe is what makes concurrent
                // acquirers share one probe instead of each issuing their own.
                let mut s = state.lock().await;
                if s.grant > 0 {
                    s.grant -= 1;
                    return Ok(());
                }
                if s.probes == seen {
                    let headroom = self.probe.queue_depth(queue.to_string(), limit).await?;
                    s.probes += 1;
                    s.grant = headroom.clamp(0, GRANT_CAP);
                    if s.grant > 0 {
                        s.grant -= 1;
                        return Ok(());
                    }
                }
            }
            let waited = start.elapsed().as_millis() as f64;
            if waited >= self.max_wait_ms {
                return Err(Error::QueueFull {
                    queue: queue.to_string(),
                    max_depth: limit,
                    waited_ms: waited as i64,
                });
            }
            let sleep = backoff_ms.min(self.max_wait_ms - waited).max(0.0);
            tokio::time::sleep(Duration::from_millis(sleep as u64)).await;
            backoff_ms = (backoff_ms * 2.0).min(MAX_BACKOFF_MS);
        }
    }
}
