//! The Rust half of a handler's `TaskContext` (docs/api.md, "TaskContext"): the
//! flags the worker and the bindings share, the write gate, and early settlement.

use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Weak};

use crate::backoff::Backoff;
use crate::deadletter::Route;
use crate::error::{Error, Result};
use crate::input::{at_least, stored_ms, Options};
use crate::retry::{function_delay_ms, submitted_backoff};
use crate::steps::rows::Wake;
use crate::steps::StepLog;
use crate::store::{HeldTask, Outcome, Store, Target};
use crate::task::Task;
use crate::timeouts::AbortReason;

/// Hears that a worker's context has aborted (the run's invoker).
pub(crate) type LeaseListener = Weak<dyn Fn(&TaskContext) + Send + Sync>;

/// One claimed task as its handler sees it. Shared between the worker (which
/// beats, settles leftovers and enforces time limits) and the JS object the
/// bindings hand to the handler.
pub struct TaskContext {
    task: Task,
    worker_id: String,
    lease_ms: i64,
    backoff: Backoff,
    /// Its registration's `retry.attempts`, under the task's `max_attempts`.
    attempts_cap: Option<i64>,
    /// JS calls the registration's backoff function when the task fails (no
    /// backoff was submitted with it).
    backoff_function: bool,
    /// Where a failure for good of the task goes (docs/api.md, "Dead letters").
    dead_letter: Route,
    store: Arc<Store>,
    settled: AtomicBool,
    /// The write gate is closed (the lease is lost, or the call abandoned).
    lease_lost: AtomicBool,
    cancel_seen: AtomicBool,
    /// The first `AbortReason` (its `code`), 0 before any.
    abort: AtomicU8,
    /// Settlement writes under way. While one runs, the heartbeat does not
    /// read the task's absence as a lost lease: that write may be the cause.
    settling: AtomicUsize,
    /// Told once, at the first abort, so the bindings can abort `signal`.
    /// Weak: a context kept by user code must not keep the handler runtime alive.
    listener: Option<LeaseListener>,
    /// `(call id, index in the call)` for a worker's context.
    position: Option<(u64, usize)>,
    /// The context is one of a batch call's (`fn(contexts)`).
    batch: bool,
    /// Its name's registration declares a rate limit (`ctx.retryAfter`'s
    /// `limit`).
    rate_limited: bool,
    /// A step sent the task back to the queue: this run is over (`worker::steps`).
    suspended: AtomicBool,
    /// The steps of this run (docs/api.md, "Durable steps").
    steps: StepLog,
}

impl TaskContext {
    /// A context outside any worker (`new TaskContext(store, task, …)` in JS);
    /// a backoff the task was submitted with wins over `backoff`.
    pub fn new(
        store: Arc<Store>,
        task: Task,
        worker_id: String,
        lease_ms: i64,
        backoff: Backoff,
    ) -> TaskContext {
        TaskContext {
            backoff: submitted_backoff(&task).unwrap_or(backoff),
            dead_letter: Route::of_task(&task, None),
            task,
            worker_id,
            lease_ms,
            attempts_cap: None,
            backoff_function: false,
            store,
            settled: AtomicBool::new(false),
            lease_lost: AtomicBool::new(false),
            cancel_seen: AtomicBool::new(false),
            abort: AtomicU8::new(0),
            settling: AtomicUsize::new(0),
            listener: None,
            position: None,
            batch: false,
            rate_limited: false,
            suspended: AtomicBool::new(false),
            steps: StepLog::default(),
        }
    }

    /// The context of task `index` of call `call_id` (a batch call's when
    /// `batch`); lease loss is reported to `listener`.
    pub(crate) fn in_call(
        mut self,
        listener: LeaseListener,
        call_id: u64,
        index: usize,
        batch: bool,
    ) -> TaskContext {
        self.listener = Some(listener);
        self.position = Some((call_id, index));
        self.batch = batch;
        self
    }

    /// The context of a name whose registration caps its attempts.
    pub(crate) fn capped_at(mut self, attempts: Option<i64>) -> TaskContext {
        self.attempts_cap = attempts;
        self
    }

    /// The context of a name whose registration's backoff is a function: it
    /// applies unless the task was submitted with a backoff of its own.
    pub(crate) fn with_backoff_function(mut self, function: bool) -> TaskContext {
        self.backoff_function = function && submitted_backoff(&self.task).is_none();
        self
    }

    /// The context of a name whose registration names a dead-letter queue
    /// (a queue the task was submitted with wins).
    pub(crate) fn dead_letter_to(mut self, registration: Option<&str>) -> TaskContext {
        self.dead_letter = Route::of_task(&self.task, registration);
        self
    }

    /// Whether JS calls the registration's backoff function when this task fails.
    pub fn backoff_function(&self) -> bool {
        self.backoff_function
    }

    /// How many attempts the task gets here: its `max_attempts`, under its
    /// registration's `retry.attempts`.
    pub fn max_attempts(&self) -> i64 {
        let stored = self.task.max_attempts;
        self.attempts_cap.map_or(stored, |cap| cap.min(stored))
    }

    /// The context of a name whose registration declares a rate limit.
    pub(crate) fn rate_limited(mut self, rate_limited: bool) -> TaskContext {
        self.rate_limited = rate_limited;
        self
    }

    /// Whether the name's registration declares a rate limit.
    pub fn is_rate_limited(&self) -> bool {
        self.rate_limited
    }

    /// `(call id, index)` of a worker's context; `None` for a standalone one.
    pub fn position(&self) -> Option<(u64, usize)> {
        self.position
    }

    pub fn task(&self) -> &Task {
        &self.task
    }

    pub fn task_id(&self) -> &str {
        &self.task.id
    }

    pub fn lease_ms(&self) -> i64 {
        self.lease_ms
    }

    pub fn settled(&self) -> bool {
        self.settled.load(SeqCst)
    }

    pub fn lease_lost(&self) -> bool {
        self.lease_lost.load(SeqCst)
    }

    pub fn cancel_seen(&self) -> bool {
        self.cancel_seen.load(SeqCst)
    }

    pub fn mark_settled(&self) {
        self.settled.store(true, SeqCst);
    }

    pub fn mark_lease_lost(&self) {
        self.abort(AbortReason::LostLease);
    }

    /// Why `signal` aborted, once it has.
    pub fn abort_reason(&self) -> Option<AbortReason> {
        AbortReason::from_code(self.abort.load(SeqCst))
    }

    /// Aborts for `reason`, closing the write gate unless it is a cancel.
    /// Sticky: the first reason stays, and the listener hears of it alone.
    pub fn abort(&self, reason: AbortReason) {
        if reason.closes_gate() {
            self.lease_lost.store(true, SeqCst);
        }
        if self
            .abort
            .compare_exchange(0, reason.code(), SeqCst, SeqCst)
            .is_err()
        {
            return;
        }
        if let Some(listener) = self.listener.as_ref().and_then(Weak::upgrade) {
            listener(self);
        }
    }

    /// Remembers a cancel request seen by any read or write of the row, and
    /// aborts for it.
    pub fn observe_cancel(&self, requested: bool) {
        if requested {
            self.cancel_seen.store(true, SeqCst);
            self.abort(AbortReason::Canceled);
        }
    }

    /// True when a settlement write of this context is under way.
    pub(crate) fn is_settling(&self) -> bool {
        self.settling.load(SeqCst) > 0
    }

    /// A settlement write is queued or under way (until `end_settling`).
    pub(crate) fn begin_settling(&self) {
        self.settling.fetch_add(1, SeqCst);
    }

    pub(crate) fn end_settling(&self) {
        self.settling.fetch_sub(1, SeqCst);
    }

    pub(crate) fn store(&self) -> &Arc<Store> {
        &self.store
    }

    pub(super) fn is_batch(&self) -> bool {
        self.batch
    }

    pub(super) fn step_log(&self) -> &StepLog {
        &self.steps
    }

    /// True once a step sent the task back to the queue: the run is over.
    pub fn suspended(&self) -> bool {
        self.suspended.load(SeqCst)
    }

    /// The run is over: the task is queued (or canceled) again; nothing of
    /// it is written any more, by the handler or by the worker.
    pub(super) fn mark_suspended(&self) {
        self.suspended.store(true, SeqCst);
        self.mark_settled();
    }

    pub(super) fn owned(&self) -> HeldTask {
        HeldTask {
            task_id: self.task.id.clone(),
            worker_id: self.worker_id.clone(),
        }
    }

    pub(super) fn lost(&self) -> Error {
        Error::LostLease {
            task_id: self.task.id.clone(),
        }
    }

    /// `ctx.progress`: coalescing (`None` leaves a field unchanged), gated.
    pub async fn progress(&self, progress: Option<f64>, message: Option<String>) -> Result<Task> {
        let write = self.store.progress(self.owned(), progress, message);
        self.gated(false, write).await
    }

    /// `ctx.heartbeat`: renews the lease by the worker's `leaseMs`, gated.
    pub async fn heartbeat(&self) -> Result<Task> {
        let write = self.store.heartbeat(self.owned(), self.lease_ms);
        self.gated(false, write).await
    }

    /// `ctx.canceled()`: a cancel seen before, or the row's current state.
    pub async fn canceled(&self) -> Result<bool> {
        if self.cancel_seen() {
            return Ok(true);
        }
        let row = self.store.get(Target::Id(self.task.id.clone())).await?;
        let canceled = row.is_none_or(|row| {
            row.cancel_requested() || row.status == crate::task::Status::Canceled
        });
        self.observe_cancel(canceled);
        Ok(canceled)
    }

    /// `ctx.succeed(result)`: a gated `complete` (a pending cancel wins).
    /// `None` without a write when the context is already settled.
    pub async fn succeed(&self, result: Option<String>) -> Result<Option<Task>> {
        if self.settled() {
            return Ok(None);
        }
        let write = self
            .store
            .finish(self.owned(), Outcome::Complete { result });
        self.gated(true, write).await.map(Some)
    }

    /// `ctx.succeedIn`'s settlement: a gated `complete` in the transaction
    /// `shared` the caller has written in, committing both (`completeIn`).
    /// `None` without a write when the context is already settled; either
    /// way of not writing rolls the caller's writes back.
    pub async fn complete_shared(
        &self,
        shared: u64,
        result: Option<String>,
    ) -> Result<Option<Task>> {
        let backend = self.store.backend();
        if self.settled() || self.lease_lost() {
            backend.shared_tx_abort(shared).await?;
            return if self.settled() {
                Ok(None)
            } else {
                Err(self.lost())
            };
        }
        let write = backend.shared_tx_complete(shared, self.owned(), result);
        self.gated(true, write).await.map(Some)
    }

    /// `ctx.fail(reason, {retryable, delayMs})` with the reason already
    /// normalized to an envelope (docs/api.md, "Errors") and `{delayMs}` as
    /// JS sends it. The retry delay is `delayMs` when given (a stored
    /// duration >= 0), else what the backoff function returned
    /// (`backoff_ms`, where JS called it), else the backoff's. A bad value
    /// of either is refused before anything is written.
    pub async fn fail(
        &self,
        envelope_json: String,
        retryable: bool,
        options: &str,
        backoff_ms: Option<f64>,
    ) -> Result<Option<Task>> {
        let mut fields = Options::parse("ctx.fail options", options, &["retryable", "delayMs"])?;
        let delay_ms = match fields.number("delayMs")? {
            Some(v) => Some(fail_delay_ms(v)?),
            None => backoff_ms.map(function_delay_ms).transpose()?,
        };
        if self.settled() {
            return Ok(None);
        }
        let outcome = self.fail_outcome(envelope_json, retryable, delay_ms);
        let write = self.store.finish(self.owned(), outcome);
        self.gated(true, write).await.map(Some)
    }

    /// A failure's write (docs/api.md, "Retry policy"): retryable only while
    /// attempts are left under the registration's cap (the task's
    /// `max_attempts` is the statement's to check), after `delay_ms` or the
    /// backoff's delay.
    fn fail_outcome(&self, error: String, retryable: bool, delay_ms: Option<i64>) -> Outcome {
        let retryable = retryable && self.task.attempt < self.max_attempts();
        Outcome::Fail {
            error,
            retryable,
            delay_ms: delay_ms
                .filter(|_| retryable)
                .unwrap_or_else(|| self.backoff.fail_delay_ms(self.task.attempt, retryable)),
            dead_letter: self.dead_letter.clone(),
        }
    }

    /// The write gate of docs/api.md, "TaskContext".
    async fn gated(
        &self,
        settles: bool,
        write: impl Future<Output = Result<Task>>,
    ) -> Result<Task> {
        if self.lease_lost() || self.settled() {
            return Err(self.lost());
        }
        let _settling = settles.then(|| Settling::start(self));
        match write.await {
            Ok(row) => {
                self.observe_cancel(row.cancel_requested());
                if settles {
                    self.mark_settled();
                }
                Ok(row)
            }
            Err(err) => {
                if matches!(err, Error::LostLease { .. }) {
                    self.mark_lease_lost();
                }
                Err(err)
            }
        }
    }

    /// The worker's `fail` of a leftover: not gated (it must work after a
    /// time limit's abandonment); a lost lease is swallowed without a flag.
    /// `delay_ms`: the backoff function's, else the backoff's.
    pub(crate) async fn fail_leftover(
        &self,
        envelope_json: String,
        retryable: bool,
        delay_ms: Option<i64>,
    ) -> Result<()> {
        let _settling = Settling::start(self);
        let outcome = self.fail_outcome(envelope_json, retryable, delay_ms);
        let written = self.store.finish(self.owned(), outcome).await.map(drop);
        self.settled_unless_lost(written)
    }

    /// The worker's hand-back of a leftover at a shutdown deadline: back to
    /// its queue, due now, its attempt given back (a requested cancel wins);
    /// not gated, a lost lease swallowed, as `fail_leftover`.
    pub(crate) async fn hand_back(&self) -> Result<()> {
        let _settling = Settling::start(self);
        let written = self
            .store
            .suspend(self.owned(), None, Wake::After(0))
            .await
            .map(drop);
        self.settled_unless_lost(written)
    }

    fn settled_unless_lost(&self, written: Result<()>) -> Result<()> {
        match written {
            Ok(()) => {
                self.mark_settled();
                Ok(())
            }
            Err(Error::LostLease { .. }) => Ok(()),
            Err(err) => Err(err),
        }
    }
}

/// `ctx.fail`'s `delayMs`: a stored duration, not negative.
fn fail_delay_ms(v: f64) -> Result<i64> {
    at_least("delayMs", v, 0.0)?;
    stored_ms("delayMs", v)
}

/// Counts one settlement write for as long as it is alive.
struct Settling<'a>(&'a TaskContext);

impl<'a> Settling<'a> {
    fn start(context: &'a TaskContext) -> Settling<'a> {
        context.begin_settling();
        Settling(context)
    }
}

impl Drop for Settling<'_> {
    fn drop(&mut self) {
        self.0.end_settling();
    }
}
