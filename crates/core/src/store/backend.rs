//! The seam between the dialect-neutral store and one database dialect.
//!
//! A backend runs the statements of docs/protocol.md ("Statements") on already
//! validated, normalized inputs and owns its connections. Everything shared by
//! both dialects (ids, defaults, validation, backpressure) lives in `Store`.

use std::time::Duration;

use async_trait::async_trait;

use crate::clock::{Clock, HOST_CLOCK};
use crate::error::{Error, Result, NO_SHARED_TX};
use crate::task::Task;

pub use super::backend_values::*;

/// A store's database, in one dialect: the task lifecycle's statements (the
/// protocol's: this trait's own methods), and one seam per feature, each a
/// supertrait declared in its feature's folder and implemented in that
/// feature's file of each dialect (`sqlite/steps.rs`, `postgres/steps.rs`).
/// A new feature adds its line here and nothing else in this file
/// (CONTRIBUTING.md, "Adding a feature").
#[async_trait]
pub trait Backend:
    crate::steps::backend::StepBackend // durable steps and child waits
    + crate::signals::backend::SignalBackend // signals and their waits
    + crate::events::backend::EventBackend // task events
    + crate::schedule::backend::ScheduleBackend // recurring tasks
    + crate::flow::backend::FlowBackend // flow control (outside a claim)
    + crate::followups::backend::FollowupBackend // debounce follow-ups
    + crate::pauses::backend::PauseBackend // queue pauses
    + crate::bulk::backend::BulkBackend // retryMany, cancelMany
    + Send
    + Sync
    + 'static
{
    /// Open, migrate and version-check; concurrent callers share one attempt.
    async fn connect(&self) -> Result<()>;
    /// Release every connection; a later operation reconnects lazily.
    async fn close(&self) -> Result<()>;
    /// The stored `protocol_version`, 0 when the row is missing.
    async fn protocol_version(&self) -> Result<i64>;

    /// Run `ops` so that they share one commit where the dialect can; each
    /// keeps its own answer, in order. The default runs them concurrently.
    async fn write_group(&self, ops: Vec<WriteOp>) -> Vec<WriteAnswer> {
        futures_util::future::join_all(ops.into_iter().map(|op| self.write_one(op))).await
    }
    /// `write_group` answered on the caller's thread, when the backend can do
    /// so without waiting on a lock or the network.
    fn write_inline(&self, _ops: &[WriteOp]) -> Option<Vec<WriteAnswer>> {
        None
    }
    /// One write through the single-purpose methods below.
    async fn write_one(&self, op: WriteOp) -> WriteAnswer {
        match op {
            WriteOp::Insert(task) => self.insert(task).await.map(Some),
            WriteOp::InsertKeyed(task, key, conflict) => {
                self.insert_keyed(task, key, conflict).await.map(Some)
            }
            WriteOp::Cancel(target) => self.cancel(target).await,
            WriteOp::Retry(target, reset) => self.retry(target, reset).await,
            WriteOp::Finish(owned, outcome) => self.finish(owned, outcome).await.map(Some),
            WriteOp::Progress(owned, progress, message) => {
                self.progress(owned, progress, message).await.map(Some)
            }
            WriteOp::Heartbeat(owned, lease_ms) => self.heartbeat(owned, lease_ms).await.map(Some),
        }
    }

    /// `submitMany`: `ops` (each an `Insert` or `InsertKeyed`) in one
    /// transaction, in order, each keyed one seeing those before it; the
    /// first refusal rolls them all back. Answers each op's task ref.
    async fn insert_all(&self, ops: Vec<WriteOp>) -> Result<Vec<TaskRef>>;
    async fn insert(&self, task: NewTask) -> Result<Task>;
    async fn insert_keyed(&self, task: NewTask, key: String, conflict: Conflict) -> Result<Task>;
    async fn get(&self, target: Target) -> Result<Option<Task>>;
    /// The same read answered on the caller's thread, when the backend can do
    /// so without waiting on a lock or the network; `None` means "use `get`".
    fn get_inline(&self, _target: &Target) -> Option<Result<Option<Task>>> {
        None
    }
    async fn list(&self, filter: ListFilter) -> Result<Vec<Task>>;
    /// `id` and `status` only, of the task or of the key's current task.
    async fn get_status(&self, target: Target) -> Result<Option<TaskRef>>;
    /// `get_status`, then `get` once the probe sees a terminal status.
    /// Backends that can do both in one visit override it.
    async fn wait_poll(&self, target: Target) -> Result<WaitPoll> {
        let probed = self.get_status(target.clone()).await?;
        let row = match &probed {
            Some(found) if found.status.is_terminal() => self.get(target).await?,
            _ => None,
        };
        Ok(WaitPoll { probed, row })
    }
    /// Counts of every queue, or of `queue` only.
    async fn stats(&self, queue: Option<String>) -> Result<Vec<StatusCount>>;
    /// Per queue with a due queued task, how long (ms) the longest-waiting
    /// one has been due.
    async fn oldest_due(&self) -> Result<Vec<(String, i64)>>;
    async fn queue_depth(&self, queue: String, max_depth: i64) -> Result<i64>;
    async fn cancel(&self, target: Target) -> Result<Option<Task>>;
    async fn retry(&self, target: Target, reset_attempt: bool) -> Result<Option<Task>>;
    async fn purge(&self, filter: PurgeFilter) -> Result<Vec<String>>;
    /// How many rows `purge(filter)` would delete now (at most its limit).
    async fn purge_count(&self, filter: PurgeFilter) -> Result<i64>;

    /// Probe, recover leases, run the plan's draws, commit. Returns the
    /// plan after its draws, or `None` when the probe found nothing to do.
    async fn claim_session(
        &self,
        request: ClaimRequest,
        plan: Box<dyn ClaimPlan>,
    ) -> Result<Option<Box<dyn ClaimPlan>>> {
        let polled = self.poll(request, Vec::new(), true, plan).await?;
        Ok(polled.plan)
    }
    /// Whether a worker writes its completions apart from its claims, beside
    /// its poll loop (`worker/completions.rs`), rather than paired with the
    /// next claim in `poll`: where a commit that completes waits for a flush
    /// that a claim's need not.
    fn completes_apart(&self) -> bool {
        false
    }
    /// A worker's poll: `complete_batch` of its finished tasks, then a claim
    /// session, in one transaction — one commit settles the last calls and
    /// claims the next. `probe` lets a backend skip the transaction when a
    /// read finds nothing to do; it is ignored while there is something to
    /// complete.
    async fn poll(
        &self,
        request: ClaimRequest,
        completions: Vec<(String, Option<String>)>,
        probe: bool,
        plan: Box<dyn ClaimPlan>,
    ) -> Result<Polled>;
    async fn heartbeat(&self, owned: HeldTask, lease_ms: i64) -> Result<Task>;
    /// Renews each listed task the worker still owns; returns `(id, cancel
    /// requested)` for those, in no particular order.
    async fn heartbeat_batch(
        &self,
        ids: Vec<String>,
        worker_id: String,
        lease_ms: i64,
    ) -> Result<Vec<(String, bool)>>;
    /// Which of `ids` a cancel was requested for (or ended canceled).
    async fn cancel_requested(&self, ids: Vec<String>) -> Result<Vec<String>>;
    async fn progress(
        &self,
        owned: HeldTask,
        progress: Option<f64>,
        message: Option<String>,
    ) -> Result<Task>;
    async fn finish(&self, owned: HeldTask, outcome: Outcome) -> Result<Task>;
    /// `complete` for many tasks of one worker in one statement; `items` are
    /// `(task id, result JSON)`. Returns the ids finished (the others' leases
    /// were lost).
    async fn complete_batch(
        &self,
        worker_id: String,
        items: Vec<(String, Option<String>)>,
    ) -> Result<Vec<String>>;

    /// Resolves early when something on `queues` may have become claimable;
    /// after `timeout` at the latest. Polling backends just sleep.
    /// A mark of the changes seen so far: a wake given it returns at once if
    /// something changed after it was taken. Take it before the read that
    /// decides to sleep, so a commit landing in between is not slept through.
    fn wake_ticket(&self) -> u64 {
        0
    }
    /// The time its statements bind (docs/api.md, "Testing").
    fn clock(&self) -> &Clock {
        &HOST_CLOCK
    }
    /// The clock moved: wake what sleeps on this backend's changes.
    fn clock_moved(&self) {}
    async fn claim_wake(&self, _queues: &[String], _since: u64, timeout: Duration) {
        tokio::time::sleep(timeout).await
    }
    /// Hand every push notification to `subscriber` until `unsubscribe_push`;
    /// `None` when this backend has no push (polling only).
    fn subscribe_push(&self, _subscriber: PushSubscriber) -> Option<u64> {
        None
    }
    fn unsubscribe_push(&self, _id: u64) {}
    /// Resolves early when `task_id` may have finished; after `timeout` at the latest.
    async fn task_done_wake(&self, _task_id: &str, _since: u64, timeout: Duration) {
        tokio::time::sleep(timeout).await
    }

    /// Open a transaction the caller writes in before `shared_tx_complete`
    /// settles its task in it (`completeIn`). Only Postgres has one to share.
    async fn shared_tx_open(&self) -> Result<SharedTx> {
        Err(Error::UnsupportedBackend(NO_SHARED_TX.into()))
    }
    /// One caller statement in the shared transaction: `values` is a JSON
    /// array, the answer a JSON array of row objects; without `values`, SQL
    /// of any number of statements, answered by `[]`.
    async fn shared_tx_query(
        &self,
        _id: u64,
        _sql: String,
        _values: Option<String>,
    ) -> Result<String> {
        Err(Error::UnsupportedBackend(NO_SHARED_TX.into()))
    }
    /// `complete` in the shared transaction, then commit; a lost lease
    /// rolls everything back with `LostLease`.
    async fn shared_tx_complete(
        &self,
        _id: u64,
        _owned: HeldTask,
        _result: Option<String>,
    ) -> Result<Task> {
        Err(Error::UnsupportedBackend(NO_SHARED_TX.into()))
    }
    /// Roll the shared transaction back (the caller's writes failed).
    async fn shared_tx_abort(&self, _id: u64) -> Result<()> {
        Err(Error::UnsupportedBackend(NO_SHARED_TX.into()))
    }
}
