//! Retention (docs/api.md, "Retention"): delete finished tasks past a cutoff on
//! a schedule, in bounded batches, for as long as the handle that owns it is
//! open.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::task::JoinHandle;

use crate::error::{Error, Result};
use crate::input::{duration_ms, finite_at_least};
use crate::store::{Store, DEFAULT_PURGE_LIMIT};

/// Hourly: a day of retention then never carries more than an hour of extra rows.
pub const DEFAULT_INTERVAL_MS: f64 = 3_600_000.0;

#[derive(Clone, Debug)]
pub struct RetentionOptions {
    pub older_than_ms: f64,
    pub interval_ms: Option<f64>,
    pub limit: Option<f64>,
}

pub type ErrorHook = Arc<dyn Fn(Error) + Send + Sync>;

pub struct RetentionSweeper {
    inner: Arc<Inner>,
    running: Mutex<Option<JoinHandle<()>>>,
}

struct Inner {
    store: Arc<Store>,
    older_than_ms: f64,
    interval: Duration,
    limit: f64,
    on_error: Option<ErrorHook>,
    stopping: AtomicBool,
    wake: Notify,
}

impl RetentionSweeper {
    pub fn new(
        store: Arc<Store>,
        opts: RetentionOptions,
        on_error: Option<ErrorHook>,
    ) -> Result<RetentionSweeper> {
        finite_at_least("retention.olderThanMs", opts.older_than_ms, 0.0)?;
        let interval_ms = finite_at_least(
            "retention.intervalMs",
            opts.interval_ms.unwrap_or(DEFAULT_INTERVAL_MS),
            1.0,
        )?;
        Ok(RetentionSweeper {
            inner: Arc::new(Inner {
                store,
                older_than_ms: opts.older_than_ms,
                interval: duration_ms(interval_ms),
                limit: opts.limit.unwrap_or(DEFAULT_PURGE_LIMIT as f64),
                on_error,
                stopping: AtomicBool::new(false),
                wake: Notify::new(),
            }),
            running: Mutex::new(None),
        })
    }

    /// Start the schedule on `runtime` (no-op while it runs). It sleeps first:
    /// a process that restarts often must not purge on every boot.
    pub fn start(&self, runtime: &tokio::runtime::Handle) {
        let mut running = self.running.lock().expect("sweeper lock");
        if running.as_ref().is_some_and(|h| !h.is_finished()) {
            return;
        }
        self.inner.stopping.store(false, Ordering::SeqCst);
        let inner = self.inner.clone();
        *running = Some(runtime.spawn(async move {
            loop {
                tokio::select! {
                    _ = tokio::time::sleep(inner.interval) => {}
                    _ = inner.wake.notified() => {}
                }
                if inner.stopping.load(Ordering::SeqCst) {
                    return;
                }
                if let Err(err) = inner.sweep().await {
                    if let Some(hook) = &inner.on_error {
                        hook(err);
                    }
                }
            }
        }));
    }

    /// Stop the schedule and wait for a sweep in flight, so no purge outlives the store.
    pub async fn stop(&self) {
        self.inner.stopping.store(true, Ordering::SeqCst);
        self.inner.wake.notify_one();
        let handle = self.running.lock().expect("sweeper lock").take();
        if let Some(handle) = handle {
            let _ = handle.await;
        }
    }

    /// Purge everything past the cutoff now, batch by batch; returns the count.
    pub async fn sweep(&self) -> Result<usize> {
        self.inner.sweep().await
    }
}

impl Inner {
    async fn sweep(&self) -> Result<usize> {
        let mut deleted = 0;
        loop {
            let ids = self
                .store
                .purge(Some(self.older_than_ms), Some(self.limit))
                .await?;
            deleted += ids.len();
            if (ids.len() as f64) < self.limit || self.stopping.load(Ordering::SeqCst) {
                return Ok(deleted);
            }
            // Between batches, let the rest of the process (and other writers) in.
            tokio::task::yield_now().await;
        }
    }
}
