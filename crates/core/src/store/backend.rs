//! The seam between the dialect-neutral store and one database dialect.
//!
//! A backend runs the statements of docs/protocol.md ("Statements") on already
//! validated, normalized inputs and owns its connections. Everything shared by
//! both dialects (ids, defaults, validation, backpressure) lives in `Store`.

use std::any::Any;
use std::time::Duration;

use async_trait::async_trait;

use super::flow::{Declaration, Replaced};
use super::schedule_rows::{PickStatement, ScheduleRows, SqlArg};
use super::signal_rows::{NewSignal, Sent, SignalSummaries, SignalWait, SignalWaitInput};
use super::step_rows::{ChildWait, NewStep, StepSummary, StoredStep, Suspended, Wake};
use crate::error::{Error, Result, NO_SHARED_TX};
use crate::task::{Status, Task};

/// How a store opens its database (docs/protocol.md, "Migration ledger").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OpenMode {
    /// The SDK's way: create the database if missing, apply the migrations
    /// its ledger lacks, then check the protocol version.
    #[default]
    Migrate,
    /// `Migrate`, except into a SQLite file that holds another application's
    /// tables and no cairnq installation: that is refused
    /// (`Error::NoCairnqDatabase`) before anything is written, so a mistyped
    /// path never adds cairnq's tables to someone else's file or switches it
    /// to WAL (the command line's `submit` without `--init`). Postgres opens
    /// as `Migrate`: a cairnq installation beside an application's tables is
    /// the ordinary setup there.
    MigrateOwn,
    /// For tools that inspect a database someone else made (the `cairnq`
    /// command line and dashboard): open it only if it exists and is a
    /// cairnq database of this protocol version; never create, migrate or
    /// otherwise write anything while deciding (`Error::NoCairnqDatabase`).
    Existing,
}

/// A task ready to insert: id generated, JSON encoded, defaults applied.
/// Serialized, a row of `insert_tasks.sql`'s JSON array.
#[derive(Clone, Debug, serde::Serialize)]
pub struct NewTask {
    pub id: String,
    pub name: String,
    pub queue: String,
    pub payload: String,
    pub metadata: String,
    pub max_attempts: i64,
    pub priority: i64,
    pub delay_ms: i64,
    pub parent_id: Option<String>,
    pub root_id: Option<String>,
    pub correlation_id: Option<String>,
}

/// One step of a `submitMany` transaction: a run of plain inserts, written
/// by one statement (`insert_tasks.sql`: its JSON array, and the tasks'
/// refs), or a keyed insert after everything before it.
pub enum InsertStep {
    Batch(String, Vec<TaskRef>),
    Keyed(Box<NewTask>, String, Conflict),
}

/// `submitMany`'s ops (each an `Insert` or `InsertKeyed`) as the steps its
/// transaction runs, in order.
pub fn insert_steps(ops: Vec<WriteOp>) -> Vec<InsertStep> {
    let mut steps = Vec::new();
    let mut run: Vec<NewTask> = Vec::new();
    let batch = |run: &mut Vec<NewTask>, steps: &mut Vec<InsertStep>| {
        if !run.is_empty() {
            let json = serde_json::to_string(&run).expect("tasks encode");
            let refs = run
                .drain(..)
                .map(|task| TaskRef {
                    id: task.id,
                    status: Status::Queued,
                })
                .collect();
            steps.push(InsertStep::Batch(json, refs));
        }
    };
    for op in ops {
        match op {
            WriteOp::Insert(task) => run.push(task),
            WriteOp::InsertKeyed(task, key, conflict) => {
                batch(&mut run, &mut steps);
                steps.push(InsertStep::Keyed(Box::new(task), key, conflict));
            }
            other => unreachable!("submitMany passes submits only, got {other:?}"),
        }
    }
    batch(&mut run, &mut steps);
    steps
}

impl NewTask {
    /// The row `insert_task` writes at `now` (every other column takes its
    /// schema default), so a dialect can answer without reading it back.
    pub fn inserted_row(&self, now: i64) -> Task {
        Task {
            id: self.id.clone(),
            name: self.name.clone(),
            queue: self.queue.clone(),
            status: Status::Queued,
            payload: self.payload.clone(),
            result: None,
            error: None,
            metadata: self.metadata.clone(),
            progress: None,
            message: None,
            attempt: 0,
            max_attempts: self.max_attempts,
            priority: self.priority,
            worker_id: None,
            lease_until_ms: None,
            run_at_ms: now + self.delay_ms,
            cancel_requested_at_ms: None,
            parent_id: self.parent_id.clone(),
            root_id: self.root_id.clone(),
            correlation_id: self.correlation_id.clone(),
            created_at_ms: now,
            updated_at_ms: now,
            completed_at_ms: None,
        }
    }
}

/// Keyed-submit strategy (docs/protocol.md, "Keyed submit").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Conflict {
    Reuse,
    ReuseSucceeded,
    Reject,
    Replace,
    /// A debounced submit (docs/protocol.md, "Debounced submit").
    Debounce(Debounce),
    /// A submit of the core's own under a reserved key (`store::reserved`):
    /// `Reject`, against a holder of its own kind only.
    Reserved,
}

/// A debounced submit's window: the queued task under the key starts
/// `window_ms` after the latest submit, but no later than `max_delay_ms` after
/// its creation (the burst's first submit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Debounce {
    pub window_ms: i64,
    pub max_delay_ms: i64,
}

impl Conflict {
    pub fn parse(s: &str) -> Option<Conflict> {
        match s {
            "reuse" => Some(Conflict::Reuse),
            "reuse-succeeded" => Some(Conflict::ReuseSucceeded),
            "reject" => Some(Conflict::Reject),
            "replace" => Some(Conflict::Replace),
            _ => None,
        }
    }
}

/// What a keyed submit does with the task its key points at, if any.
#[derive(Debug, PartialEq, Eq)]
pub enum KeyDecision {
    /// Hand the existing task back unchanged.
    ReturnExisting,
    /// Refuse with `AlreadyExists`.
    Reject,
    /// Cancel the live existing task, then insert.
    CancelThenInsert,
    /// A debounced submit on a key whose task is live: `Debounce::step`
    /// decides what it does with that task.
    Debounce(Debounce),
    /// Insert a new task and repoint the key.
    Insert,
}

impl Conflict {
    /// The keyed-submit decision table (docs/protocol.md, "Keyed submit");
    /// `existing` is the pointed task's status, `None` when there is no pointer
    /// or its task vanished.
    pub fn decide(self, existing: Option<Status>) -> KeyDecision {
        let Some(status) = existing else {
            return KeyDecision::Insert;
        };
        let live = !status.is_terminal();
        match self {
            Conflict::Reject | Conflict::Reserved => KeyDecision::Reject,
            Conflict::Reuse if live => KeyDecision::ReturnExisting,
            Conflict::ReuseSucceeded if live || status == Status::Succeeded => {
                KeyDecision::ReturnExisting
            }
            Conflict::Replace if live => KeyDecision::CancelThenInsert,
            Conflict::Debounce(window) if live => KeyDecision::Debounce(window),
            _ => KeyDecision::Insert,
        }
    }
}

/// A follow-up's start while it is held back (docs/protocol.md, "Debounced
/// submit"): 1e15 ms (about 31,700 years) after its submit, the longest delay
/// a submit takes, so no SDK's claim takes it until it is released.
pub const HELD_BACK_DELAY_MS: i64 = 1_000_000_000_000_000;

/// What a debounced submit does with the live task under its key.
#[derive(Debug, PartialEq, Eq)]
pub enum DebounceStep {
    /// Never started: the new payload and a later start (`debounce.sql`).
    Postpone,
    /// A follow-up still held back: the new payload, and a later start once
    /// released (`debounce.sql` and the follow-ups' `postpone.sql`).
    PostponeHeld,
    /// Running, or queued after it started (a retry's backoff, a suspension):
    /// a follow-up, held back until it ends, and the key points at it.
    FollowUp,
}

impl Debounce {
    /// The decision table of docs/protocol.md, "Debounced submit", over what
    /// the backend read of the live task: its status and attempt, whether it
    /// is a held-back follow-up and whether it recorded a step (both read
    /// only for a queued task of attempt 0, `false` otherwise).
    pub fn step(status: Status, attempt: i64, held: bool, has_steps: bool) -> DebounceStep {
        match status {
            Status::Queued if held => DebounceStep::PostponeHeld,
            Status::Queued if attempt == 0 && !has_steps => DebounceStep::Postpone,
            _ => DebounceStep::FollowUp,
        }
    }

    /// Whether `step` needs to know if a task of this status and attempt is
    /// held back or recorded a step.
    pub fn reads_history(status: Status, attempt: i64) -> bool {
        status == Status::Queued && attempt == 0
    }
}

#[derive(Clone, Debug, Default)]
pub struct ListFilter {
    pub status: Option<Status>,
    pub queue: Option<String>,
    pub name: Option<String>,
    pub root_id: Option<String>,
    pub correlation_id: Option<String>,
    pub limit: i64,
    pub offset: i64,
    /// false: the rows' `BODY_COLUMNS` are not read (payload and metadata
    /// come back `{}`, result and error null) — a summary listing.
    pub bodies: bool,
}

/// `purge`'s validated input (docs/protocol.md, "Purge"): finished rows
/// completed more than `older_than_ms` ago, optionally only those of one
/// queue, terminal status or name; at most `limit` of them.
#[derive(Clone, Debug, PartialEq)]
pub struct PurgeFilter {
    pub older_than_ms: i64,
    pub queue: Option<String>,
    pub status: Option<Status>,
    pub name: Option<String>,
    pub limit: i64,
}

/// A task's id and status: the wait loop's probe (docs/protocol.md, "Status probes").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskRef {
    pub id: String,
    pub status: Status,
}

impl TaskRef {
    pub fn of(task: &Task) -> TaskRef {
        TaskRef {
            id: task.id.clone(),
            status: task.status,
        }
    }
}

/// Task refs as one JSON array, `[{"id": …, "status": …}, …]` (`submitMany`'s
/// answer). An id another SDK wrote may hold any character: each is escaped.
pub fn refs_to_json(refs: &[TaskRef]) -> String {
    let mut out = String::with_capacity(refs.len() * 56 + 2);
    out.push('[');
    for (i, found) in refs.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str("{\"id\":");
        out.push_str(&serde_json::Value::from(found.id.as_str()).to_string());
        out.push_str(",\"status\":\"");
        out.push_str(found.status.as_str());
        out.push_str("\"}");
    }
    out.push(']');
    out
}

/// A wait's poll (docs/protocol.md, "Status probes"): the probe, and the row
/// when the probe found the task terminal.
#[derive(Clone, Debug)]
pub struct WaitPoll {
    pub probed: Option<TaskRef>,
    /// Read only after a terminal probe; `None` if the row went meanwhile.
    pub row: Option<Task>,
}

/// One push notification (docs/protocol.md, "Wakes (LISTEN/NOTIFY)").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Push<'a> {
    /// Work became claimable on this queue.
    Queued(&'a str),
    /// This task reached a terminal status.
    Done(&'a str),
}

/// The channels the protocol's triggers notify on: a queue name, a task id.
pub const QUEUED_CHANNEL: &str = "cairnq_queued";
pub const DONE_CHANNEL: &str = "cairnq_done";

impl<'a> Push<'a> {
    /// What a notification on `channel` says; `None` for another channel.
    pub fn of_notification(channel: &str, payload: &'a str) -> Option<Push<'a>> {
        match channel {
            QUEUED_CHANNEL => Some(Push::Queued(payload)),
            DONE_CHANNEL => Some(Push::Done(payload)),
            _ => None,
        }
    }
}

/// Receives each push notification; called on a runtime thread, so it must
/// not block.
pub type PushSubscriber = std::sync::Arc<dyn Fn(Push<'_>) + Send + Sync>;

/// A task addressed by id, or by the key that currently points at it.
#[derive(Clone, Debug)]
pub enum Target {
    Id(String),
    Key(String),
}

/// The ownership predicate's inputs: which task, held by which worker.
#[derive(Clone, Debug)]
pub struct HeldTask {
    pub task_id: String,
    pub worker_id: String,
}

/// How a worker finalizes a task it owns.
#[derive(Clone, Debug)]
pub enum Outcome {
    /// Raw success: ignores a pending cancel (docs/protocol.md, "Complete /
    /// succeed / fail").
    Succeed { result: Option<String> },
    /// Normal success: a pending cancel wins (docs/protocol.md, "Complete /
    /// succeed / fail").
    Complete { result: Option<String> },
    /// Canceled, re-queued after `delay_ms`, or failed (docs/protocol.md,
    /// "Complete / succeed / fail").
    Fail {
        error: String,
        retryable: bool,
        delay_ms: i64,
    },
}

/// One single-row write, validated: what `Store::write_group` hands a backend.
#[derive(Clone, Debug)]
pub enum WriteOp {
    Insert(NewTask),
    InsertKeyed(NewTask, String, Conflict),
    Cancel(Target),
    Retry(Target, bool),
    Finish(HeldTask, Outcome),
    Progress(HeldTask, Option<f64>, Option<String>),
    Heartbeat(HeldTask, i64),
}

/// A transaction opened for a caller (`completeIn`): `session` is the
/// executor's own transaction id, when an executor holds it, so the caller
/// writes through its own driver; otherwise it writes through
/// `Backend::shared_tx_query`.
#[derive(Clone, Copy, Debug)]
pub struct SharedTx {
    pub id: u64,
    pub session: Option<u64>,
}

/// A write's answer: the row it returns (`None` where a target was missing).
pub type WriteAnswer = Result<Option<Task>>;

/// One `queued`/`running`/… count of `stats`.
#[derive(Clone, Debug, PartialEq)]
pub struct StatusCount {
    pub queue: String,
    pub status: Status,
    pub count: i64,
}

/// The caller side of a claim session (docs/protocol.md, "Claim").
#[derive(Clone, Debug)]
pub struct ClaimRequest {
    pub queues: Vec<String>,
    pub worker_id: String,
    pub lease_ms: i64,
    /// Union of the names the plan may draw for; `None` = any name.
    pub names: Option<Vec<String>>,
}

/// What a worker's poll did.
pub struct Polled {
    /// The ids `complete_batch` finished; the other completions' leases were lost.
    pub completed: Vec<String>,
    /// The plan after its draws; `None` when the probe found nothing.
    pub plan: Option<Box<dyn ClaimPlan>>,
}

/// One claim statement inside a session.
#[derive(Clone, Debug)]
pub struct Draw {
    pub names: Option<Vec<String>>,
    pub limit: i64,
    /// A flow draw: its one name's declared limits apply (docs/protocol.md,
    /// "Flow control tables"); the backend's `flow` module runs it.
    pub flow: bool,
}

impl Draw {
    /// A draw that cannot match a row runs no statement.
    pub fn is_empty(&self) -> bool {
        self.limit <= 0 || self.names.as_ref().is_some_and(Vec::is_empty)
    }
}

/// Decides the draws of a claim session one at a time, seeing each draw's rows
/// before choosing the next. It runs while the write lock (SQLite) or the row
/// locks (Postgres) are held, so it must only compute.
pub trait ClaimPlan: Send + 'static {
    fn next_draw(&mut self) -> Option<Draw>;
    fn accept(&mut self, rows: Vec<Task>);
    /// Before `accept`, when a flow draw found its name's rate window full:
    /// nothing of that name can start for `retry_in_ms`.
    fn rate_limited(&mut self, _retry_in_ms: i64) {}
    /// Whether to commit the session's draws; `false` rolls them back.
    fn keep(&self) -> bool {
        true
    }
    fn into_any(self: Box<Self>) -> Box<dyn Any + Send>;
}

/// A store's database, in one dialect: the protocol's statements here, each
/// feature's in its own sub-trait (a supertrait below), which the dialect
/// implements in that feature's file (`sqlite/steps.rs`, …).
#[async_trait]
pub trait Backend:
    StepBackend
    + SignalBackend
    + ScheduleBackend
    + FlowBackend
    + FollowupBackend
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
    /// the oldest unconsumed signal of its name taken, else timed out or the
    /// task suspended until a signal or the timeout.
    async fn wait_for_signal(&self, owned: HeldTask, wait: SignalWaitInput) -> Result<SignalWait>;
    /// The task's waits not yet served and signals not yet consumed.
    async fn signal_summaries(&self, task_id: String) -> Result<SignalSummaries>;
}

/// The schedules statements of one dialect (docs/protocol.md, "Schedules"):
/// `schedule/` decides which one runs, with what.
#[async_trait]
pub trait ScheduleBackend: Send + Sync {
    /// Whether `cairnq_schedules` exists.
    async fn schedules_installed(&self) -> Result<bool>;
    /// Create `cairnq_schedules` unless the ledger records it, as a migration
    /// is applied (ledger lock, then the ledger row): on first use only.
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
