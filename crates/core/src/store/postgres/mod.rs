//! The Postgres backend: many hosts share one database; time comes from the
//! database clock, claims skip rows other claimers hold, and keyed work
//! serializes on a transaction-scoped advisory lock (docs/protocol.md,
//! "Connection setup (Postgres)").

mod conn;
mod listener;
mod tls;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, RwLock};
use std::time::Duration;

use async_trait::async_trait;
use deadpool_postgres::{GenericClient, Manager, ManagerConfig, Object, Pool, RecyclingMethod};

use self::conn::{db_error, execute, int, rows, task, tasks, Dsn, Params};
use self::listener::PushWakes;
use super::backend::{
    Backend, ClaimPlan, ClaimRequest, Conflict, KeyDecision, ListFilter, NewTask, OpenMode,
    Outcome, Owned, Polled, PurgeFilter, PushSubscriber, StatusCount, Target, TaskRef,
};
use crate::error::{Error, Result};
use crate::protocol::{self, specialize, ClaimShape, POSTGRES as SQL};
use crate::task::{Status, Task};

/// Pool size when none is given: what node-postgres, the reference's driver, uses.
pub const DEFAULT_POOL_SIZE: usize = 10;

pub struct PostgresBackend {
    dsn: Dsn,
    pool_size: usize,
    mode: OpenMode,
    pool: RwLock<Option<Pool>>,
    /// Serializes connect/close.
    lifecycle: tokio::sync::Mutex<()>,
    /// Finished connect attempts, so callers that waited on one share its failure.
    attempts: AtomicU64,
    last_failure: Mutex<Option<(u64, Error)>>,
    wakes: PushWakes,
}

impl PostgresBackend {
    /// Parses the DSN now; connects on first use.
    pub fn new(dsn: &str, pool_size: Option<usize>) -> Result<PostgresBackend> {
        Ok(PostgresBackend {
            dsn: Dsn::parse(dsn)?,
            pool_size: pool_size.unwrap_or(DEFAULT_POOL_SIZE),
            mode: OpenMode::Migrate,
            pool: RwLock::new(None),
            lifecycle: tokio::sync::Mutex::new(()),
            attempts: AtomicU64::new(0),
            last_failure: Mutex::new(None),
            wakes: PushWakes::default(),
        })
    }

    /// Open the database the `mode` way (`OpenMode::Migrate` by default).
    pub fn with_mode(mut self, mode: OpenMode) -> PostgresBackend {
        self.mode = mode;
        self
    }

    /// Whether push wakeups are live (the LISTEN connection is subscribed).
    pub fn listening(&self) -> bool {
        self.wakes.listening()
    }

    fn current(&self) -> Option<Pool> {
        self.pool.read().expect("pool slot").clone()
    }

    /// The published pool, opening it first if needed. Callers that arrive
    /// while an attempt runs wait for it and share its outcome.
    async fn pool(&self) -> Result<Pool> {
        if let Some(pool) = self.current() {
            return Ok(pool);
        }
        let seen = self.attempts.load(Ordering::SeqCst);
        let _open = self.lifecycle.lock().await;
        if let Some(pool) = self.current() {
            return Ok(pool);
        }
        if let Some((attempt, err)) = &*self.last_failure.lock().expect("last failure") {
            if *attempt > seen {
                return Err(err.clone());
            }
        }
        let opened = self.open_pool().await;
        let attempt = self.attempts.fetch_add(1, Ordering::SeqCst) + 1;
        match opened {
            Ok(pool) => {
                *self.pool.write().expect("pool slot") = Some(pool.clone());
                self.wakes.start(&self.dsn);
                Ok(pool)
            }
            Err(err) => {
                *self.last_failure.lock().expect("last failure") = Some((attempt, err.clone()));
                Err(err)
            }
        }
    }

    /// A pool that is only handed out once migrations and the version check
    /// passed on one of its connections; a failed open ends it.
    async fn open_pool(&self) -> Result<Pool> {
        let manager = Manager::from_config(
            self.dsn.config.clone(),
            self.dsn.tls.clone(),
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(self.pool_size)
            .build()
            .map_err(|e| self.dsn.connection_error(e))?;
        let prepared = async {
            let mut client = pool.get().await.map_err(|e| self.dsn.pool_error(e))?;
            match self.mode {
                OpenMode::Migrate => {
                    conn::check_protocol_version(&client, false).await?;
                    conn::migrate(&mut client).await?;
                }
                OpenMode::Existing => conn::check_existing(&client, &self.dsn).await?,
            }
            conn::check_protocol_version(&client, true).await
        }
        .await;
        match prepared {
            Ok(()) => Ok(pool),
            Err(err) => {
                pool.close();
                Err(err)
            }
        }
    }

    async fn client(&self) -> Result<Object> {
        let pool = self.pool().await?;
        pool.get().await.map_err(|e| self.dsn.pool_error(e))
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

async fn get_by_id<C: GenericClient>(client: &C, id: &str) -> Result<Option<Task>> {
    task(client, SQL.get, &[&id]).await
}

async fn insert_new<C: GenericClient>(client: &C, new: &NewTask) -> Result<Task> {
    let params: &Params<'_> = &[
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
    task(client, SQL.insert_task, params)
        .await?
        .ok_or_else(|| Error::Database {
            code: tokio_postgres::error::SqlState::NO_DATA.code().to_string(),
            message: "insert returned no row".into(),
        })
}

async fn cancel_by_id<C: GenericClient>(client: &C, id: &str) -> Result<Option<Task>> {
    task(client, SQL.cancel, &[&id]).await
}

async fn retry_by_id<C: GenericClient>(
    client: &C,
    id: &str,
    reset_attempt: bool,
) -> Result<Option<Task>> {
    task(client, SQL.retry, &[&id, &reset_attempt]).await
}

/// The task a key points at, read under the key's advisory lock (`lock_key`
/// first, as every SDK does, then `get_key`). A pointer whose task was purged
/// meanwhile reads as no task.
async fn resolve_key<C: GenericClient>(tx: &C, key: &str) -> Result<Option<Task>> {
    execute(tx, SQL.lock_key, &[&key]).await?;
    let pointer = rows(tx, SQL.get_key, &[&key]).await?;
    match pointer.first() {
        Some(row) => {
            let id: String = row.try_get(0).map_err(db_error)?;
            get_by_id(tx, &id).await
        }
        None => Ok(None),
    }
}

/// A write guarded by the ownership predicate: no row means the lease is lost.
async fn owned_write(
    client: &Object,
    sql: &str,
    owned: &Owned,
    extra: &Params<'_>,
) -> Result<Task> {
    let mut params: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> =
        vec![&owned.task_id, &owned.worker_id];
    params.extend_from_slice(extra);
    task(client, sql, &params)
        .await?
        .ok_or_else(|| Error::LostLease {
            task_id: owned.task_id.clone(),
        })
}

/// `complete_batch` over `(id, result JSON)` pairs of one worker.
async fn complete_many<C: GenericClient>(
    client: &C,
    worker_id: &str,
    items: Vec<(String, Option<String>)>,
) -> Result<Vec<String>> {
    let (ids, results): (Vec<String>, Vec<Option<String>>) = items.into_iter().unzip();
    rows(client, SQL.complete_batch, &[&ids, &results, &worker_id])
        .await?
        .iter()
        .map(|row| row.try_get(0).map_err(db_error))
        .collect()
}

#[async_trait]
impl Backend for PostgresBackend {
    async fn connect(&self) -> Result<()> {
        self.pool().await.map(|_| ())
    }

    async fn close(&self) -> Result<()> {
        let _guard = self.lifecycle.lock().await;
        self.wakes.shutdown();
        if let Some(pool) = self.pool.write().expect("pool slot").take() {
            pool.close();
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
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(db_error)?;
        let existing = resolve_key(&tx, &key).await?;
        match (
            conflict.decide(existing.as_ref().map(|t| t.status)),
            existing,
        ) {
            (KeyDecision::ReturnExisting, Some(existing)) => {
                tx.commit().await.map_err(db_error)?;
                return Ok(existing);
            }
            (KeyDecision::Reject, _) => return Err(Error::AlreadyExists { key }),
            (KeyDecision::CancelThenInsert, Some(existing)) => {
                cancel_by_id(&tx, &existing.id).await?;
            }
            _ => {}
        }
        let inserted = insert_new(&tx, &new).await?;
        execute(&tx, SQL.upsert_key, &[&key, &new.id]).await?;
        tx.commit().await.map_err(db_error)?;
        Ok(inserted)
    }

    async fn get(&self, target: Target) -> Result<Option<Task>> {
        let client = self.client().await?;
        match &target {
            Target::Id(id) => get_by_id(&client, id).await,
            Target::Key(key) => task(&client, SQL.get_by_key, &[key]).await,
        }
    }

    async fn list(&self, f: ListFilter) -> Result<Vec<Task>> {
        let status = f.status.map(Status::as_str);
        let sql = specialize(
            SQL.list,
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
            &[
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
        let found = rows(&self.client().await?, sql, &[value]).await?;
        found
            .first()
            .map(|row| {
                let status: &str = row.try_get(1).map_err(db_error)?;
                Ok(TaskRef {
                    id: row.try_get(0).map_err(db_error)?,
                    status: status.parse()?,
                })
            })
            .transpose()
    }

    async fn stats(&self, queue: Option<String>) -> Result<Vec<StatusCount>> {
        let sql = specialize(SQL.stats, &set_filters(&[("$1::text", queue.is_some())]));
        rows(&self.client().await?, sql, &[&queue])
            .await?
            .iter()
            .map(|row| {
                let status: &str = row.try_get(1).map_err(db_error)?;
                Ok(StatusCount {
                    queue: row.try_get(0).map_err(db_error)?,
                    status: status.parse()?,
                    count: int(row, 2)?,
                })
            })
            .collect()
    }

    async fn queue_depth(&self, queue: String, max_depth: i64) -> Result<i64> {
        let found = rows(
            &self.client().await?,
            SQL.queue_depth,
            &[&queue, &max_depth],
        )
        .await?;
        match found.first() {
            Some(row) => int(row, 0),
            None => Ok(max_depth),
        }
    }

    async fn cancel(&self, target: Target) -> Result<Option<Task>> {
        let mut client = self.client().await?;
        match target {
            Target::Id(id) => cancel_by_id(&client, &id).await,
            Target::Key(key) => {
                let tx = client.transaction().await.map_err(db_error)?;
                let canceled = match resolve_key(&tx, &key).await? {
                    Some(found) => cancel_by_id(&tx, &found.id).await?,
                    None => None,
                };
                tx.commit().await.map_err(db_error)?;
                Ok(canceled)
            }
        }
    }

    async fn retry(&self, target: Target, reset_attempt: bool) -> Result<Option<Task>> {
        let mut client = self.client().await?;
        match target {
            Target::Id(id) => retry_by_id(&client, &id, reset_attempt).await,
            Target::Key(key) => {
                let tx = client.transaction().await.map_err(db_error)?;
                let retried = match resolve_key(&tx, &key).await? {
                    Some(found) => retry_by_id(&tx, &found.id, reset_attempt).await?,
                    None => None,
                };
                tx.commit().await.map_err(db_error)?;
                Ok(retried)
            }
        }
    }

    async fn purge(&self, f: PurgeFilter) -> Result<Vec<String>> {
        let status = f.status.map(Status::as_str);
        let sql = specialize(
            SQL.purge,
            &set_filters(&[
                ("$2::text", f.queue.is_some()),
                ("$3::text", status.is_some()),
                ("$4::text", f.name.is_some()),
            ]),
        );
        let params: &Params<'_> = &[&f.older_than_ms, &f.queue, &status, &f.name, &f.limit];
        rows(&self.client().await?, sql, params)
            .await?
            .iter()
            .map(|row| row.try_get(0).map_err(db_error))
            .collect()
    }

    async fn poll(
        &self,
        request: ClaimRequest,
        completions: Vec<(String, Option<String>)>,
        probe: bool,
        mut plan: Box<dyn ClaimPlan>,
    ) -> Result<Polled> {
        let mut client = self.client().await?;
        if probe && completions.is_empty() {
            // An idle poll is this one read (docs/protocol.md, "Claim").
            self.wakes.watch_queues(&request.queues);
            let sql = specialize(
                SQL.claimable_probe,
                &set_filters(&[("$2::text[]", request.names.is_some())]),
            );
            let found = rows(&client, sql, &[&request.queues, &request.names]).await?;
            let has_work = found
                .first()
                .map(|row| row.try_get::<_, bool>(0).map_err(db_error))
                .transpose()?
                .unwrap_or(false);
            if !has_work {
                return Ok(Polled {
                    completed: Vec::new(),
                    plan: None,
                });
            }
        }
        let tx = client.transaction().await.map_err(db_error)?;
        let completed = if completions.is_empty() {
            Vec::new()
        } else {
            complete_many(&tx, &request.worker_id, completions).await?
        };
        execute(&tx, SQL.recover_leases, &[]).await?;
        while let Some(draw) = plan.next_draw() {
            if draw.is_empty() {
                plan.accept(Vec::new());
                continue;
            }
            let shape = ClaimShape::of(&request.queues, draw.names.as_deref());
            // Equality forms bind the single element, list forms the whole list.
            let queue: &(dyn tokio_postgres::types::ToSql + Sync) = match shape {
                ClaimShape::OneQueue | ClaimShape::OneQueueOneName => &request.queues[0],
                ClaimShape::Lists | ClaimShape::OneName => &request.queues,
            };
            let name: &(dyn tokio_postgres::types::ToSql + Sync) = match (shape, &draw.names) {
                (ClaimShape::OneName | ClaimShape::OneQueueOneName, Some(names)) => &names[0],
                _ => &draw.names,
            };
            let claimed = tasks(
                &tx,
                shape.statement(&SQL),
                &[
                    queue,
                    name,
                    &request.worker_id,
                    &request.lease_ms,
                    &draw.limit,
                ],
            )
            .await?;
            plan.accept(claimed);
        }
        if plan.keep() {
            tx.commit().await.map_err(db_error)?;
        } else {
            tx.rollback().await.map_err(db_error)?;
        }
        Ok(Polled {
            completed,
            plan: Some(plan),
        })
    }

    async fn heartbeat(&self, owned: Owned, lease_ms: i64) -> Result<Task> {
        owned_write(&self.client().await?, SQL.heartbeat, &owned, &[&lease_ms]).await
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
            &[&ids, &worker_id, &lease_ms],
        )
        .await?
        .iter()
        .map(|row| {
            Ok((
                row.try_get(0).map_err(db_error)?,
                row.try_get(1).map_err(db_error)?,
            ))
        })
        .collect()
    }

    async fn progress(
        &self,
        owned: Owned,
        progress: Option<f64>,
        message: Option<String>,
    ) -> Result<Task> {
        owned_write(
            &self.client().await?,
            SQL.progress,
            &owned,
            &[&progress, &message],
        )
        .await
    }

    async fn finish(&self, owned: Owned, outcome: Outcome) -> Result<Task> {
        let client = self.client().await?;
        match &outcome {
            Outcome::Succeed { result } => {
                owned_write(&client, SQL.succeed, &owned, &[result, &None::<String>]).await
            }
            Outcome::Complete { result } => {
                owned_write(&client, SQL.complete, &owned, &[result]).await
            }
            Outcome::Fail {
                error,
                retryable,
                delay_ms,
            } => owned_write(&client, SQL.fail, &owned, &[error, retryable, delay_ms]).await,
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
}
