//! The Postgres backend: many hosts share one database; time comes from the
//! database clock, claims skip rows other claimers hold, and keyed work
//! serializes on a transaction-scoped advisory lock (docs/protocol.md,
//! "Connection setup (Postgres)").

mod conn;
mod dsn;
pub mod executor;
mod listener;
mod native;
mod schedules;
mod steps;
mod tls;
pub mod transport;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use async_trait::async_trait;

pub use self::conn::quoted_schema;
use self::conn::{execute, rows, task, tasks};
use self::dsn::Dsn;
use self::executor::{Executor, ExecutorTransport};
use self::listener::{PushSource, PushWakes};
pub use self::native::NativeTransport;
use self::transport::{end_tx, params, Param, PgRow, Session, Transaction, Transport};
use super::backend::{
    Backend, ClaimPlan, ClaimRequest, Conflict, Debounce, HeldTask, KeyDecision, ListFilter,
    NewTask, OpenMode, Outcome, Polled, PurgeFilter, PushSubscriber, SharedTx, StatusCount,
    StepBackend, Target, TaskRef,
};
use super::schedule_rows::{PickStatement, ScheduleRow, SqlArg};
use crate::error::{Error, Result};
use crate::protocol::{self, specialize, ClaimShape, POSTGRES as SQL, POSTGRES_PURGE_IN_ORDER};
use crate::task::{Status, Task};

/// An open shared transaction; `None` once its owner has ended it.
type SharedSlot<X> = Arc<tokio::sync::Mutex<Option<X>>>;

/// What a connection string resolves to, as JSON (the environment left out).
pub fn dsn_fields(dsn: &str) -> Result<serde_json::Value> {
    Dsn::fields(dsn)
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
    /// Serializes connect/close.
    lifecycle: tokio::sync::Mutex<()>,
    /// Finished connect attempts, so callers that waited on one share its failure.
    attempts: AtomicU64,
    /// Bumped by every `close`: a connect begun before it publishes nothing.
    closes: AtomicU64,
    last_failure: Mutex<Option<(u64, Error)>>,
    wakes: PushWakes,
    /// Transactions a caller shares (`completeIn`), by id.
    /// A caller's statements may overlap (`Promise.all`): each waits its turn.
    shared: Mutex<HashMap<u64, SharedSlot<T::Tx>>>,
    next_shared: AtomicU64,
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
            shared: Mutex::new(HashMap::new()),
            next_shared: AtomicU64::new(1),
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
    /// arrive while an attempt runs wait for it and share its outcome.
    async fn opened(&self) -> Result<T::Opened> {
        if let Some(opened) = self.current() {
            return Ok(opened);
        }
        let closes = self.closes.load(Ordering::SeqCst);
        let seen = self.attempts.load(Ordering::SeqCst);
        let _open = self.lifecycle.lock().await;
        if let Some(opened) = self.current() {
            return Ok(opened);
        }
        if let Some((attempt, err)) = &*self.last_failure.lock().expect("last failure") {
            if *attempt > seen {
                return Err(err.clone());
            }
        }
        let mut result = self.open().await;
        if self.closes.load(Ordering::SeqCst) != closes {
            // Closed meanwhile: nothing is published, no LISTEN starts.
            if let Ok(opened) = result {
                self.transport.release(opened);
            }
            result = Err(Error::Connection(
                "store was closed while connecting".into(),
            ));
        }
        let attempt = self.attempts.fetch_add(1, Ordering::SeqCst) + 1;
        match result {
            Ok(opened) => {
                *self.opened.write().expect("opened slot") = Some(opened.clone());
                self.wakes.start(self.transport.push_source());
                Ok(opened)
            }
            Err(err) => {
                *self.last_failure.lock().expect("last failure") = Some((attempt, err.clone()));
                Err(err)
            }
        }
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

    fn shared_slot(&self, id: u64, end: bool) -> Result<SharedSlot<T::Tx>> {
        let mut shared = self.shared.lock().expect("shared transactions");
        let slot = if end {
            shared.remove(&id)
        } else {
            shared.get(&id).cloned()
        };
        slot.ok_or_else(|| Error::Invalid(format!("no open shared transaction {id}")))
    }

    /// The shared transaction `id`, no longer shared: the caller ends it.
    async fn take_shared(&self, id: u64) -> Result<T::Tx> {
        let slot = self.shared_slot(id, true)?;
        let taken = slot.lock().await.take();
        taken.ok_or_else(|| Error::Invalid(format!("no open shared transaction {id}")))
    }
}

/// The parameters of `filters` that are set, for `protocol::specialize`.
fn set_filters<'a>(filters: &[(&'a str, bool)]) -> Vec<&'a str> {
    filters
        .iter()
        .filter(|(_, set)| *set)
        .map(|(param, _)| *param)
        .collect()
}

/// `purge` or `purge_count` with `f`'s set filters made required.
fn purge_statement(statement: &'static str, f: &PurgeFilter) -> &'static str {
    specialize(
        statement,
        &set_filters(&[
            ("$2::text", f.queue.is_some()),
            ("$3::text", f.status.is_some()),
            ("$4::text", f.name.is_some()),
        ]),
    )
}

async fn get_by_id<S: Session>(client: &S, id: &str) -> Result<Option<Task>> {
    task(client, SQL.get, &params![&id]).await
}

async fn insert_new<S: Session>(client: &S, new: &NewTask) -> Result<Task> {
    let params = params![
        &new.id,
        &new.name,
        &new.queue,
        &new.payload,
        &new.metadata,
        &new.max_attempts,
        &new.priority,
        &new.delay_ms,
        &new.parent_id,
        &new.root_id,
        &new.correlation_id,
    ];
    task(client, SQL.insert_task, &params)
        .await?
        .ok_or_else(|| Error::Database {
            code: tokio_postgres::error::SqlState::NO_DATA.code().to_string(),
            message: "insert returned no row".into(),
        })
}

async fn cancel_by_id<S: Session>(client: &S, id: &str) -> Result<Option<Task>> {
    task(client, SQL.cancel, &params![&id]).await
}

async fn retry_by_id<S: Session>(
    client: &S,
    id: &str,
    reset_attempt: bool,
) -> Result<Option<Task>> {
    task(client, SQL.retry, &params![&id, &reset_attempt]).await
}

/// The task a key points at, read under the key's advisory lock (`lock_key`
/// first, as every SDK does, then `get_key`). A pointer whose task was purged
/// meanwhile reads as no task.
async fn resolve_key<S: Session>(tx: &S, key: &str) -> Result<Option<Task>> {
    execute(tx, SQL.lock_key, &params![&key]).await?;
    let pointer = rows(tx, SQL.get_key, &params![&key]).await?;
    match pointer.first() {
        Some(row) => {
            let id = row.text(0)?;
            get_by_id(tx, &id).await
        }
        None => Ok(None),
    }
}

/// A write guarded by the ownership predicate: no row means the lease is lost.
async fn owned_write<S: Session>(
    client: &S,
    sql: &str,
    owned: &HeldTask,
    extra: &[Param<'_>],
) -> Result<Task> {
    let mut values = params![&owned.task_id, &owned.worker_id].to_vec();
    values.extend_from_slice(extra);
    task(client, sql, &values)
        .await?
        .ok_or_else(|| Error::LostLease {
            task_id: owned.task_id.clone(),
        })
}

/// `complete_batch` over `(id, result JSON)` pairs of one worker.
async fn complete_many<S: Session>(
    client: &S,
    worker_id: &str,
    items: Vec<(String, Option<String>)>,
) -> Result<Vec<String>> {
    let (ids, results): (Vec<String>, Vec<Option<String>>) = items.into_iter().unzip();
    rows(
        client,
        SQL.complete_batch,
        &params![&ids, &results, &worker_id],
    )
    .await?
    .iter()
    .map(|row| row.text(0))
    .collect()
}

/// A keyed submit under the key's lock (docs/protocol.md, "Keyed submit").
async fn keyed_insert<S: Session>(
    tx: &S,
    new: &NewTask,
    key: String,
    conflict: Conflict,
) -> Result<Task> {
    let existing = resolve_key(tx, &key).await?;
    match (
        conflict.decide(existing.as_ref().map(|t| t.status)),
        existing,
    ) {
        (KeyDecision::ReturnExisting, Some(existing)) => return Ok(existing),
        (KeyDecision::Reject, _) => return Err(Error::AlreadyExists { key }),
        (KeyDecision::CancelThenInsert, Some(existing)) => {
            cancel_by_id(tx, &existing.id).await?;
        }
        (KeyDecision::Postpone(window), Some(queued)) => {
            if let Some(postponed) = postpone(tx, &queued.id, new, window).await? {
                return Ok(postponed);
            }
        }
        _ => {}
    }
    let inserted = insert_new(tx, new).await?;
    execute(tx, SQL.upsert_key, &params![&key, &new.id]).await?;
    Ok(inserted)
}

/// `debounce.sql` on the queued task `id` (docs/protocol.md, "Debounced
/// submit"); `None` when a claim took it first.
async fn postpone<S: Session>(
    tx: &S,
    id: &str,
    new: &NewTask,
    window: Debounce,
) -> Result<Option<Task>> {
    task(
        tx,
        SQL.debounce,
        &params![&id, &new.payload, &window.window_ms, &window.max_delay_ms],
    )
    .await
}

/// A poll's statements inside its transaction: the completions, lease
/// recovery, then the plan's draws. Returns the ids completed.
async fn claim_draws<S: Session>(
    tx: &S,
    request: &ClaimRequest,
    completions: Vec<(String, Option<String>)>,
    plan: &mut dyn ClaimPlan,
) -> Result<Vec<String>> {
    let completed = if completions.is_empty() {
        Vec::new()
    } else {
        complete_many(tx, &request.worker_id, completions).await?
    };
    execute(tx, SQL.recover_leases, &params![]).await?;
    while let Some(draw) = plan.next_draw() {
        if draw.is_empty() {
            plan.accept(Vec::new());
            continue;
        }
        let shape = ClaimShape::of(&request.queues, draw.names.as_deref());
        // Equality forms bind the single element, list forms the whole list.
        let queue = match shape {
            ClaimShape::OneQueue | ClaimShape::OneQueueOneName => Param::from(&request.queues[0]),
            ClaimShape::Lists | ClaimShape::OneName => Param::from(&request.queues),
        };
        let name = match (shape, &draw.names) {
            (ClaimShape::OneName | ClaimShape::OneQueueOneName, Some(names)) => {
                Param::from(&names[0])
            }
            _ => Param::from(&draw.names),
        };
        let claimed = tasks(
            tx,
            shape.statement(&SQL),
            &[
                queue,
                name,
                Param::from(&request.worker_id),
                Param::from(&request.lease_ms),
                Param::from(&draw.limit),
            ],
        )
        .await?;
        plan.accept(claimed);
    }
    Ok(completed)
}

#[async_trait]
impl<T: Transport + PushSource> Backend for PostgresBackend<T> {
    async fn connect(&self) -> Result<()> {
        self.opened().await.map(|_| ())
    }

    async fn close(&self) -> Result<()> {
        self.closes.fetch_add(1, Ordering::SeqCst);
        let _guard = self.lifecycle.lock().await;
        self.wakes.shutdown();
        if let Some(opened) = self.opened.write().expect("opened slot").take() {
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
        let outcome = keyed_insert(&tx, &new, key, conflict).await;
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
        let status = f.status.map(Status::as_str);
        let sql = specialize(
            if f.bodies {
                SQL.list
            } else {
                protocol::without_bodies(SQL.list, "*", "'{}'::jsonb", "null::jsonb")
            },
            &set_filters(&[
                ("$1::text", status.is_some()),
                ("$2::text", f.queue.is_some()),
                ("$3::text", f.name.is_some()),
                ("$4::text", f.root_id.is_some()),
                ("$5::text", f.correlation_id.is_some()),
            ]),
        );
        tasks(
            &self.client().await?,
            sql,
            &params![
                &status,
                &f.queue,
                &f.name,
                &f.root_id,
                &f.correlation_id,
                &f.limit,
                &f.offset,
            ],
        )
        .await
    }

    async fn get_status(&self, target: Target) -> Result<Option<TaskRef>> {
        let (sql, value) = match &target {
            Target::Id(id) => (SQL.get_status, id),
            Target::Key(key) => (SQL.get_status_by_key, key),
        };
        let found = rows(&self.client().await?, sql, &params![value]).await?;
        found
            .first()
            .map(|row| {
                let status = row.text(1)?;
                Ok(TaskRef {
                    id: row.text(0)?,
                    status: status.parse()?,
                })
            })
            .transpose()
    }

    async fn stats(&self, queue: Option<String>) -> Result<Vec<StatusCount>> {
        let sql = specialize(SQL.stats, &set_filters(&[("$1::text", queue.is_some())]));
        rows(&self.client().await?, sql, &params![&queue])
            .await?
            .iter()
            .map(|row| {
                let status = row.text(1)?;
                Ok(StatusCount {
                    queue: row.text(0)?,
                    status: status.parse()?,
                    count: row.int(2)?,
                })
            })
            .collect()
    }

    async fn oldest_due(&self) -> Result<Vec<(String, i64)>> {
        rows(&self.client().await?, SQL.oldest_due, &[])
            .await?
            .iter()
            .map(|row| Ok((row.text(0)?, row.int(1)?)))
            .collect()
    }

    async fn queue_depth(&self, queue: String, max_depth: i64) -> Result<i64> {
        let found = rows(
            &self.client().await?,
            SQL.queue_depth,
            &params![&queue, &max_depth],
        )
        .await?;
        match found.first() {
            Some(row) => row.int(0),
            None => Ok(max_depth),
        }
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
        let status = f.status.map(Status::as_str);
        let sql = purge_statement(SQL.purge, &f);
        let params = params![&f.older_than_ms, &f.queue, &status, &f.name, &f.limit];
        let tx = self.begin().await?;
        let purged = async {
            tx.batch(POSTGRES_PURGE_IN_ORDER).await?;
            rows(&tx, sql, &params)
                .await?
                .iter()
                .map(|row| row.text(0))
                .collect()
        }
        .await;
        end_tx(tx, purged).await
    }

    async fn purge_count(&self, f: PurgeFilter) -> Result<i64> {
        let status = f.status.map(Status::as_str);
        let sql = purge_statement(SQL.purge_count, &f);
        let params = params![&f.older_than_ms, &f.queue, &status, &f.name, &f.limit];
        match rows(&self.client().await?, sql, &params).await?.first() {
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
            let sql = specialize(
                SQL.claimable_probe,
                &set_filters(&[("$2::text[]", request.names.is_some())]),
            );
            let found = rows(&client, sql, &params![&request.queues, &request.names]).await?;
            let has_work = found
                .first()
                .map(|row| row.bool(0))
                .transpose()?
                .unwrap_or(false);
            if !has_work {
                return Ok(Polled {
                    completed: Vec::new(),
                    plan: None,
                });
            }
        }
        let tx = self.begin().await?;
        let drawn = claim_draws(&tx, &request, completions, &mut *plan).await;
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
        rows(
            &self.client().await?,
            SQL.heartbeat_batch,
            &params![&ids, &worker_id, &lease_ms],
        )
        .await?
        .iter()
        .map(|row| Ok((row.text(0)?, row.bool(1)?)))
        .collect()
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
        let client = self.client().await?;
        match &outcome {
            Outcome::Succeed { result } => {
                owned_write(
                    &client,
                    SQL.succeed,
                    &owned,
                    &params![result, &None::<String>],
                )
                .await
            }
            Outcome::Complete { result } => {
                owned_write(&client, SQL.complete, &owned, &params![result]).await
            }
            Outcome::Fail {
                error,
                retryable,
                delay_ms,
            } => {
                owned_write(
                    &client,
                    SQL.fail,
                    &owned,
                    &params![error, retryable, delay_ms],
                )
                .await
            }
        }
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
    async fn schedules_installed(&self) -> Result<bool> {
        schedules::installed(&self.client().await?).await
    }

    async fn install_schedules(&self) -> Result<()> {
        schedules::install(self.begin().await?).await
    }

    async fn schedule_read(
        &self,
        pick: PickStatement,
        args: Vec<SqlArg>,
    ) -> Result<Vec<ScheduleRow>> {
        schedules::rows(&self.client().await?, pick, &args).await
    }

    async fn schedule_write(
        &self,
        pick: PickStatement,
        args: Vec<SqlArg>,
    ) -> Result<Vec<ScheduleRow>> {
        self.schedule_read(pick, args).await
    }

    fn steps(&self) -> &dyn StepBackend {
        self
    }

    async fn shared_tx_open(&self) -> Result<SharedTx> {
        let tx = self.begin().await?;
        let id = self.next_shared.fetch_add(1, Ordering::SeqCst);
        let session = tx.handle();
        self.shared
            .lock()
            .expect("shared transactions")
            .insert(id, Arc::new(tokio::sync::Mutex::new(Some(tx))));
        Ok(SharedTx { id, session })
    }

    async fn shared_tx_query(
        &self,
        id: u64,
        sql: String,
        values: Option<String>,
    ) -> Result<String> {
        let slot = self.shared_slot(id, false)?;
        let held = slot.lock().await;
        let tx = held
            .as_ref()
            .ok_or_else(|| Error::Invalid(format!("no open shared transaction {id}")))?;
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
        let tx = self.take_shared(id).await?;
        let completed = owned_write(&tx, SQL.complete, &owned, &params![&result]).await;
        end_tx(tx, completed).await
    }

    async fn shared_tx_abort(&self, id: u64) -> Result<()> {
        self.take_shared(id).await?.rollback().await
    }
}
