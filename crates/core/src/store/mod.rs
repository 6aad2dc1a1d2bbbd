//! The dialect-neutral store: ids, defaults, validation and backpressure in
//! front of a `Backend` that speaks one dialect (docs/protocol.md,
//! "Statements"; docs/api.md, "Stores").

pub mod backend;
pub mod backend_values;
pub mod backpressure;
pub mod bad_rows;
mod inputs;
pub mod keyed;
pub mod postgres;
pub mod reserved;
mod session;
pub mod sqlite;
pub mod submit_in;
mod worker_ops;

use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, RwLock};
use std::time::Duration;

pub use backend::*;
pub use inputs::*;
pub use session::ClaimSession;

use self::backpressure::{BackpressureOptions, QueueDepthGate};
use self::inputs::new_task;
use crate::clock::Clock;
use crate::error::{js_number, Error, Result};
use crate::events::rows::EventCounters;
use crate::input::{integer_at_least_one, non_negative_integer, saturating_i64};
use crate::pauses::presence::PausePresence;
use crate::steps::presence::StepsPresence;
use crate::task::{Status, Task};

/// A client write as the API receives it (see `Store::write_group`).
// Unboxed: each write is built once and moved straight into a `WriteOp`, and
// a box would cost every submit an allocation.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum Write {
    /// A caller's submit: no reserved key (`reserved`).
    Submit(SubmitInput),
    /// A submit of the core's own under a reserved key: a schedule's
    /// occurrence, a durable step's child.
    OwnSubmit(SubmitInput),
    /// A cancel; `true`: the task's unfinished `ctx.callChild` children too,
    /// at any depth.
    Cancel(Target, bool),
    Retry(Target, bool),
    Finish(HeldTask, Outcome),
    Progress(HeldTask, Option<f64>, Option<String>),
    Heartbeat(HeldTask, i64),
}

/// `stats()`: queue → status → count, every status present, queues ascending.
pub type Stats = BTreeMap<String, [i64; 5]>;

/// `stats` as JSON: `{queue: {queued, running, succeeded, failed, canceled}}`,
/// statuses in `Status::ALL` order.
pub fn stats_to_json(stats: &Stats) -> String {
    let queues: Vec<String> = stats
        .iter()
        .map(|(queue, counts)| {
            let per_status: Vec<String> = Status::ALL
                .iter()
                .zip(counts)
                .map(|(status, n)| format!("\"{status}\":{n}"))
                .collect();
            format!(
                "{}:{{{}}}",
                serde_json::Value::from(queue.as_str()),
                per_status.join(",")
            )
        })
        .collect();
    format!("{{{}}}", queues.join(","))
}

/// A task store: one backend plus the backpressure gate every submit passes.
pub struct Store {
    backend: Arc<dyn Backend>,
    gate: RwLock<Option<Arc<QueueDepthGate>>>,
    /// Told when this process changes a schedule, so its workers' firing
    /// clocks read the schedules again at once (the schedule module).
    schedule_changes: tokio::sync::Notify,
    /// Whether the schedules table was found with its controls.
    schedules_ready: AtomicBool,
    /// What this store knows of the steps table (docs/api.md, "Durable steps").
    steps: StepsPresence,
    /// Whether the signals tables have been seen (docs/api.md, "Signals").
    signals_seen: AtomicBool,
    /// What this store knows of the queue pauses (docs/api.md, "Queue pauses").
    pauses: PausePresence,
    /// This store's event subscriptions, for the metrics.
    event_counters: EventCounters,
}

impl Store {
    pub fn new(backend: Arc<dyn Backend>) -> Arc<Store> {
        Arc::new(Store {
            backend,
            gate: RwLock::new(None),
            schedule_changes: tokio::sync::Notify::new(),
            schedules_ready: AtomicBool::new(false),
            steps: StepsPresence::default(),
            signals_seen: AtomicBool::new(false),
            pauses: PausePresence::default(),
            event_counters: Default::default(),
        })
    }

    pub fn sqlite(path: &str, busy_timeout_ms: Option<f64>) -> Arc<Store> {
        Store::sqlite_with(path, busy_timeout_ms, OpenMode::Migrate)
    }

    /// A SQLite store that opens its file the `mode` way.
    pub fn sqlite_with(path: &str, busy_timeout_ms: Option<f64>, mode: OpenMode) -> Arc<Store> {
        Store::sqlite_on(path, busy_timeout_ms, mode, Clock::Host)
    }

    /// A SQLite store whose statements bind `clock`'s time (a test clock:
    /// docs/api.md, "Testing").
    pub fn sqlite_on(
        path: &str,
        busy_timeout_ms: Option<f64>,
        mode: OpenMode,
        clock: Clock,
    ) -> Arc<Store> {
        // SQLite takes the busy timeout as an i32 of milliseconds (about 24.8
        // days): longer ones, Infinity included, wait that long.
        let busy_ms = busy_timeout_ms
            .unwrap_or(5_000.0)
            .clamp(0.0, i32::MAX as f64);
        let busy = Duration::from_millis(busy_ms as u64);
        Store::new(Arc::new(
            sqlite::SqliteBackend::new(path, busy)
                .with_mode(mode)
                .with_clock(clock),
        ))
    }

    /// A Postgres store; `max` is the pool size (node-postgres's 10 when absent).
    pub fn postgres(dsn: &str, max: Option<f64>) -> Result<Arc<Store>> {
        Store::postgres_with(dsn, max, None, OpenMode::Migrate)
    }

    /// A Postgres store that opens its database the `mode` way.
    /// `schema`: the store's own schema (see `PostgresBackend::in_schema`).
    pub fn postgres_with(
        dsn: &str,
        max: Option<f64>,
        schema: Option<String>,
        mode: OpenMode,
    ) -> Result<Arc<Store>> {
        if let Some(v) = max {
            integer_at_least_one("max", v)?;
        }
        let pool_size = max.map(|v| v.min(u32::MAX as f64) as usize);
        Ok(Store::new(Arc::new(
            postgres::PostgresBackend::in_schema(dsn, pool_size, schema)?.with_mode(mode),
        )))
    }

    pub fn backend(&self) -> &Arc<dyn Backend> {
        &self.backend
    }

    /// What this store's event subscriptions delivered, and how many are open.
    pub fn event_counters(&self) -> &EventCounters {
        &self.event_counters
    }

    /// Notified whenever this process changes a schedule.
    pub fn schedule_changes(&self) -> &tokio::sync::Notify {
        &self.schedule_changes
    }

    /// Whether this store found the schedules table with its controls.
    pub(crate) fn schedules_ready_flag(&self) -> &AtomicBool {
        &self.schedules_ready
    }

    /// Install (or replace) the gate every later submit passes.
    pub fn use_backpressure(&self, opts: BackpressureOptions) -> Result<()> {
        let gate = QueueDepthGate::new(Arc::new(self.backend.clone()), opts)?;
        *self.gate.write().expect("gate lock") = Some(Arc::new(gate));
        Ok(())
    }

    pub async fn connect(&self) -> Result<()> {
        self.backend.connect().await
    }

    pub async fn close(&self) -> Result<()> {
        self.backend.close().await
    }

    pub async fn protocol_version(&self) -> Result<i64> {
        self.backend.protocol_version().await
    }

    pub async fn submit(&self, input: SubmitInput) -> Result<Task> {
        let op = self.admit(Write::Submit(input)).await?;
        Ok(self
            .backend
            .write_one(op)
            .await?
            .expect("an insert returns its row"))
    }

    /// `submitMany` (docs/api.md, "Bulk submit"): every item checked before
    /// anything is written (a refusal names the item: `wire::read_items`
    /// names it while reading, `inputs::item_error` for the checks),
    /// the backpressure gate passed once per queue, then all inserted in one
    /// transaction; each item's task ref, in item order.
    pub async fn submit_many(&self, items: Vec<Result<SubmitInput>>) -> Result<Vec<TaskRef>> {
        let mut ops = Vec::with_capacity(items.len());
        for (index, item) in items.into_iter().enumerate() {
            let input = item?;
            let op = self
                .validate(Write::Submit(input))
                .map_err(|err| item_error(index, err))?;
            ops.push(op);
        }
        if ops.is_empty() {
            return Ok(Vec::new());
        }
        let gate = self.gate.read().expect("gate lock").clone();
        if let Some(gate) = gate {
            let queues: std::collections::BTreeSet<&str> = ops
                .iter()
                .filter_map(|op| match op {
                    WriteOp::Insert(task) | WriteOp::InsertKeyed(task, ..) => {
                        Some(task.queue.as_str())
                    }
                    _ => None,
                })
                .collect();
            for queue in queues {
                gate.acquire(queue).await?;
            }
        }
        self.backend.insert_all(ops).await
    }

    /// Several client writes that share one commit where the backend can
    /// (writes issued in the same JS tick); each keeps its own answer. A write
    /// given as an error (one the caller could not decode) is answered with
    /// it, and the others still run.
    pub async fn write_group(&self, writes: Vec<Result<Write>>) -> Vec<WriteAnswer> {
        let mut admitted = Vec::with_capacity(writes.len());
        let mut may_wake = false;
        let mut cascades = Vec::with_capacity(writes.len());
        for write in writes {
            may_wake |= write.as_ref().is_ok_and(|w| self.may_wake_parents(w));
            cascades.push(matches!(write, Ok(Write::Cancel(_, true))));
            admitted.push(match write {
                Ok(write) => self.admit(write).await,
                Err(err) => Err(err),
            });
        }
        let (ops, answers) = split_refused(admitted);
        let answers = in_order(answers, self.backend.write_group(ops).await);
        if may_wake {
            let rows = answers
                .iter()
                .filter_map(|a| a.as_ref().ok().and_then(Option::as_ref));
            self.wake_parents_of(crate::steps::presence::finished_children(rows))
                .await;
        }
        for (answer, cascade) in answers.iter().zip(cascades) {
            if let (Ok(Some(row)), true) = (answer, cascade) {
                self.cancel_children(&row.id).await;
            }
        }
        answers
    }

    /// Client writes of one tick on the caller's thread, sharing one commit,
    /// when the backend can run them without waiting; `None` means "use
    /// `write_group`". Submits that the backpressure gate would have to admit
    /// never run here, nor cancels and finishes that may wake a waiting
    /// parent (docs/api.md, "Durable steps").
    pub fn write_now(&self, writes: Vec<Result<Write>>) -> Option<Vec<WriteAnswer>> {
        let gated = self.gate.read().expect("gate lock").is_some();
        if writes.iter().any(|w| {
            w.as_ref().is_ok_and(|w| {
                (gated && matches!(w, Write::Submit(_) | Write::OwnSubmit(_)))
                    || self.may_wake_parents(w)
            })
        }) {
            return None;
        }
        let validated = writes.into_iter().map(|w| w.and_then(|w| self.validate(w)));
        let (ops, answers) = split_refused(validated.collect());
        let written = if ops.is_empty() {
            Vec::new()
        } else {
            self.backend.write_inline(&ops)?
        };
        Some(in_order(answers, written))
    }

    /// Validation, then the backpressure gate for submits.
    async fn admit(&self, write: Write) -> Result<WriteOp> {
        let op = self.validate(write)?;
        if let WriteOp::Insert(task) | WriteOp::InsertKeyed(task, ..) = &op {
            let gate = self.gate.read().expect("gate lock").clone();
            if let Some(gate) = gate {
                gate.acquire(&task.queue).await?;
            }
        }
        Ok(op)
    }

    /// A client write as the backend runs it: ids, defaults, checks.
    fn validate(&self, write: Write) -> Result<WriteOp> {
        match write {
            Write::Submit(input) => {
                reserved::refuse_reserved_key(input.key.as_deref())?;
                new_task(input)
            }
            Write::OwnSubmit(input) => new_task(input).map(reserved::own_submit),
            Write::Cancel(target, _) => Ok(WriteOp::Cancel(target)),
            Write::Retry(target, reset) => Ok(WriteOp::Retry(target, reset)),
            Write::Finish(owned, outcome) => Ok(WriteOp::Finish(owned, outcome)),
            Write::Progress(owned, progress, message) => {
                Ok(WriteOp::Progress(owned, progress, message))
            }
            Write::Heartbeat(owned, lease_ms) => Ok(WriteOp::Heartbeat(owned, lease_ms)),
        }
    }

    pub async fn get(&self, target: Target) -> Result<Option<Task>> {
        self.backend.get(target).await
    }

    /// `get` without leaving the caller's thread, where the backend can answer
    /// without waiting (see `Backend::get_inline`).
    pub fn get_inline(&self, target: &Target) -> Option<Result<Option<Task>>> {
        self.backend.get_inline(target)
    }

    pub async fn list(&self, input: ListInput) -> Result<Vec<Task>> {
        let status = input
            .status
            .as_deref()
            .map(str::parse::<Status>)
            .transpose()?;
        let bad = |v: Option<f64>| v.is_some_and(|v| v.is_nan() || v < 0.0);
        if bad(input.limit) || bad(input.offset) {
            let show = |v: Option<f64>| v.map_or("undefined".to_string(), js_number);
            return Err(Error::Invalid(format!(
                "limit/offset must be >= 0, got limit={} offset={}",
                show(input.limit),
                show(input.offset)
            )));
        }
        let limit = input.limit.map_or(DEFAULT_LIST_LIMIT, saturating_i64);
        if limit == 0 {
            return Ok(Vec::new());
        }
        self.backend
            .list(ListFilter {
                status,
                queue: input.queue,
                name: input.name,
                root_id: input.root_id,
                correlation_id: input.correlation_id,
                limit,
                offset: input.offset.map_or(0, saturating_i64),
                bodies: input.bodies != Some(false),
            })
            .await
    }

    /// `cancel`: the task, and its unfinished `ctx.callChild` children at
    /// any depth (`cancel_children`).
    pub async fn cancel(&self, target: Target) -> Result<Option<Task>> {
        let row = self.backend.cancel(target).await?;
        if let Some(row) = &row {
            self.cancel_children(&row.id).await;
        }
        Ok(row)
    }

    /// Cancel the unfinished children `task_id`'s child steps submitted, and
    /// theirs (docs/api.md, "Durable steps"): queued ones end at once,
    /// running ones get a cancel request. A separate transaction after the
    /// task's own cancel, run only where the steps table may exist; its
    /// failure leaves the children to finish as they would have, so it is
    /// not the cancel's.
    pub(crate) async fn cancel_children(&self, task_id: &str) {
        if !self.steps.maybe() || !self.steps_installed().await.unwrap_or(false) {
            return;
        }
        let _ = self.backend.cancel_children(task_id.to_string()).await;
    }

    pub async fn retry(&self, target: Target, reset_attempt: bool) -> Result<Option<Task>> {
        self.backend.retry(target, reset_attempt).await
    }

    pub async fn purge(&self, input: PurgeInput) -> Result<Vec<String>> {
        self.purge_filtered(input.validate()?).await
    }

    /// How many rows `purge(input)` would delete now, checked as `purge`
    /// checks it: a preview bounded by the purge's own limit.
    pub async fn purge_count(&self, input: PurgeInput) -> Result<i64> {
        self.backend.purge_count(input.validate()?).await
    }

    /// `purge` of an input `PurgeInput::validate` already checked.
    pub async fn purge_filtered(&self, filter: PurgeFilter) -> Result<Vec<String>> {
        self.backend.purge(filter).await
    }

    /// `get_status`/`get_status_by_key` (docs/protocol.md, "Status probes").
    pub async fn get_status(&self, target: Target) -> Result<Option<TaskRef>> {
        self.backend.get_status(target).await
    }

    /// A wait's poll: the status probe, and the row once it is terminal.
    pub async fn wait_poll(&self, target: Target) -> Result<WaitPoll> {
        self.backend.wait_poll(target).await
    }

    /// Every queue's counts, or only `queue`'s: then that queue is always
    /// present, all zeros when it has no rows.
    pub async fn stats(&self, queue: Option<String>) -> Result<Stats> {
        let mut stats = Stats::new();
        if let Some(queue) = &queue {
            stats.insert(queue.clone(), [0; 5]);
        }
        for row in self.backend.stats(queue).await? {
            let counts = stats.entry(row.queue).or_insert([0; 5]);
            counts[row.status as usize] += row.count;
        }
        Ok(stats)
    }

    /// Per queue with a due queued task, how long (ms) the longest-waiting
    /// one has been due (the metrics' queue age).
    pub async fn oldest_due(&self) -> Result<BTreeMap<String, i64>> {
        Ok(self.backend.oldest_due().await?.into_iter().collect())
    }

    pub async fn queue_depth(&self, queue: String, max_depth: f64) -> Result<i64> {
        let max_depth = non_negative_integer("maxDepth", max_depth)?;
        if max_depth == 0 {
            return Ok(0);
        }
        let headroom = self.backend.queue_depth(queue, max_depth).await?;
        Ok(headroom.max(0))
    }

    pub(crate) fn signals_seen(&self) -> bool {
        self.signals_seen.load(std::sync::atomic::Ordering::SeqCst)
    }

    pub(crate) fn mark_signals_seen(&self) {
        self.signals_seen
            .store(true, std::sync::atomic::Ordering::SeqCst)
    }

    pub fn pause_presence(&self) -> &PausePresence {
        &self.pauses
    }

    /// What this store knows of the steps table.
    pub(crate) fn step_presence(&self) -> &StepsPresence {
        &self.steps
    }

    /// Make the tasks waiting on any of `child_ids` (each just finished) due
    /// now (`StepsPresence::wake_parents`).
    pub async fn wake_parents_of(&self, child_ids: Vec<String>) {
        self.steps
            .wake_parents(self.backend.as_ref(), child_ids)
            .await
    }

    /// Whether a client write of `write`'s kind must leave the caller's
    /// thread: a cancel or a finish may end a child whose parent waits, and
    /// only the asynchronous path wakes it.
    fn may_wake_parents(&self, write: &Write) -> bool {
        matches!(write, Write::Cancel(..) | Write::Finish(..)) && self.steps.maybe()
    }

    /// See `Backend::wake_ticket`.
    pub fn wake_ticket(&self) -> u64 {
        self.backend.wake_ticket()
    }

    /// The time this store's statements bind and its workers compare with.
    pub fn clock(&self) -> &Clock {
        self.backend.clock()
    }

    /// Move a test clock `ms` forward (docs/api.md, "Testing"); its time
    /// after. Workers' sleeps and firing clocks look again at once: what the
    /// move made due runs without waiting for a poll.
    pub fn advance_clock(&self, ms: f64) -> Result<i64> {
        let now = self.backend.clock().advance(ms)?;
        self.backend.clock_moved();
        self.schedule_changes.notify_waiters();
        Ok(now)
    }

    pub async fn claim_wake(&self, queues: &[String], since: u64, timeout: Duration) {
        self.backend.claim_wake(queues, since, timeout).await
    }

    pub async fn task_done_wake(&self, task_id: &str, since: u64, timeout: Duration) {
        self.backend.task_done_wake(task_id, since, timeout).await
    }
}

/// The ops to run, and a slot per write: its refusal, or `None` where the
/// backend's answer goes.
fn split_refused(admitted: Vec<Result<WriteOp>>) -> (Vec<WriteOp>, Vec<Option<WriteAnswer>>) {
    let mut ops = Vec::with_capacity(admitted.len());
    let answers = admitted
        .into_iter()
        .map(|op| match op {
            Ok(op) => {
                ops.push(op);
                None
            }
            Err(err) => Some(Err(err)),
        })
        .collect();
    (ops, answers)
}

/// Every write's answer in the writes' order: `written` holds the backend's,
/// one per op, in order.
fn in_order(answers: Vec<Option<WriteAnswer>>, written: Vec<WriteAnswer>) -> Vec<WriteAnswer> {
    let mut written = written.into_iter();
    answers
        .into_iter()
        .map(|answer| answer.unwrap_or_else(|| written.next().expect("one answer per op")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_json_names_every_status_of_every_queue() {
        let stats = Stats::from([("q\"1".to_string(), [1, 2, 3, 4, 5])]);
        assert_eq!(
            stats_to_json(&stats),
            r#"{"q\"1":{"queued":1,"running":2,"succeeded":3,"failed":4,"canceled":5}}"#
        );
        assert_eq!(stats_to_json(&Stats::new()), "{}");
    }
}
