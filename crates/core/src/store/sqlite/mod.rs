//! The SQLite backend: one file on one host, shared with the other SDKs'
//! processes through SQLite's own locking.

mod conn;
mod engine;
mod schedules;
mod steps;
mod wal_watch;
mod wal_writes;

use std::sync::{Arc, RwLock};
use std::time::Duration;

use async_trait::async_trait;
use rusqlite::Connection;

use self::conn::{is_in_memory, query, query_task, query_tasks, Access, Params};
use self::engine::{Engine, OnCommit};
use self::wal_watch::WalWatch;
use super::backend::{
    Backend, ClaimPlan, ClaimRequest, Conflict, Debounce, HeldTask, KeyDecision, ListFilter,
    NewTask, OpenMode, Outcome, Polled, PurgeFilter, StatusCount, StepBackend, Target, TaskRef,
    WaitPoll, WriteAnswer, WriteOp,
};
use super::schedule_rows::{PickStatement, ScheduleRow, SqlArg};
use crate::error::{Error, Result};
use crate::ids::now_ms;
use crate::protocol::{self, specialize, ClaimShape, SQLITE as SQL};
use crate::task::{Status, Task};

/// Reader connections per file: enough for reads to overlap a probe.
const READERS: usize = 2;

pub struct SqliteBackend {
    path: String,
    busy_timeout: Duration,
    mode: OpenMode,
    engine: RwLock<Option<Arc<Engine>>>,
    /// Serializes connect/close so concurrent first calls share one open.
    lifecycle: tokio::sync::Mutex<()>,
    /// Ends idle sleeps and waits early when the file changes.
    wakes: Option<Arc<WalWatch>>,
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
        }
    }

    /// Open the file the `mode` way (`OpenMode::Migrate` by default).
    pub fn with_mode(mut self, mode: OpenMode) -> SqliteBackend {
        self.mode = mode;
        self
    }

    fn current(&self) -> Option<Arc<Engine>> {
        self.engine.read().expect("engine slot").clone()
    }

    async fn engine(&self) -> Result<Arc<Engine>> {
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

    async fn changed(&self, since: u64, timeout: Duration) {
        match &self.wakes {
            Some(wakes) => wakes.changed(since, timeout).await,
            None => tokio::time::sleep(timeout).await,
        }
    }

    async fn write<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Connection) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        self.engine().await?.write(work).await
    }

    async fn transaction<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Connection) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        self.engine().await?.transaction(work).await
    }

    async fn read<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Connection) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        self.engine().await?.read(work).await
    }
}

/// Open the writer (which migrates and checks the version, or with
/// `OpenMode::Existing` first makes sure there is a cairnq database to open),
/// then the readers.
fn open_engine(path: &str, busy: Duration, mode: OpenMode, on_commit: OnCommit) -> Result<Engine> {
    if mode == OpenMode::MigrateOwn {
        conn::check_not_foreign(path, busy)?;
    }
    let (writer, access) = match mode {
        OpenMode::Migrate | OpenMode::MigrateOwn => {
            let writer = conn::open(path, busy)?;
            conn::check_protocol_version(&writer, false)?;
            conn::migrate(&writer)?;
            conn::analyze_if_never_analyzed(&writer);
            (writer, Access::ReadWrite)
        }
        // A file this process may only read still serves every read.
        OpenMode::Existing => match conn::check_existing(path, busy)? {
            Access::ReadWrite => match conn::open(path, busy) {
                Err(err) if conn::is_read_only(&err) && !path.starts_with("file:") => (
                    conn::open_as(path, busy, Access::ReadOnly)?,
                    Access::ReadOnly,
                ),
                opened => (opened?, Access::ReadWrite),
            },
            Access::ReadOnly => (
                conn::open_as(path, busy, Access::ReadOnly)?,
                Access::ReadOnly,
            ),
        },
    };
    conn::check_protocol_version(&writer, true)?;
    let file_backed = !is_in_memory(path);
    let open_reader = |busy: Duration| -> Result<Connection> {
        let reader = conn::open_as(path, busy, access)?;
        reader
            .execute_batch("PRAGMA query_only = ON")
            .map_err(conn::sqlite_error)?;
        Ok(reader)
    };
    let (readers, inline, checkpointer) = if file_backed {
        let readers = (0..READERS)
            .map(|_| open_reader(busy))
            .collect::<Result<Vec<_>>>()?;
        // Nothing to checkpoint in a file this process cannot write.
        let checkpointer = match access {
            Access::ReadWrite => Some(conn::open(path, busy)?),
            Access::ReadOnly => None,
        };
        (readers, Some(open_reader(Duration::ZERO)?), checkpointer)
    } else {
        (Vec::new(), None, None)
    };
    Ok(Engine::start(
        writer,
        busy,
        readers,
        inline,
        checkpointer,
        on_commit,
    ))
}

fn json_list(items: &[String]) -> String {
    serde_json::to_string(items).expect("a list of strings encodes")
}

fn get_by_id(conn: &Connection, id: &str) -> Result<Option<Task>> {
    query_task(conn, SQL.get, &[(":id", &id)])
}

fn get_target(conn: &Connection, target: &Target) -> Result<Option<Task>> {
    match target {
        Target::Id(id) => get_by_id(conn, id),
        Target::Key(key) => query_task(conn, SQL.get_by_key, &[(":key", key)]),
    }
}

fn insert_new(conn: &Connection, task: &NewTask) -> Result<Task> {
    let now = now_ms();
    let params: &Params<'_> = &[
        (":id", &task.id),
        (":name", &task.name),
        (":queue", &task.queue),
        (":payload", &task.payload),
        (":metadata", &task.metadata),
        (":max_attempts", &task.max_attempts),
        (":priority", &task.priority),
        (":delay_ms", &task.delay_ms),
        (":parent_id", &task.parent_id),
        (":root_id", &task.root_id),
        (":correlation_id", &task.correlation_id),
        (":now", &now),
    ];
    query(conn, SQL.insert_task, params, |_| Ok(()))?;
    Ok(task.inserted_row(now))
}

/// A single-row update, then the row it changed (`None` if it changed none).
/// Alone in autocommit, one statement with RETURNING does both (one
/// transaction, so one round of locks). Inside a shared transaction RETURNING
/// would cost the statement a statement journal and a result table, while
/// reading the row back by its key costs one index seek.
fn update_one(
    conn: &Connection,
    sql: &'static str,
    id: &str,
    params: &Params<'_>,
) -> Result<Option<Task>> {
    if conn.is_autocommit() {
        return query_task(conn, protocol::returning_row(sql), params);
    }
    query(conn, sql, params, |_| Ok(()))?;
    if conn.changes() == 0 {
        return Ok(None);
    }
    get_by_id(conn, id)
}

/// `get_status` or `get_status_by_key`.
fn status_of(conn: &Connection, target: &Target) -> Result<Option<TaskRef>> {
    let (sql, param, value) = match target {
        Target::Id(id) => (SQL.get_status, ":id", id),
        Target::Key(key) => (SQL.get_status_by_key, ":key", key),
    };
    let found = query(conn, sql, &[(param, value)], |row| {
        Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?))
    })?;
    found
        .into_iter()
        .next()
        .map(|(id, status)| {
            Ok(TaskRef {
                id,
                status: status.parse()?,
            })
        })
        .transpose()
}

fn look_at(conn: &Connection, target: &Target) -> Result<WaitPoll> {
    let probed = status_of(conn, target)?;
    let row = match &probed {
        Some(found) if found.status.is_terminal() => get_target(conn, target)?,
        _ => None,
    };
    Ok(WaitPoll { probed, row })
}

fn cancel_by_id(conn: &Connection, id: &str) -> Result<Option<Task>> {
    update_one(conn, SQL.cancel, id, &[(":id", &id), (":now", &now_ms())])
}

fn retry_by_id(conn: &Connection, id: &str, reset_attempt: bool) -> Result<Option<Task>> {
    update_one(
        conn,
        SQL.retry,
        id,
        &[
            (":id", &id),
            (":reset_attempt", &reset_attempt),
            (":now", &now_ms()),
        ],
    )
}

/// The task a key points at, read under the write lock (`lock_key` + `get_key`).
fn resolve_key(conn: &Connection, key: &str) -> Result<Option<Task>> {
    query(conn, SQL.lock_key, &[(":key", &key)], |_| Ok(()))?;
    let pointer: Option<String> = query(conn, SQL.get_key, &[(":key", &key)], |row| row.get(0))?
        .into_iter()
        .next();
    match pointer {
        Some(id) => get_by_id(conn, &id),
        None => Ok(None),
    }
}

fn owned_write(
    conn: &Connection,
    sql: &'static str,
    owned: &HeldTask,
    extra: &Params<'_>,
) -> Result<Task> {
    let now = now_ms();
    let mut params: Vec<(&str, &dyn rusqlite::ToSql)> = vec![
        (":id", &owned.task_id),
        (":worker_id", &owned.worker_id),
        (":now", &now),
    ];
    params.extend_from_slice(extra);
    update_one(conn, sql, &owned.task_id, &params)?.ok_or_else(|| Error::LostLease {
        task_id: owned.task_id.clone(),
    })
}

/// Whether `op` runs several statements (and so needs its own savepoint in a group).
fn spans_statements(op: &WriteOp) -> bool {
    matches!(
        op,
        WriteOp::InsertKeyed(..)
            | WriteOp::Cancel(Target::Key(_))
            | WriteOp::Retry(Target::Key(_), _)
    )
}

/// The parameters of `filters` that are set, for `protocol::specialize`.
fn set_filters<'a>(filters: &[(&'a str, bool)]) -> Vec<&'a str> {
    filters
        .iter()
        .filter(|(_, set)| *set)
        .map(|(param, _)| *param)
        .collect()
}

/// Every single-row write, on the writer's connection inside its transaction.
fn run_op(conn: &Connection, op: &WriteOp) -> WriteAnswer {
    match op {
        WriteOp::Insert(task) => insert_new(conn, task).map(Some),
        WriteOp::InsertKeyed(task, key, conflict) => {
            insert_keyed(conn, task, key, *conflict).map(Some)
        }
        WriteOp::Cancel(Target::Id(id)) => cancel_by_id(conn, id),
        WriteOp::Cancel(Target::Key(key)) => match resolve_key(conn, key)? {
            Some(task) => cancel_by_id(conn, &task.id),
            None => Ok(None),
        },
        WriteOp::Retry(Target::Id(id), reset) => retry_by_id(conn, id, *reset),
        WriteOp::Retry(Target::Key(key), reset) => match resolve_key(conn, key)? {
            Some(task) => retry_by_id(conn, &task.id, *reset),
            None => Ok(None),
        },
        WriteOp::Finish(owned, outcome) => finish(conn, owned, outcome).map(Some),
        WriteOp::Progress(owned, progress, message) => owned_write(
            conn,
            SQL.progress,
            owned,
            &[(":progress", progress), (":message", message)],
        )
        .map(Some),
        WriteOp::Heartbeat(owned, lease_ms) => {
            owned_write(conn, SQL.heartbeat, owned, &[(":lease_ms", lease_ms)]).map(Some)
        }
    }
}

fn insert_keyed(conn: &Connection, task: &NewTask, key: &str, conflict: Conflict) -> Result<Task> {
    let existing = resolve_key(conn, key)?;
    match conflict.decide(existing.as_ref().map(|t| t.status)) {
        KeyDecision::ReturnExisting => return Ok(existing.expect("a decision to reuse has a task")),
        KeyDecision::Reject => {
            return Err(Error::AlreadyExists {
                key: key.to_string(),
            })
        }
        KeyDecision::CancelThenInsert => {
            cancel_by_id(conn, &existing.expect("a live task to replace").id)?;
        }
        KeyDecision::Postpone(window) => {
            let queued = existing.expect("a queued task to postpone");
            if let Some(postponed) = postpone(conn, &queued.id, task, window)? {
                return Ok(postponed);
            }
        }
        KeyDecision::Insert => {}
    }
    let inserted = insert_new(conn, task)?;
    query(
        conn,
        SQL.upsert_key,
        &[(":key", &key), (":task_id", &task.id), (":now", &now_ms())],
        |_| Ok(()),
    )?;
    Ok(inserted)
}

/// `debounce.sql` on the queued task `id` (docs/protocol.md, "Debounced submit").
fn postpone(conn: &Connection, id: &str, task: &NewTask, window: Debounce) -> Result<Option<Task>> {
    update_one(
        conn,
        SQL.debounce,
        id,
        &[
            (":id", &id),
            (":payload", &task.payload),
            (":debounce_ms", &window.window_ms),
            (":max_delay_ms", &window.max_delay_ms),
            (":now", &now_ms()),
        ],
    )
}

fn finish(conn: &Connection, owned: &HeldTask, outcome: &Outcome) -> Result<Task> {
    match outcome {
        Outcome::Succeed { result } => owned_write(
            conn,
            SQL.succeed,
            owned,
            &[(":result", result), (":message", &None::<String>)],
        ),
        Outcome::Complete { result } => {
            owned_write(conn, SQL.complete, owned, &[(":result", result)])
        }
        Outcome::Fail {
            error,
            retryable,
            delay_ms,
        } => owned_write(
            conn,
            SQL.fail,
            owned,
            &[
                (":error", error),
                (":retryable", retryable),
                (":delay_ms", delay_ms),
            ],
        ),
    }
}

/// `complete_batch.sql` over `(id, result JSON)` pairs of one worker.
fn complete_many(
    conn: &Connection,
    worker_id: &str,
    items: &[(String, Option<String>)],
) -> Result<Vec<String>> {
    let items = serde_json::to_string(items).expect("ids and JSON texts encode");
    query(
        conn,
        SQL.complete_batch,
        &[
            (":items", &items),
            (":worker_id", &worker_id),
            (":now", &now_ms()),
        ],
        |row| row.get(0),
    )
}

/// `purge` or `purge_count` (the same predicate and parameters) of `f`.
fn purge_query<T>(
    conn: &Connection,
    statement: &'static str,
    f: &PurgeFilter,
    map: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
) -> Result<Vec<T>> {
    let status = f.status.map(Status::as_str);
    let sql = specialize(
        statement,
        &set_filters(&[
            (":queue", f.queue.is_some()),
            (":status", status.is_some()),
            (":name", f.name.is_some()),
        ]),
    );
    let before_ms = now_ms().saturating_sub(f.older_than_ms);
    query(
        conn,
        sql,
        &[
            (":before_ms", &before_ms),
            (":queue", &f.queue),
            (":status", &status),
            (":name", &f.name),
            (":limit", &f.limit),
        ],
        map,
    )
}

impl SqliteBackend {
    /// The claim probe, on a reader: is a claim worth the write lock?
    async fn claimable(&self, request: &ClaimRequest) -> Result<bool> {
        let queues = json_list(&request.queues);
        let names = request.names.as_deref().map(json_list);
        // A name list reaches cairnq_tasks_claim_name_idx only once its term
        // is required: otherwise the probe walks every queued row of the
        // queues, however many other names they hold.
        let sql = specialize(
            SQL.claimable_probe,
            &set_filters(&[(":names", names.is_some())]),
        );
        // A worker woken by a commit probes without a hand-off.
        self.engine()
            .await?
            .read_before_write(move |conn| {
                let hit = query(
                    conn,
                    sql,
                    &[
                        (":queues", &queues),
                        (":names", &names),
                        (":now", &now_ms()),
                    ],
                    |row| row.get::<_, bool>(0),
                )?;
                Ok(hit.into_iter().next().unwrap_or(false))
            })
            .await
    }

    async fn write_op(&self, op: WriteOp) -> WriteAnswer {
        let transactional = spans_statements(&op);
        self.engine()
            .await?
            .submit_write(move |conn| run_op(conn, &op), transactional)
            .await
    }
}

#[async_trait]
impl Backend for SqliteBackend {
    async fn write_group(&self, ops: Vec<WriteOp>) -> Vec<WriteAnswer> {
        let engine = match self.engine().await {
            Ok(engine) => engine,
            Err(err) => return ops.iter().map(|_| Err(err.clone())).collect(),
        };
        let answers: Vec<_> = ops
            .into_iter()
            .map(|op| {
                let transactional = spans_statements(&op);
                engine.enqueue(move |conn| run_op(conn, &op), transactional)
            })
            .collect();
        engine.drain();
        let mut out = Vec::with_capacity(answers.len());
        for answer in answers {
            out.push(answer.await.unwrap_or_else(|_| Err(engine::closed())));
        }
        out
    }

    fn write_inline(&self, ops: &[WriteOp]) -> Option<Vec<WriteAnswer>> {
        self.current()?.write_inline(
            ops.iter()
                .map(|op| {
                    (spans_statements(op), move |conn: &Connection| {
                        run_op(conn, op)
                    })
                })
                .collect(),
        )
    }

    async fn write_one(&self, op: WriteOp) -> WriteAnswer {
        self.write_op(op).await
    }

    async fn connect(&self) -> Result<()> {
        self.engine().await.map(|_| ())
    }

    async fn close(&self) -> Result<()> {
        let _guard = self.lifecycle.lock().await;
        let engine = self.engine.write().expect("engine slot").take();
        if let Some(engine) = engine {
            tokio::task::spawn_blocking(move || engine.shutdown())
                .await
                .map_err(|e| Error::Connection(format!("closing the store: {e}")))?;
        }
        Ok(())
    }

    async fn protocol_version(&self) -> Result<i64> {
        self.read(|conn| {
            let stored = conn::read_protocol_version(conn)?;
            Ok(protocol::stored_version(stored.as_deref()))
        })
        .await
    }

    async fn insert(&self, task: NewTask) -> Result<Task> {
        let row = self.write_op(WriteOp::Insert(task)).await?;
        Ok(row.expect("an insert returns its row"))
    }

    async fn insert_keyed(&self, task: NewTask, key: String, conflict: Conflict) -> Result<Task> {
        let row = self
            .write_op(WriteOp::InsertKeyed(task, key, conflict))
            .await?;
        Ok(row.expect("a keyed insert returns a row"))
    }

    async fn get(&self, target: Target) -> Result<Option<Task>> {
        self.read(move |conn| get_target(conn, &target)).await
    }

    fn get_inline(&self, target: &Target) -> Option<Result<Option<Task>>> {
        self.current()?.read_inline(|conn| get_target(conn, target))
    }

    async fn list(&self, f: ListFilter) -> Result<Vec<Task>> {
        self.read(move |conn| {
            let status = f.status.map(Status::as_str);
            let sql = specialize(
                if f.bodies {
                    SQL.list
                } else {
                    protocol::without_bodies(SQL.list, "task.*", "'{}'", "null")
                },
                &set_filters(&[
                    (":status", status.is_some()),
                    (":queue", f.queue.is_some()),
                    (":name", f.name.is_some()),
                    (":root_id", f.root_id.is_some()),
                    (":correlation_id", f.correlation_id.is_some()),
                ]),
            );
            query_tasks(
                conn,
                sql,
                &[
                    (":status", &status),
                    (":queue", &f.queue),
                    (":name", &f.name),
                    (":root_id", &f.root_id),
                    (":correlation_id", &f.correlation_id),
                    (":limit", &f.limit),
                    (":offset", &f.offset),
                ],
            )
        })
        .await
    }

    async fn get_status(&self, target: Target) -> Result<Option<TaskRef>> {
        self.read(move |conn| status_of(conn, &target)).await
    }

    /// Probe and row in one visit (`read_here`): this is what a `call()`
    /// reads once its task finishes.
    async fn look(&self, target: Target) -> Result<WaitPoll> {
        self.engine()
            .await?
            .read_here(move |conn| look_at(conn, &target))
            .await
    }

    async fn stats(&self, queue: Option<String>) -> Result<Vec<StatusCount>> {
        self.read(move |conn| {
            let sql = specialize(SQL.stats, &set_filters(&[(":queue", queue.is_some())]));
            let rows = query(conn, sql, &[(":queue", &queue)], |row| {
                Ok((
                    row.get::<_, String>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, i64>(2)?,
                ))
            })?;
            rows.into_iter()
                .map(|(queue, status, count)| {
                    Ok(StatusCount {
                        queue,
                        status: status.parse()?,
                        count,
                    })
                })
                .collect()
        })
        .await
    }

    async fn oldest_due(&self) -> Result<Vec<(String, i64)>> {
        self.read(move |conn| {
            query(conn, SQL.oldest_due, &[(":now", &now_ms())], |row| {
                Ok((row.get::<_, String>(0)?, row.get::<_, i64>(1)?))
            })
        })
        .await
    }

    async fn queue_depth(&self, queue: String, max_depth: i64) -> Result<i64> {
        self.read(move |conn| {
            let rows = query(
                conn,
                SQL.queue_depth,
                &[(":queue", &queue), (":max_depth", &max_depth)],
                |row| row.get(0),
            )?;
            Ok(rows.into_iter().next().unwrap_or(max_depth))
        })
        .await
    }

    async fn cancel(&self, target: Target) -> Result<Option<Task>> {
        self.write_op(WriteOp::Cancel(target)).await
    }

    async fn retry(&self, target: Target, reset_attempt: bool) -> Result<Option<Task>> {
        self.write_op(WriteOp::Retry(target, reset_attempt)).await
    }

    async fn purge(&self, f: PurgeFilter) -> Result<Vec<String>> {
        self.write(move |conn| purge_query(conn, SQL.purge, &f, |row| row.get(0)))
            .await
    }

    async fn purge_count(&self, f: PurgeFilter) -> Result<i64> {
        self.read(move |conn| {
            let counted = purge_query(conn, SQL.purge_count, &f, |row| row.get(0))?;
            Ok(counted.into_iter().next().unwrap_or(0))
        })
        .await
    }

    async fn poll(
        &self,
        request: ClaimRequest,
        completions: Vec<(String, Option<String>)>,
        probe: bool,
        mut plan: Box<dyn ClaimPlan>,
    ) -> Result<Polled> {
        if probe && completions.is_empty() && !self.claimable(&request).await? {
            return Ok(Polled {
                completed: Vec::new(),
                plan: None,
            });
        }
        self.transaction(move |conn| {
            let completed = if completions.is_empty() {
                Vec::new()
            } else {
                complete_many(conn, &request.worker_id, &completions)?
            };
            query(conn, SQL.recover_leases, &[(":now", &now_ms())], |_| Ok(()))?;
            let queues_json = json_list(&request.queues);
            let one_queue = request.queues.first().cloned();
            while let Some(draw) = plan.next_draw() {
                if draw.is_empty() {
                    plan.accept(Vec::new());
                    continue;
                }
                let shape = ClaimShape::of(&request.queues, draw.names.as_deref());
                let names_json = draw.names.as_deref().map(json_list);
                let one_name = draw.names.as_ref().and_then(|n| n.first().cloned());
                let now = now_ms();
                let rows = query_tasks(
                    conn,
                    shape.statement(&SQL),
                    &[
                        (":queues", &queues_json),
                        (":queue", &one_queue),
                        (":names", &names_json),
                        (":name", &one_name),
                        (":worker_id", &request.worker_id),
                        (":lease_ms", &request.lease_ms),
                        (":limit", &draw.limit),
                        (":now", &now),
                    ],
                )?;
                plan.accept(rows);
            }
            if !plan.keep() {
                // Failing the job is what rolls its transaction back.
                return Err(Error::Invalid(
                    "the claim session's plan failed; its draws were rolled back".into(),
                ));
            }
            Ok(Polled {
                completed,
                plan: Some(plan),
            })
        })
        .await
    }

    async fn heartbeat(&self, owned: HeldTask, lease_ms: i64) -> Result<Task> {
        let row = self.write_op(WriteOp::Heartbeat(owned, lease_ms)).await?;
        Ok(row.expect("an owned write returns its row"))
    }

    async fn heartbeat_batch(
        &self,
        ids: Vec<String>,
        worker_id: String,
        lease_ms: i64,
    ) -> Result<Vec<(String, bool)>> {
        self.write(move |conn| {
            let ids = json_list(&ids);
            query(
                conn,
                SQL.heartbeat_batch,
                &[
                    (":ids", &ids),
                    (":worker_id", &worker_id),
                    (":lease_ms", &lease_ms),
                    (":now", &now_ms()),
                ],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
        })
        .await
    }

    async fn progress(
        &self,
        owned: HeldTask,
        progress: Option<f64>,
        message: Option<String>,
    ) -> Result<Task> {
        let row = self
            .write_op(WriteOp::Progress(owned, progress, message))
            .await?;
        Ok(row.expect("an owned write returns its row"))
    }

    async fn complete_batch(
        &self,
        worker_id: String,
        items: Vec<(String, Option<String>)>,
    ) -> Result<Vec<String>> {
        self.write(move |conn| complete_many(conn, &worker_id, &items))
            .await
    }

    fn wake_ticket(&self) -> u64 {
        self.wakes.as_ref().map_or(0, |wakes| wakes.ticket())
    }

    async fn claim_wake(&self, _queues: &[String], since: u64, timeout: Duration) {
        self.changed(since, timeout).await
    }

    async fn task_done_wake(&self, _task_id: &str, since: u64, timeout: Duration) {
        self.changed(since, timeout).await
    }

    async fn schedules_installed(&self) -> Result<bool> {
        self.read(schedules::installed).await
    }

    async fn install_schedules(&self) -> Result<()> {
        self.transaction(schedules::install).await
    }

    async fn schedule_read(
        &self,
        pick: PickStatement,
        args: Vec<SqlArg>,
    ) -> Result<Vec<ScheduleRow>> {
        self.read(move |conn| schedules::rows(conn, pick, &args))
            .await
    }

    async fn schedule_write(
        &self,
        pick: PickStatement,
        args: Vec<SqlArg>,
    ) -> Result<Vec<ScheduleRow>> {
        self.write(move |conn| schedules::rows(conn, pick, &args))
            .await
    }

    async fn finish(&self, owned: HeldTask, outcome: Outcome) -> Result<Task> {
        let row = self.write_op(WriteOp::Finish(owned, outcome)).await?;
        Ok(row.expect("an owned write returns its row"))
    }
    fn steps(&self) -> &dyn StepBackend {
        self
    }
}
