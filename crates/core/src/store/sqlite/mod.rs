//! The SQLite backend: one file on one host, shared with the other SDKs'
//! processes through SQLite's own locking. This file holds the backend's
//! `Backend` methods, each choosing where its statements run (the writer's
//! queue, a reader, the calling thread); the backend's state is in
//! `lifecycle`, the statements in `rows`, `writes`, `reads` and `claim`, and
//! each feature's in its own file (`steps`, `schedules`, `flow`,
//! `followups`), which implements the feature's sub-trait.

mod bulk;
mod claim;
mod conn;
mod engine;
mod events;
mod flow;
mod followups;
mod lifecycle;
mod open;
mod pauses;
mod query;
mod reads;
mod rows;
mod schedules;
mod signals;
mod steps;
pub mod submit_in;
mod wal_watch;
mod wal_writes;
mod writes;

use std::time::Duration;

use async_trait::async_trait;
use rusqlite::Connection;

pub use self::lifecycle::SqliteBackend;
use self::rows::{get_target, status_of, wait_poll_on};
use self::writes::{complete_many, run_op, spans_statements};
use super::backend::{
    Backend, ClaimPlan, ClaimRequest, Conflict, HeldTask, ListFilter, NewTask, Outcome, Polled,
    PurgeFilter, StatusCount, Target, TaskRef, WaitPoll, WriteAnswer, WriteOp,
};
use crate::clock::Clock;
use crate::error::Result;
use crate::protocol;
use crate::task::Task;

impl SqliteBackend {
    /// The claim probe, on a reader: is a claim worth the write lock?
    async fn claimable(&self, request: &ClaimRequest) -> Result<bool> {
        let probe = claim::probe(request, self.clock.clone());
        // A worker woken by a commit probes without a hand-off.
        self.engine().await?.read_before_write(probe).await
    }

    async fn write_op(&self, op: WriteOp) -> WriteAnswer {
        let transactional = spans_statements(&op);
        let clock = self.clock.clone();
        self.engine()
            .await?
            .submit_write(move |conn| run_op(conn, &op, clock.now_ms()), transactional)
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
                let clock = self.clock.clone();
                engine.enqueue(move |conn| run_op(conn, &op, clock.now_ms()), transactional)
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
                        run_op(conn, op, self.clock.now_ms())
                    })
                })
                .collect(),
        )
    }

    async fn write_one(&self, op: WriteOp) -> WriteAnswer {
        self.write_op(op).await
    }

    async fn insert_all(&self, ops: Vec<WriteOp>) -> Result<Vec<TaskRef>> {
        let clock = self.clock.clone();
        self.transaction(move |conn| writes::insert_all(conn, ops, clock.now_ms()))
            .await
    }

    async fn connect(&self) -> Result<()> {
        self.engine().await.map(|_| ())
    }

    async fn close(&self) -> Result<()> {
        self.close_engine().await
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
        let clock = self.clock.clone();
        self.read(move |conn| reads::oldest_due(conn, clock.now_ms()))
            .await
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
        let clock = self.clock.clone();
        self.write(move |conn| {
            reads::purge_query(conn, false, &f, clock.now_ms(), |row| row.get(0))
        })
        .await
    }

    async fn purge_count(&self, f: PurgeFilter) -> Result<i64> {
        let clock = self.clock.clone();
        self.read(move |conn| {
            let now = clock.now_ms();
            let counted = reads::purge_query(conn, true, &f, now, |row| row.get(0))?;
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
        let clock = self.clock.clone();
        self.transaction(move |conn| claim::claim(conn, &request, &completions, plan, &clock))
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
        let clock = self.clock.clone();
        self.write(move |conn| {
            writes::heartbeat_batch(conn, &ids, &worker_id, lease_ms, clock.now_ms())
        })
        .await
    }

    async fn cancel_requested(&self, ids: Vec<String>) -> Result<Vec<String>> {
        self.read(move |conn| reads::cancel_requested(conn, &ids))
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
        let clock = self.clock.clone();
        self.write(move |conn| complete_many(conn, &worker_id, &items, clock.now_ms()))
            .await
    }

    fn wake_ticket(&self) -> u64 {
        self.change_ticket()
    }

    fn clock(&self) -> &Clock {
        &self.clock
    }

    fn clock_moved(&self) {
        self.wake_here();
    }

    async fn claim_wake(&self, _queues: &[String], since: u64, timeout: Duration) {
        self.changed(since, timeout).await
    }

    async fn task_done_wake(&self, _task_id: &str, since: u64, timeout: Duration) {
        self.changed(since, timeout).await
    }

    async fn finish(&self, owned: HeldTask, outcome: Outcome) -> Result<Task> {
        let row = self.write_op(WriteOp::Finish(owned, outcome)).await?;
        Ok(row.expect("an owned write returns its row"))
    }
}
