//! The SQLite backend's state: its file, the engine opened on first use and
//! closed, and where work runs (the writer's queue, a transaction of the
//! writer's, a reader). `mod.rs` implements `Backend` on it, each feature's
//! file its sub-trait.

use std::sync::{Arc, RwLock};
use std::time::Duration;

use rusqlite::Connection;

use super::engine::{Engine, OnCommit};
use super::open::open_engine;
use super::wal_watch::WalWatch;
use crate::clock::Clock;
use crate::error::{Error, Result};
use crate::store::backend::OpenMode;

pub struct SqliteBackend {
    path: String,
    busy_timeout: Duration,
    mode: OpenMode,
    engine: RwLock<Option<Arc<Engine>>>,
    /// Serializes connect/close so concurrent first calls share one open.
    lifecycle: tokio::sync::Mutex<()>,
    /// Ends idle sleeps and waits early when the file changes.
    wakes: Option<Arc<WalWatch>>,
    /// The time every statement binds (the host's unless a test's).
    pub(super) clock: Clock,
}

impl SqliteBackend {
    pub fn new(path: &str, busy_timeout: Duration) -> SqliteBackend {
        SqliteBackend {
            path: path.to_string(),
            busy_timeout,
            mode: OpenMode::Migrate,
            engine: RwLock::new(None),
            lifecycle: tokio::sync::Mutex::new(()),
            wakes: WalWatch::new(path),
            clock: Clock::Host,
        }
    }

    /// Bind `clock`'s time instead of the host's (cairnq/testing).
    pub fn with_clock(mut self, clock: Clock) -> SqliteBackend {
        self.clock = clock;
        self
    }

    /// Open the file the `mode` way (`OpenMode::Migrate` by default).
    pub fn with_mode(mut self, mode: OpenMode) -> SqliteBackend {
        self.mode = mode;
        self
    }

    pub(super) fn current(&self) -> Option<Arc<Engine>> {
        self.engine.read().expect("engine slot").clone()
    }

    pub(super) async fn engine(&self) -> Result<Arc<Engine>> {
        if let Some(engine) = self.current() {
            return Ok(engine);
        }
        let _open = self.lifecycle.lock().await;
        if let Some(engine) = self.current() {
            return Ok(engine);
        }
        let (path, busy, mode) = (self.path.clone(), self.busy_timeout, self.mode);
        let on_commit: OnCommit = self.wakes.clone().map(|wakes| {
            Box::new(move |inline| wakes.committed(inline)) as Box<dyn Fn(bool) + Send + Sync>
        });
        let engine = tokio::task::spawn_blocking(move || open_engine(&path, busy, mode, on_commit))
            .await
            .map_err(|e| Error::Connection(format!("opening {}: {e}", self.path)))??;
        let engine = Arc::new(engine);
        *self.engine.write().expect("engine slot") = Some(engine.clone());
        Ok(engine)
    }

    pub(super) async fn changed(&self, since: u64, timeout: Duration) {
        match &self.wakes {
            Some(wakes) => wakes.changed(since, timeout).await,
            None => tokio::time::sleep(timeout).await,
        }
    }

    pub(super) async fn write<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Connection) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        self.engine().await?.write(work).await
    }

    pub(super) async fn transaction<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Connection) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        self.engine().await?.transaction(work).await
    }

    pub(super) async fn read<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Connection) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        self.engine().await?.read(work).await
    }

    /// Shut the engine down; a later operation opens it again.
    pub(super) async fn close_engine(&self) -> Result<()> {
        let _guard = self.lifecycle.lock().await;
        let engine = self.engine.write().expect("engine slot").take();
        if let Some(engine) = engine {
            tokio::task::spawn_blocking(move || engine.shutdown())
                .await
                .map_err(|e| Error::Connection(format!("closing the store: {e}")))?;
        }
        Ok(())
    }

    /// Wake this process's sleepers on the file, as a commit would.
    pub(super) fn wake_here(&self) {
        if let Some(wakes) = &self.wakes {
            wakes.wake_here();
        }
    }

    /// A mark of the file changes seen so far (`Backend::wake_ticket`).
    pub(super) fn change_ticket(&self) -> u64 {
        self.wakes.as_ref().map_or(0, |wakes| wakes.ticket())
    }
}
