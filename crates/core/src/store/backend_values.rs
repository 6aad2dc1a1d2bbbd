//! The values that cross the backend seam (`backend.rs`): what a store hands
//! a backend to write, claim or list, and what it answers.

use std::any::Any;

use crate::deadletter::Route;
use crate::error::Result;
use crate::followups::window::Debounce;
use crate::task::{Status, Task};
use crate::unique;

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
/// Serialized, a row of Postgres's `insert_tasks.sql` JSON array.
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

/// One step of a `submitMany` transaction on Postgres: a run of plain
/// inserts, written by one statement (`insert_tasks.sql`: its JSON array,
/// and the tasks' refs), or a keyed insert after everything before it.
/// (SQLite runs its cached single insert per item: no round trips to save.)
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
    /// `decide` over the pointed task itself at `now`: a finished task whose
    /// uniqueness window is open holds its key (`reject` refuses, `reuse`
    /// and `reuse-succeeded` hand it back, `replace` and a debounced submit
    /// start a new task); once its window has ended the key is free
    /// (docs/api.md, "Uniqueness window").
    pub fn decide_at(self, existing: Option<&Task>, now: i64) -> KeyDecision {
        match existing.and_then(|task| unique::window_open(task, now)) {
            None => self.decide(existing.map(|task| task.status)),
            Some(false) => KeyDecision::Insert,
            Some(true) => match self {
                Conflict::Reject | Conflict::Reserved => KeyDecision::Reject,
                Conflict::Reuse | Conflict::ReuseSucceeded => KeyDecision::ReturnExisting,
                Conflict::Replace | Conflict::Debounce(_) => KeyDecision::Insert,
            },
        }
    }

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
/// queue, terminal status or name (or all but the newest `keep_last` of
/// them); at most `limit` of them.
#[derive(Clone, Debug, PartialEq)]
pub struct PurgeFilter {
    pub older_than_ms: i64,
    /// Set: purge what the filters match past the most recent this many
    /// (`older_than_ms` is then 0 and unused).
    pub keep_last: Option<i64>,
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
/// The channel the events triggers notify on, once per transaction
/// (docs/protocol.md, "Events"); not the protocol's.
pub const EVENTS_CHANNEL: &str = "cairnq_events";

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
    /// "Complete / succeed / fail"); failed for good, dead-lettered by
    /// `dead_letter` in the same transaction (docs/api.md, "Dead letters").
    Fail {
        error: String,
        retryable: bool,
        delay_ms: i64,
        dead_letter: Route,
    },
}

impl Outcome {
    /// Whether writing it may submit a dead letter (a transaction of its own
    /// on Postgres).
    pub fn may_dead_letter(&self) -> bool {
        matches!(self, Outcome::Fail { dead_letter, .. } if *dead_letter != Route::None)
    }
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
    /// The dead-letter queue the poller's registration of `name` names: the
    /// route of a task of that name whose lease this claim's recovery failed
    /// for good, when its submit named none.
    fn dead_letter_of(&self, _name: &str) -> Option<&str> {
        None
    }
    fn into_any(self: Box<Self>) -> Box<dyn Any + Send>;
}
