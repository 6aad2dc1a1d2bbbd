//! The SQLite backend: one file on one host, shared with the other SDKs'
//! processes through SQLite's own locking. This file holds the backend's
//! lifecycle and its `Backend` methods, each choosing where its statements
//! run (the writer's queue, a reader, the calling thread); the statements
//! themselves live in `rows`, `writes`, `reads`, `claim` and `schedules`.

mod claim;
mod conn;
mod engine;
mod flow;
mod followups;
mod open;
mod query;
mod reads;
mod rows;
mod schedules;
mod signals;
mod steps;
mod wal_watch;
mod wal_writes;
mod writes;

use std::sync::{Arc, RwLock};
use std::time::Duration;

use async_trait::async_trait;
use rusqlite::Connection;

use self::engine::{Engine, OnCommit};
use self::open::open_engine;
use self::rows::{get_target, status_of, wait_poll_on};
use self::wal_watch::WalWatch;
use self::writes::{complete_many, run_op, spans_statements};
use super::backend::{
    Backend, ClaimPlan, ClaimRequest, Conflict, HeldTask, ListFilter, NewTask, OpenMode, Outcome,
    Polled, PurgeFilter, SignalBackend, StatusCount, StepBackend, Target, TaskRef, WaitPoll,
    WriteAnswer, WriteOp,
};
use super::flow::{Declaration, Replaced};
use super::schedule_rows::{PickStatement, ScheduleRows, SqlArg};
use super::signal_rows::{NewSignal, Sent, SignalSummaries, SignalWait, SignalWaitInput};
use super::step_rows::{ChildWait, NewStep, StepSummary, StoredStep, Suspended, Wake};
use crate::error::{Error, Result};
use crate::protocol::{self, SQLITE as SQL};
use crate::task::Task;

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

impl SqliteBackend {
    /// The claim probe, on a reader: is a claim worth the write lock?
    async fn claimable(&self, request: &ClaimRequest) -> Result<bool> {
        let probe = claim::probe(request);
        // A worker woken by a commit probes without a hand-off.
        self.engine().await?.read_before_write(probe).await
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
        self.read(move |conn| reads::list(conn, &f)).await
    }

    async fn get_status(&self, target: Target) -> Result<Option<TaskRef>> {
        self.read(move |conn| status_of(conn, &target)).await
    }

    /// Probe and row in one visit (`read_here`): this is what a `call()`
    /// reads once its task finishes.
    async fn wait_poll(&self, target: Target) -> Result<WaitPoll> {
        self.engine()
            .await?
            .read_here(move |conn| wait_poll_on(conn, &target))
            .await
    }

    async fn stats(&self, queue: Option<String>) -> Result<Vec<StatusCount>> {
        self.read(move |conn| reads::stats(conn, &queue)).await
    }

    async fn oldest_due(&self) -> Result<Vec<(String, i64)>> {
        self.read(reads::oldest_due).await
    }

    async fn queue_depth(&self, queue: String, max_depth: i64) -> Result<i64> {
        self.read(move |conn| reads::queue_depth(conn, &queue, max_depth))
            .await
    }

    async fn cancel(&self, target: Target) -> Result<Option<Task>> {
        self.write_op(WriteOp::Cancel(target)).await
    }

    async fn retry(&self, target: Target, reset_attempt: bool) -> Result<Option<Task>> {
        self.write_op(WriteOp::Retry(target, reset_attempt)).await
    }

    async fn purge(&self, f: PurgeFilter) -> Result<Vec<String>> {
        self.write(move |conn| reads::purge_query(conn, SQL.purge, &f, |row| row.get(0)))
            .await
    }

    async fn purge_count(&self, f: PurgeFilter) -> Result<i64> {
        self.read(move |conn| {
            let counted = reads::purge_query(conn, SQL.purge_count, &f, |row| row.get(0))?;
            Ok(counted.into_iter().next().unwrap_or(0))
        })
        .await
    }

    async fn poll(
        &self,
        request: ClaimRequest,
        completions: Vec<(String, Option<String>)>,
        probe: bool,
        plan: Box<dyn ClaimPlan>,
    ) -> Result<Polled> {
        if probe && completions.is_empty() && !self.claimable(&request).await? {
            return Ok(Polled {
                completed: Vec::new(),
                plan: None,
            });
        }
        self.transaction(move |conn| claim::claim(conn, &request, &completions, plan))
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
        self.write(move |conn| writes::heartbeat_batch(conn, &ids, &worker_id, lease_ms))
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

    async fn followups_installed(&self) -> Result<bool> {
        self.read(followups::installed).await
    }

    async fn release_followups(&self) -> Result<u64> {
        if !self.read(followups::pending).await? {
            return Ok(0);
        }
        self.transaction(followups::release).await
    }

    async fn schedules_installed(&self) -> Result<bool> {
        self.read(schedules::installed).await
    }

    async fn install_schedules(&self) -> Result<()> {
        self.transaction(schedules::install).await
    }

    async fn declare_flow(
        &self,
        worker_id: String,
        declarations: Vec<Declaration>,
    ) -> Result<Vec<Replaced>> {
        self.transaction(move |conn| flow::declare(conn, &worker_id, &declarations))
            .await
    }

    async fn schedule_read(&self, pick: PickStatement, args: Vec<SqlArg>) -> Result<ScheduleRows> {
        self.read(move |conn| schedules::rows(conn, pick, &args))
            .await
    }

    async fn schedule_write(&self, pick: PickStatement, args: Vec<SqlArg>) -> Result<ScheduleRows> {
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
    fn signals(&self) -> &dyn SignalBackend {
        self
    }
}

#[async_trait]
impl SignalBackend for SqliteBackend {
    async fn signals_installed(&self) -> Result<bool> {
        self.read(signals::installed).await
    }

    async fn install_signals(&self) -> Result<()> {
        self.transaction(signals::install).await
    }

    async fn send_signal(&self, target: Target, signal: NewSignal) -> Result<Sent> {
        self.transaction(move |conn| signals::send(conn, &target, &signal))
            .await
    }

    async fn wait_for_signal(&self, owned: HeldTask, wait: SignalWaitInput) -> Result<SignalWait> {
        self.transaction(move |conn| signals::wait(conn, &owned, &wait))
            .await
    }

    async fn signal_summaries(&self, task_id: String) -> Result<SignalSummaries> {
        self.read(move |conn| signals::summaries(conn, &task_id))
            .await
    }
}

#[async_trait]
impl StepBackend for SqliteBackend {
    async fn steps_installed(&self) -> Result<bool> {
        self.read(steps::installed).await
    }

    async fn install_steps(&self) -> Result<()> {
        self.transaction(steps::install).await
    }

    async fn load_steps(&self, task_id: String) -> Result<Vec<StoredStep>> {
        self.read(move |conn| steps::load(conn, &task_id)).await
    }

    async fn step_summaries(&self, task_id: String) -> Result<Vec<StepSummary>> {
        self.read(move |conn| steps::summaries(conn, &task_id))
            .await
    }

    async fn record_step(&self, owned: HeldTask, step: NewStep) -> Result<i64> {
        self.write(move |conn| steps::record(conn, &owned, &step))
            .await
    }

    async fn suspend(
        &self,
        owned: HeldTask,
        step: Option<NewStep>,
        wake: Wake,
    ) -> Result<Suspended> {
        self.transaction(move |conn| steps::suspend(conn, &owned, step, wake))
            .await
    }

    async fn wait_for_child(
        &self,
        owned: HeldTask,
        step: Option<NewStep>,
        child_id: String,
        recheck_ms: i64,
    ) -> Result<ChildWait> {
        self.transaction(move |conn| {
            steps::wait_for_child(conn, &owned, step.as_ref(), &child_id, recheck_ms)
        })
        .await
    }

    async fn wake_parents(&self, child_ids: Vec<String>) -> Result<()> {
        self.write(move |conn| steps::wake_parents(conn, &child_ids))
            .await
    }

    async fn cancel_children(&self, task_id: String) -> Result<Vec<Task>> {
        self.transaction(move |conn| steps::cancel_children(conn, &task_id))
            .await
    }
}
