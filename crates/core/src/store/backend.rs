//! The seam between the dialect-neutral store and one database dialect.
//!
//! A backend runs the statements of docs/protocol.md ("Statements") on already
//! validated, normalized inputs and owns its connections. Everything shared by
//! both dialects (ids, defaults, validation, backpressure) lives in `Store`.

use std::time::Duration;

use async_trait::async_trait;

use super::event_rows::{EventFilter, Position, RawPage};
use super::flow::{Declaration, Replaced};
use super::schedule_rows::{PickStatement, ScheduleRows, SqlArg};
use super::signals::rows::{NewSignal, Sent, SignalSummaries, SignalWait, SignalWaitInput};
use super::steps::rows::{ChildWait, NewStep, StepSummary, StoredStep, Suspended, Wake};
use crate::clock::{Clock, HOST_CLOCK};
use crate::error::{Error, Result, NO_SHARED_TX};
use crate::task::Task;

pub use super::backend_values::*;

/// A store's database, in one dialect: the protocol's statements here, each
/// feature's in its own sub-trait (a supertrait below), which the dialect
/// implements in that feature's file (`sqlite/steps.rs`, …).
#[async_trait]
pub trait Backend:
    StepBackend
    + SignalBackend
    + EventBackend
    + ScheduleBackend
    + FlowBackend
    + FollowupBackend
    + PauseBackend
    + BulkBackend
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

/// The steps statements of one dialect (docs/protocol.md, "Durable steps").
/// Writes carry the ownership check; a lost lease is `LostLease` and writes
/// nothing.
#[async_trait]
pub trait StepBackend: Send + Sync {
    /// Whether `cairnq_steps` exists (a catalog read).
    async fn steps_installed(&self) -> Result<bool>;
    /// Create `cairnq_steps` unless the ledger records it, as a migration is
    /// applied (ledger lock, then the ledger row): on first use only.
    async fn install_steps(&self) -> Result<()>;
    /// Every step of a task, children's states joined.
    async fn load_steps(&self, task_id: String) -> Result<Vec<StoredStep>>;
    async fn step_summaries(&self, task_id: String) -> Result<Vec<StepSummary>>;
    /// Store `step` of the task `owned` holds; its stored-at time.
    async fn record_step(&self, owned: HeldTask, step: NewStep) -> Result<i64>;
    /// In one transaction: store `step` (when given), then send the task
    /// back to the queue until `wake` without using an attempt.
    async fn suspend(
        &self,
        owned: HeldTask,
        step: Option<NewStep>,
        wake: Wake,
    ) -> Result<Suspended>;
    /// In one transaction: store `step` (when given), read the child (no
    /// completion of it can slip between the read and the suspension), and
    /// unless it has finished, suspend the task for `recheck_ms`.
    async fn wait_for_child(
        &self,
        owned: HeldTask,
        step: Option<NewStep>,
        child_id: String,
        recheck_ms: i64,
    ) -> Result<ChildWait>;
    /// Make the tasks waiting on any of these finished children due now.
    async fn wake_parents(&self, child_ids: Vec<String>) -> Result<()>;
    /// In one transaction: cancel the unfinished children the task's child
    /// steps submitted, and theirs, at any depth; the rows canceled.
    async fn cancel_children(&self, task_id: String) -> Result<Vec<Task>>;
}

/// The signals statements of one dialect (docs/protocol.md, "Signals"). A
/// signal and a wait each run in one transaction that takes the task's row
/// first, so one of them sees the other: a signal committed first is taken
/// by the wait, a wait committed first is woken by the signal.
#[async_trait]
pub trait SignalBackend: Send + Sync {
    /// Whether the signals tables exist (a catalog read).
    async fn signals_installed(&self) -> Result<bool>;
    /// Create the signals tables unless the ledger records them, as a
    /// migration is applied: on first use only.
    async fn install_signals(&self) -> Result<()>;
    /// Store `signal` for the task `target` names unless it has finished,
    /// and make the task due now if it waits for the signal's name.
    async fn send_signal(&self, target: Target, signal: NewSignal) -> Result<Sent>;
    /// A wait step of the task `owned` holds: its stored end replayed, else
    /// the oldest unconsumed signal of its name taken, else timed out or
    /// stored as waiting (the run goes on: `suspend_for_waits` ends it).
    async fn wait_for_signal(&self, owned: HeldTask, wait: SignalWaitInput) -> Result<SignalWait>;
    /// Suspend the held task for its waits `step_ids` (stored as waiting by
    /// this run): due at once if one has a signal, else at their earliest
    /// timeout.
    async fn suspend_for_waits(&self, owned: HeldTask, step_ids: Vec<String>) -> Result<Suspended>;
    /// The task's waits not yet served and signals not yet consumed.
    async fn signal_summaries(&self, task_id: String) -> Result<SignalSummaries>;
}

/// The schedules statements of one dialect (docs/protocol.md, "Schedules"):
/// `schedule/` decides which one runs, with what.
#[async_trait]
pub trait ScheduleBackend: Send + Sync {
    /// Whether `cairnq_schedules` exists.
    async fn schedules_installed(&self) -> Result<bool>;
    /// Whether the ledger records the table's controls
    /// (`node_schedules_0002.sql`).
    async fn schedule_controls_installed(&self) -> Result<bool>;
    /// Create `cairnq_schedules` and its controls unless the ledger records
    /// them, as a migration is applied (ledger lock, then the ledger row): on
    /// first use only.
    async fn install_schedules(&self) -> Result<()>;
    /// Run the picked schedules statement that only reads; its rows.
    async fn schedule_read(&self, pick: PickStatement, args: Vec<SqlArg>) -> Result<ScheduleRows>;
    /// Run the picked schedules statement that writes, autocommit; its rows.
    async fn schedule_write(&self, pick: PickStatement, args: Vec<SqlArg>) -> Result<ScheduleRows>;
}

/// Flow control's declarations (docs/protocol.md, "Flow control tables");
/// its draws run in the claim transaction (`Draw::flow`).
#[async_trait]
pub trait FlowBackend: Send + Sync {
    /// Create the flow-control tables unless the ledger records them (as
    /// `install_schedules` does), then store each declaration of
    /// `worker_id` that differs from the stored one: the latest wins. Answers
    /// the stored declarations replaced.
    async fn declare_flow(
        &self,
        worker_id: String,
        declarations: Vec<Declaration>,
    ) -> Result<Vec<Replaced>>;
    /// `ctx.retryAfter(ms, { limit: true })`, in one transaction: fill the
    /// window of the budget the held task's name draws from (per its group
    /// under a per-group rate) so that nothing drawing from it starts before
    /// `ms` from now, then suspend the task until then.
    async fn push_back(&self, owned: HeldTask, ms: i64) -> Result<Suspended>;
}

/// The release of debounce follow-ups (docs/protocol.md, "Debounced
/// submit"); a follow-up is held back inside its keyed submit.
#[async_trait]
pub trait FollowupBackend: Send + Sync {
    /// Whether `cairnq_followups` exists.
    async fn followups_installed(&self) -> Result<bool>;
    /// Make the held-back follow-ups whose task has ended due, in one
    /// transaction; how many. The table must exist.
    async fn release_followups(&self) -> Result<u64>;
}

/// The queue pauses statements of one dialect (docs/protocol.md, "Queue
/// pauses"): each one statement, autocommit.
#[async_trait]
pub trait PauseBackend: Send + Sync {
    /// Whether `cairnq_queue_pauses` exists (a catalog read).
    async fn pauses_installed(&self) -> Result<bool>;
    /// Create `cairnq_queue_pauses` unless the ledger records it, as a
    /// migration is applied: on the first pause only.
    async fn install_pauses(&self) -> Result<()>;
    /// Pause `queue` at `now_ms`; whether this call paused it (false: it was
    /// paused already, its row untouched). The table must exist.
    async fn pause_queue(&self, queue: String, now_ms: i64) -> Result<bool>;
    /// Resume `queue`; whether it was paused. The table must exist.
    async fn resume_queue(&self, queue: String) -> Result<bool>;
    /// Every paused queue, by name. The table must exist.
    async fn paused_queues(&self) -> Result<Vec<PausedQueue>>;
}

/// The bulk statements of one dialect (docs/api.md, "Bulk retry and
/// cancel"): one statement each, autocommit.
#[async_trait]
pub trait BulkBackend: Send + Sync {
    /// Change the page `selection` picks; the ids changed.
    async fn bulk_change(&self, selection: BulkSelection) -> Result<Vec<String>>;
    /// The ids `bulk_change(selection)` would change now; writes nothing.
    async fn bulk_preview(&self, selection: BulkSelection) -> Result<Vec<String>>;
}

/// The events statements of one dialect (docs/protocol.md, "Events"): the
/// rows themselves are written by the database's triggers, in the writers'
/// own transactions; these only read and sweep them.
#[async_trait]
pub trait EventBackend: Send + Sync {
    /// Whether the events table exists (a catalog read).
    async fn events_installed(&self) -> Result<bool>;
    /// Create the events tables and triggers unless the ledger records them,
    /// as a migration is applied: on first use only.
    async fn install_events(&self) -> Result<()>;
    /// The final events after `after` that pass `filter`, at most `limit`,
    /// with the newest final position and the retention horizon, all of one
    /// consistent read.
    async fn events_page(
        &self,
        after: Position,
        filter: EventFilter,
        limit: i64,
    ) -> Result<RawPage>;
    /// Delete the events older than `cutoff_ms` and all but the newest
    /// `keep`, in one transaction (`sweep_cut`), recording the horizon.
    async fn sweep_events(&self, cutoff_ms: i64, keep: i64) -> Result<()>;
    /// A mark of the changes seen so far, for `events_changed`.
    fn events_ticket(&self) -> u64;
    /// Resolves early when events may have been committed after ticket
    /// `since`; after `timeout` at the latest.
    async fn events_changed(&self, since: u64, timeout: Duration);
}
