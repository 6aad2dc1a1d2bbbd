//! The Postgres backend: many hosts share one database; time comes from the
//! database clock, claims skip rows other claimers hold, and keyed work
//! serializes on a transaction-scoped advisory lock (docs/protocol.md,
//! "Connection setup (Postgres)").

mod claim;
mod conn;
mod dsn;
pub mod executor;
mod flow;
mod followups;
mod keyed;
mod listener;
mod native;
mod reads;
mod rows;
mod schedules;
mod shared_tx;
mod signals;
mod steps;
mod tls;
pub mod transport;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use async_trait::async_trait;

pub use self::conn::quoted_schema;
use self::conn::task;
use self::dsn::Dsn;
use self::executor::{Executor, ExecutorTransport};
use self::listener::{PushSource, PushWakes};
pub use self::native::NativeTransport;
use self::rows::{
    cancel_by_id, complete_many, get_by_id, insert_new, owned_write, resolve_key, retry_by_id,
};
use self::shared_tx::SharedTransactions;
use self::transport::{end_tx, params, PgRow, Session, Transaction, Transport};
use super::backend::{
    Backend, ClaimPlan, ClaimRequest, Conflict, HeldTask, ListFilter, NewTask, OpenMode, Outcome,
    Polled, PurgeFilter, PushSubscriber, SharedTx, SignalBackend, StatusCount, StepBackend, Target,
    TaskRef,
};
use super::flow::{Declaration, Replaced};
use super::schedule_rows::{PickStatement, ScheduleRows, SqlArg};
use super::signal_rows::{NewSignal, Sent, SignalSummaries, SignalWait, SignalWaitInput};
use super::step_rows::{ChildWait, NewStep, StepSummary, StoredStep, Suspended, Wake};
use crate::error::{Error, Result};
use crate::protocol::{self, POSTGRES as SQL, POSTGRES_PURGE_IN_ORDER};
use crate::task::Task;

/// What a connection string resolves to, as JSON (the environment left out).
pub fn dsn_fields(dsn: &str) -> Result<serde_json::Value> {
    Dsn::fields(dsn)
}

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
    wakes: PushWakes,
    /// Transactions a caller shares (`completeIn`).
    shared: SharedTransactions<T::Tx>,
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
    async fn opened(&self) -> Result<T::Opened> {
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

    async fn client(&self) -> Result<T::Conn> {
        let opened = self.opened().await?;
        self.transport.conn(&opened).await
    }

    async fn begin(&self) -> Result<T::Tx> {
        let opened = self.opened().await?;
        self.transport.begin(&opened).await
    }
}

#[async_trait]
impl<T: Transport + PushSource> Backend for PostgresBackend<T> {
    async fn connect(&self) -> Result<()> {
        self.opened().await.map(|_| ())
    }

    /// Returns at once, never waiting for a connect in flight: that one
    /// publishes nothing (`publish`).
    async fn close(&self) -> Result<()> {
        let opened = {
            let mut slot = self.opened.write().expect("opened slot");
            self.closes.fetch_add(1, Ordering::SeqCst);
            slot.take()
        };
        self.wakes.shutdown();
        if let Some(opened) = opened {
            self.transport.release(opened);
        }
        Ok(())
    }

    async fn protocol_version(&self) -> Result<i64> {
        let client = self.client().await?;
        let stored = conn::read_protocol_version(&client).await?;
        Ok(protocol::stored_version(stored.as_deref()))
    }

    async fn insert(&self, new: NewTask) -> Result<Task> {
        insert_new(&self.client().await?, &new).await
    }

    async fn insert_keyed(&self, new: NewTask, key: String, conflict: Conflict) -> Result<Task> {
        let tx = self.begin().await?;
        let outcome = keyed::keyed_insert(&tx, &new, key, conflict).await;
        end_tx(tx, outcome).await
    }

    async fn get(&self, target: Target) -> Result<Option<Task>> {
        let client = self.client().await?;
        match &target {
            Target::Id(id) => get_by_id(&client, id).await,
            Target::Key(key) => task(&client, SQL.get_by_key, &params![key]).await,
        }
    }

    async fn list(&self, f: ListFilter) -> Result<Vec<Task>> {
        reads::list(&self.client().await?, &f).await
    }

    async fn get_status(&self, target: Target) -> Result<Option<TaskRef>> {
        reads::status_of(&self.client().await?, &target).await
    }

    async fn stats(&self, queue: Option<String>) -> Result<Vec<StatusCount>> {
        reads::stats(&self.client().await?, &queue).await
    }

    async fn oldest_due(&self) -> Result<Vec<(String, i64)>> {
        reads::oldest_due(&self.client().await?).await
    }

    async fn queue_depth(&self, queue: String, max_depth: i64) -> Result<i64> {
        reads::queue_depth(&self.client().await?, &queue, max_depth).await
    }

    async fn cancel(&self, target: Target) -> Result<Option<Task>> {
        match target {
            Target::Id(id) => cancel_by_id(&self.client().await?, &id).await,
            Target::Key(key) => {
                let tx = self.begin().await?;
                let canceled = async {
                    match resolve_key(&tx, &key).await? {
                        Some(found) => cancel_by_id(&tx, &found.id).await,
                        None => Ok(None),
                    }
                }
                .await;
                end_tx(tx, canceled).await
            }
        }
    }

    async fn retry(&self, target: Target, reset_attempt: bool) -> Result<Option<Task>> {
        match target {
            Target::Id(id) => retry_by_id(&self.client().await?, &id, reset_attempt).await,
            Target::Key(key) => {
                let tx = self.begin().await?;
                let retried = async {
                    match resolve_key(&tx, &key).await? {
                        Some(found) => retry_by_id(&tx, &found.id, reset_attempt).await,
                        None => Ok(None),
                    }
                }
                .await;
                end_tx(tx, retried).await
            }
        }
    }

    async fn purge(&self, f: PurgeFilter) -> Result<Vec<String>> {
        let tx = self.begin().await?;
        let purged = async {
            tx.batch(POSTGRES_PURGE_IN_ORDER).await?;
            reads::purge_query(&tx, SQL.purge, &f)
                .await?
                .iter()
                .map(|row| row.text(0))
                .collect()
        }
        .await;
        end_tx(tx, purged).await
    }

    async fn purge_count(&self, f: PurgeFilter) -> Result<i64> {
        let counted = reads::purge_query(&self.client().await?, SQL.purge_count, &f).await?;
        match counted.first() {
            Some(row) => row.int(0),
            None => Ok(0),
        }
    }

    async fn poll(
        &self,
        request: ClaimRequest,
        completions: Vec<(String, Option<String>)>,
        probe: bool,
        mut plan: Box<dyn ClaimPlan>,
    ) -> Result<Polled> {
        if probe && completions.is_empty() {
            let client = self.client().await?;
            // An idle poll is this one read (docs/protocol.md, "Claim").
            self.wakes.watch_queues(&request.queues);
            if !claim::claimable(&client, &request).await? {
                return Ok(Polled {
                    completed: Vec::new(),
                    plan: None,
                });
            }
        }
        let tx = self.begin().await?;
        let drawn = claim::claim_draws(&tx, &request, completions, &mut *plan).await;
        let completed = match drawn {
            Ok(completed) if plan.keep() => end_tx(tx, Ok(completed)).await?,
            Ok(completed) => {
                tx.rollback().await?;
                completed
            }
            Err(err) => return end_tx(tx, Err(err)).await,
        };
        Ok(Polled {
            completed,
            plan: Some(plan),
        })
    }

    async fn heartbeat(&self, owned: HeldTask, lease_ms: i64) -> Result<Task> {
        owned_write(
            &self.client().await?,
            SQL.heartbeat,
            &owned,
            &params![&lease_ms],
        )
        .await
    }

    async fn heartbeat_batch(
        &self,
        ids: Vec<String>,
        worker_id: String,
        lease_ms: i64,
    ) -> Result<Vec<(String, bool)>> {
        rows::heartbeat_batch(&self.client().await?, &ids, &worker_id, lease_ms).await
    }

    async fn progress(
        &self,
        owned: HeldTask,
        progress: Option<f64>,
        message: Option<String>,
    ) -> Result<Task> {
        owned_write(
            &self.client().await?,
            SQL.progress,
            &owned,
            &params![&progress, &message],
        )
        .await
    }

    async fn finish(&self, owned: HeldTask, outcome: Outcome) -> Result<Task> {
        rows::finish(&self.client().await?, &owned, &outcome).await
    }

    async fn complete_batch(
        &self,
        worker_id: String,
        items: Vec<(String, Option<String>)>,
    ) -> Result<Vec<String>> {
        complete_many(&self.client().await?, &worker_id, items).await
    }

    async fn claim_wake(&self, queues: &[String], _since: u64, timeout: Duration) {
        self.wakes.claim_wake(queues, timeout).await
    }

    async fn task_done_wake(&self, task_id: &str, _since: u64, timeout: Duration) {
        self.wakes.task_done_wake(task_id, timeout).await
    }

    fn subscribe_push(&self, subscriber: PushSubscriber) -> Option<u64> {
        Some(self.wakes.subscribe(subscriber))
    }

    fn unsubscribe_push(&self, id: u64) {
        self.wakes.unsubscribe(id)
    }
    async fn followups_installed(&self) -> Result<bool> {
        followups::installed(&self.client().await?).await
    }

    async fn release_followups(&self) -> Result<u64> {
        followups::release(&self.client().await?).await
    }

    async fn schedules_installed(&self) -> Result<bool> {
        schedules::installed(&self.client().await?).await
    }

    async fn install_schedules(&self) -> Result<()> {
        schedules::install(self.begin().await?).await
    }

    async fn declare_flow(
        &self,
        worker_id: String,
        declarations: Vec<Declaration>,
    ) -> Result<Vec<Replaced>> {
        flow::declare(self.begin().await?, &worker_id, &declarations).await
    }

    async fn schedule_read(&self, pick: PickStatement, args: Vec<SqlArg>) -> Result<ScheduleRows> {
        schedules::rows(&self.client().await?, pick, &args).await
    }

    async fn schedule_write(&self, pick: PickStatement, args: Vec<SqlArg>) -> Result<ScheduleRows> {
        self.schedule_read(pick, args).await
    }

    fn steps(&self) -> &dyn StepBackend {
        self
    }
    fn signals(&self) -> &dyn SignalBackend {
        self
    }

    async fn shared_tx_open(&self) -> Result<SharedTx> {
        let tx = self.begin().await?;
        let session = tx.handle();
        let id = self.shared.open(tx);
        Ok(SharedTx { id, session })
    }

    async fn shared_tx_query(
        &self,
        id: u64,
        sql: String,
        values: Option<String>,
    ) -> Result<String> {
        let slot = self.shared.slot(id)?;
        let held = slot.lock().await;
        let tx = held.as_ref().ok_or_else(|| shared_tx::not_open(id))?;
        match values {
            Some(values) => tx.query_objects(&sql, &values).await,
            None => tx.batch(&sql).await.map(|()| "[]".to_string()),
        }
    }

    async fn shared_tx_complete(
        &self,
        id: u64,
        owned: HeldTask,
        result: Option<String>,
    ) -> Result<Task> {
        let tx = self.shared.take(id).await?;
        let completed = owned_write(&tx, SQL.complete, &owned, &params![&result]).await;
        end_tx(tx, completed).await
    }

    async fn shared_tx_abort(&self, id: u64) -> Result<()> {
        self.shared.take(id).await?.rollback().await
    }
}

#[async_trait]
impl<T: Transport + PushSource> StepBackend for PostgresBackend<T> {
    async fn steps_installed(&self) -> Result<bool> {
        steps::installed(&self.client().await?).await
    }

    async fn install_steps(&self) -> Result<()> {
        steps::install(self.begin().await?).await
    }

    async fn load_steps(&self, task_id: String) -> Result<Vec<StoredStep>> {
        steps::load(&self.client().await?, &task_id).await
    }

    async fn step_summaries(&self, task_id: String) -> Result<Vec<StepSummary>> {
        steps::summaries(&self.client().await?, &task_id).await
    }

    async fn record_step(&self, owned: HeldTask, step: NewStep) -> Result<i64> {
        steps::record(&self.client().await?, &owned, &step).await
    }

    async fn suspend(
        &self,
        owned: HeldTask,
        step: Option<NewStep>,
        wake: Wake,
    ) -> Result<Suspended> {
        let tx = self.begin().await?;
        let suspended = steps::suspend(&tx, &owned, step.as_ref(), wake).await;
        end_tx(tx, suspended).await
    }

    async fn wait_for_child(
        &self,
        owned: HeldTask,
        step: Option<NewStep>,
        child_id: String,
        recheck_ms: i64,
    ) -> Result<ChildWait> {
        let tx = self.begin().await?;
        let waited = steps::wait_for_child(&tx, &owned, step.as_ref(), &child_id, recheck_ms).await;
        end_tx(tx, waited).await
    }

    async fn wake_parents(&self, child_ids: Vec<String>) -> Result<()> {
        steps::wake_parents(&self.client().await?, &child_ids).await
    }

    async fn cancel_children(&self, task_id: String) -> Result<Vec<Task>> {
        let tx = self.begin().await?;
        let canceled = steps::cancel_children(&tx, &task_id).await;
        end_tx(tx, canceled).await
    }
}

#[async_trait]
impl<T: Transport + PushSource> SignalBackend for PostgresBackend<T> {
    async fn signals_installed(&self) -> Result<bool> {
        signals::installed(&self.client().await?).await
    }

    async fn install_signals(&self) -> Result<()> {
        signals::install(self.begin().await?).await
    }

    async fn send_signal(&self, target: Target, signal: NewSignal) -> Result<Sent> {
        let tx = self.begin().await?;
        let sent = signals::send(&tx, &target, &signal).await;
        end_tx(tx, sent).await
    }

    async fn wait_for_signal(&self, owned: HeldTask, wait: SignalWaitInput) -> Result<SignalWait> {
        let tx = self.begin().await?;
        let waited = signals::wait(&tx, &owned, &wait).await;
        end_tx(tx, waited).await
    }

    async fn signal_summaries(&self, task_id: String) -> Result<SignalSummaries> {
        signals::summaries(&self.client().await?, &task_id).await
    }
}
