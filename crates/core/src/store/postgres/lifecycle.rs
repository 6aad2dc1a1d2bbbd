//! The Postgres backend's state: its transport, opened on first use (the
//! migrations and checks passed first) and closed, and the connections and
//! transactions work runs on. `mod.rs` implements `Backend` on it, each
//! feature's file its sub-trait.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use super::conn;
use super::dsn::Dsn;
use super::executor::{Executor, ExecutorTransport};
use super::listener::{PushSource, PushWakes};
use super::native::NativeTransport;
use super::shared_tx::SharedTransactions;
use super::transport::Transport;
use crate::error::{Error, Result};
use crate::store::backend::OpenMode;

fn closed_while_connecting() -> Error {
    Error::Connection("store was closed while connecting".into())
}

/// Pool size when none is given: what node-postgres, the reference's driver, uses.
pub const DEFAULT_POOL_SIZE: usize = 10;

/// The Postgres dialect over a transport: the native pool (`new`) or an
/// application's executor (`over_executor`) run the same statements.
pub struct PostgresBackend<T: Transport> {
    transport: T,
    mode: OpenMode,
    /// The schema the connection must resolve to (the split check at connect).
    schema: Option<String>,
    opened: RwLock<Option<T::Opened>>,
    /// Serializes connect attempts (`close` never waits on it).
    lifecycle: tokio::sync::Mutex<()>,
    /// Finished connect attempts, so callers that waited on one share its failure.
    attempts: AtomicU64,
    /// Bumped by every `close`: a connect begun before it publishes nothing.
    closes: AtomicU64,
    last_failure: Mutex<Option<(u64, Error)>>,
    pub(super) wakes: PushWakes,
    /// Transactions a caller shares (`completeIn`).
    pub(super) shared: SharedTransactions<T::Tx>,
}

impl PostgresBackend<NativeTransport> {
    /// Parses the DSN now; connects on first use.
    pub fn new(dsn: &str, pool_size: Option<usize>) -> Result<Self> {
        PostgresBackend::in_schema(dsn, pool_size, None)
    }

    /// `schema`: the store's own schema, created if absent; every connection
    /// resolves to it alone. Checked as a plain identifier at connect.
    pub fn in_schema(dsn: &str, pool_size: Option<usize>, schema: Option<String>) -> Result<Self> {
        let mut backend = PostgresBackend::over(NativeTransport {
            dsn: Dsn::parse(dsn)?,
            pool_size: pool_size.unwrap_or(DEFAULT_POOL_SIZE),
            schema: schema.clone(),
        });
        backend.schema = schema;
        Ok(backend)
    }
}

impl PostgresBackend<ExecutorTransport> {
    /// Every statement through the application's executor, which is never
    /// closed; `schema` is where its connections must resolve (the executor
    /// sets its search_path).
    pub fn over_executor(executor: Arc<dyn Executor>, schema: Option<String>) -> Self {
        let mut backend = PostgresBackend::over(ExecutorTransport::new(executor));
        backend.schema = schema;
        backend
    }
}

impl<T: Transport + PushSource> PostgresBackend<T> {
    fn over(transport: T) -> Self {
        PostgresBackend {
            transport,
            mode: OpenMode::Migrate,
            schema: None,
            opened: RwLock::new(None),
            lifecycle: tokio::sync::Mutex::new(()),
            attempts: AtomicU64::new(0),
            closes: AtomicU64::new(0),
            last_failure: Mutex::new(None),
            wakes: PushWakes::default(),
            shared: SharedTransactions::default(),
        }
    }

    /// Open the database the `mode` way (`OpenMode::Migrate` by default).
    pub fn with_mode(mut self, mode: OpenMode) -> Self {
        self.mode = mode;
        self
    }

    /// Whether push wakeups are live (the LISTEN subscription is on).
    pub fn listening(&self) -> bool {
        self.wakes.listening()
    }

    /// The push wakes an executor's subscription feeds.
    pub fn wakes(&self) -> &PushWakes {
        &self.wakes
    }

    fn current(&self) -> Option<T::Opened> {
        self.opened.read().expect("opened slot").clone()
    }

    /// The published transport, opening it first if needed. Callers that
    /// arrive while an attempt runs wait for it and share its outcome; those
    /// that arrived before a `close` get "closed while connecting".
    pub(super) async fn opened(&self) -> Result<T::Opened> {
        if let Some(opened) = self.current() {
            return Ok(opened);
        }
        let closes = self.closes.load(Ordering::SeqCst);
        let closed_since = || self.closes.load(Ordering::SeqCst) != closes;
        let seen = self.attempts.load(Ordering::SeqCst);
        let _open = self.lifecycle.lock().await;
        if let Some(opened) = self.current() {
            return Ok(opened);
        }
        if closed_since() {
            return Err(closed_while_connecting());
        }
        if let Some((attempt, err)) = &*self.last_failure.lock().expect("last failure") {
            if *attempt > seen {
                return Err(err.clone());
            }
        }
        let result = match self.open().await {
            Ok(opened) => self.publish(opened, closes),
            Err(_) if closed_since() => Err(closed_while_connecting()),
            Err(err) => Err(err),
        };
        let attempt = self.attempts.fetch_add(1, Ordering::SeqCst) + 1;
        match &result {
            // Not shared: callers that came after the close start afresh.
            Err(_) if closed_since() => {}
            Err(err) => {
                *self.last_failure.lock().expect("last failure") = Some((attempt, err.clone()))
            }
            Ok(_) => {}
        }
        result
    }

    /// Publish an open transport and start LISTEN, unless a `close` came
    /// after the attempt began: then it is released and nothing starts.
    /// `close` takes the slot under the same lock, so one of the two wins.
    fn publish(&self, opened: T::Opened, closes: u64) -> Result<T::Opened> {
        let mut slot = self.opened.write().expect("opened slot");
        if self.closes.load(Ordering::SeqCst) != closes {
            drop(slot);
            self.transport.release(opened);
            return Err(closed_while_connecting());
        }
        *slot = Some(opened.clone());
        self.wakes.start(self.transport.push_source());
        Ok(opened)
    }

    /// A transport that is only published once migrations and the version
    /// check passed; a failed open is released.
    async fn open(&self) -> Result<T::Opened> {
        let opened = self.transport.open().await?;
        let prepared = async {
            match self.mode {
                OpenMode::Migrate | OpenMode::MigrateOwn => {
                    let conn = self.transport.conn(&opened).await?;
                    conn::check_schema(&conn, self.schema.as_deref()).await?;
                    if T::READS_VERSION_BEFORE_MIGRATING {
                        conn::check_version_before_migrating(&conn).await?;
                    }
                    drop(conn);
                    conn::migrate(&self.transport, &opened).await?;
                }
                OpenMode::Existing => {
                    let conn = self.transport.conn(&opened).await?;
                    conn::check_existing(&conn, self.transport.target()).await?
                }
            }
            let conn = self.transport.conn(&opened).await?;
            conn::check_protocol_version(&conn).await
        }
        .await;
        match prepared {
            Ok(()) => Ok(opened),
            Err(err) => {
                self.transport.release(opened);
                Err(err)
            }
        }
    }

    pub(super) async fn client(&self) -> Result<T::Conn> {
        let opened = self.opened().await?;
        self.transport.conn(&opened).await
    }

    pub(super) async fn begin(&self) -> Result<T::Tx> {
        let opened = self.opened().await?;
        self.transport.begin(&opened).await
    }

    /// Release the transport at once, never waiting for a connect in
    /// flight: that one publishes nothing (`publish`).
    pub(super) fn disconnect(&self) {
        let opened = {
            let mut slot = self.opened.write().expect("opened slot");
            self.closes.fetch_add(1, Ordering::SeqCst);
            slot.take()
        };
        self.wakes.shutdown();
        if let Some(opened) = opened {
            self.transport.release(opened);
        }
    }
}
