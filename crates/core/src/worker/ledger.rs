//! What one `run` has in flight: the calls and their charges (slots, bytes,
//! names, resources), the calls held for a slot, and the completions that
//! wait for the next poll to write them.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::Notify;
use tokio::task::AbortHandle;

use super::call::{Call, Ending};
use super::context::TaskContext;
use super::invoker::Invoker;
use super::plan::Usage;
use super::report::Reporter;
use crate::error::Error;

/// Handlers whose recent calls average less than this per task may have a
/// round of calls claimed ahead of them (see `WorkerInner::poll_until_stopped`).
/// Per task, so that a batch call of many short tasks counts as short.
const SHORT_TASK: Duration = Duration::from_millis(5);

/// A returned task waiting for its `complete` (written by the next poll).
pub(crate) struct PendingCompletion {
    pub(crate) call: Arc<Call>,
    pub(crate) context: Arc<TaskContext>,
    pub(crate) result: Option<String>,
}

impl PendingCompletion {
    pub(crate) fn item(&self) -> (String, Option<String>) {
        (self.context.task_id().to_string(), self.result.clone())
    }
}

/// The state of one `run`: the invoker, what is in flight, what awaits its
/// settlement write.
pub(crate) struct RunState {
    pub(crate) invoker: Arc<dyn Invoker>,
    /// Tells the invoker of a lost lease; contexts hold it weakly.
    pub(crate) aborted: Arc<dyn Fn(&TaskContext) + Send + Sync>,
    pub(crate) ledger: Mutex<Ledger>,
    pub(crate) completions: Mutex<Vec<PendingCompletion>>,
    /// A write of completions runs beside the poll loop (`completions.rs`).
    pub(crate) completions_writing: AtomicBool,
    /// Wakes the poll loop: a call ended or a settlement was written.
    pub(crate) changed: Notify,
    pub(crate) runtime: tokio::runtime::Handle,
    /// Handlers that may run at once.
    pub(crate) slots: i64,
}

#[derive(Default)]
pub(crate) struct Ledger {
    pub(crate) in_flight: i64,
    pub(crate) bytes: u64,
    /// Calls by dispatch order, until their settlement is written; the
    /// heartbeat covers their tasks.
    pub(crate) calls: BTreeMap<u64, Arc<Call>>,
    /// The charges of the calls whose handler has not ended.
    pub(crate) running: HashMap<u64, Charge>,
    /// Claimed calls waiting for a slot, in claim order, with their charges.
    pub(crate) held: VecDeque<(Arc<Call>, Charge)>,
    /// Calls abandoned (time limit, shutdown) whose handler has not answered yet: its
    /// contexts must still tell it that the lease is lost.
    pub(crate) abandoned: HashMap<u64, Arc<Call>>,
    pub(crate) next_call: u64,
    pub(crate) usage: Usage,
    /// Moving average of how long handlers took per task of their call,
    /// `None` before the first.
    pub(crate) task_time: Option<Duration>,
}

impl Ledger {
    /// A new call, built by `make` with the next id, known to the heartbeat.
    fn add(&mut self, make: impl FnOnce(u64) -> Call) -> Arc<Call> {
        let id = self.next_call;
        self.next_call += 1;
        let call = Arc::new(make(id));
        self.calls.insert(id, call.clone());
        call
    }

    /// A call starts: it takes a slot and its bytes, name and resource.
    pub(crate) fn charge(&mut self, id: u64, mut charge: Charge) {
        charge.started = Some(Instant::now());
        self.in_flight += 1;
        self.bytes += charge.bytes;
        if let Some(name) = &charge.name {
            *self.usage.by_name.entry(name.clone()).or_default() += 1;
        }
        if let Some(resource) = &charge.resource {
            *self.usage.by_resource.entry(resource.clone()).or_default() += 1;
        }
        self.running.insert(id, charge);
    }

    /// A handler took `took` for a call of `tasks` tasks.
    fn record_call_time(&mut self, took: Duration, tasks: usize) {
        let per_task = took / u32::try_from(tasks.max(1)).unwrap_or(u32::MAX);
        self.task_time = Some(match self.task_time {
            None => per_task,
            Some(average) => (average * 7 + per_task) / 8,
        });
    }

    fn calls_are_short(&self) -> bool {
        self.task_time.is_some_and(|t| t < SHORT_TASK)
    }
}

/// What a running call holds.
pub(crate) struct Charge {
    pub(crate) bytes: u64,
    pub(crate) name: Option<String>,
    pub(crate) resource: Option<String>,
    /// The time limit's timer, stopped when the handler ends first.
    pub(crate) timer: Option<AbortHandle>,
    /// When the handler started (set when the call is charged).
    pub(crate) started: Option<Instant>,
}

impl RunState {
    pub(crate) fn new(invoker: Arc<dyn Invoker>, slots: i64) -> RunState {
        let told = invoker.clone();
        RunState {
            aborted: Arc::new(move |context: &TaskContext| told.aborted(context)),
            invoker,
            ledger: Mutex::new(Ledger::default()),
            completions: Mutex::new(Vec::new()),
            completions_writing: AtomicBool::new(false),
            changed: Notify::new(),
            runtime: tokio::runtime::Handle::current(),
            slots,
        }
    }

    pub(crate) fn ledger(&self) -> std::sync::MutexGuard<'_, Ledger> {
        self.ledger.lock().expect("ledger lock")
    }

    /// Calls running, their bytes, calls held.
    pub(crate) fn load(&self) -> (i64, u64, usize) {
        let ledger = self.ledger();
        (ledger.in_flight, ledger.bytes, ledger.held.len())
    }

    pub(crate) fn usage(&self) -> Usage {
        self.ledger().usage.clone()
    }

    /// Whether recent handler calls were short enough to claim ahead of them.
    pub(crate) fn calls_are_short(&self) -> bool {
        self.ledger().calls_are_short()
    }

    /// No call in flight and nothing left to write.
    pub(crate) fn finished(&self) -> bool {
        self.ledger().calls.is_empty() && self.completions.lock().expect("completions").is_empty()
    }

    /// Every context of a call in flight that may still need its lease.
    pub(crate) fn live_contexts(&self) -> Vec<Arc<TaskContext>> {
        self.ledger()
            .calls
            .values()
            .flat_map(|call| call.contexts.iter())
            .filter(|c| !c.settled() && !c.lease_lost())
            .cloned()
            .collect()
    }

    pub(crate) fn oldest_task_id(&self) -> Option<String> {
        let ledger = self.ledger();
        let (_, call) = ledger.calls.first_key_value()?;
        Some(call.first_task_id().to_string())
    }

    /// Charges a new call, built by `make` with its id.
    pub(crate) fn admit(&self, charge: Charge, make: impl FnOnce(u64) -> Call) -> Arc<Call> {
        let mut ledger = self.ledger();
        let call = ledger.add(make);
        ledger.charge(call.id, charge);
        call
    }

    /// Keeps a new call until a slot is free (`admit_held`); its tasks are
    /// heartbeated meanwhile.
    pub(crate) fn hold(&self, charge: Charge, make: impl FnOnce(u64) -> Call) {
        let mut ledger = self.ledger();
        let call = ledger.add(make);
        ledger.held.push_back((call, charge));
    }

    /// Charges held calls, oldest first, while slots are free (`all`: every
    /// one, as a shutdown ends them unstarted).
    pub(crate) fn admit_held(&self, all: bool) -> Vec<Arc<Call>> {
        let mut ledger = self.ledger();
        let mut started = Vec::new();
        while all || ledger.in_flight < self.slots {
            let Some((call, charge)) = ledger.held.pop_front() else {
                break;
            };
            ledger.charge(call.id, charge);
            started.push(call);
        }
        started
    }

    /// The ids of the calls running now.
    pub(crate) fn running_ids(&self) -> Vec<u64> {
        self.ledger().running.keys().copied().collect()
    }

    pub(crate) fn set_timer(&self, call_id: u64, timer: AbortHandle) {
        match self.ledger().running.get_mut(&call_id) {
            Some(charge) => charge.timer = Some(timer),
            None => timer.abort(),
        }
    }

    /// Ends a running call: refunds its charges and stops its timer. The
    /// call and how long its handler ran; `None` when it had already ended.
    pub(crate) fn release(
        &self,
        call_id: u64,
        ending: &Ending,
    ) -> Option<(Arc<Call>, Option<Duration>)> {
        let mut ledger = self.ledger();
        let Some(charge) = ledger.running.remove(&call_id) else {
            // The late answer of an abandoned handler.
            ledger.abandoned.remove(&call_id);
            return None;
        };
        ledger.in_flight -= 1;
        ledger.bytes -= charge.bytes;
        if let Some(name) = &charge.name {
            *ledger.usage.by_name.entry(name.clone()).or_default() -= 1;
        }
        if let Some(resource) = &charge.resource {
            *ledger
                .usage
                .by_resource
                .entry(resource.clone())
                .or_default() -= 1;
        }
        if let Some(timer) = charge.timer {
            timer.abort();
        }
        let took = charge.started.map(|started| started.elapsed());
        let call = ledger.calls.get(&call_id).cloned();
        if let (Some(took), Some(call)) = (took, &call) {
            ledger.record_call_time(took, call.contexts.len());
        }
        if let (Ending::TimedOut(_) | Ending::Shutdown, Some(call)) = (ending, &call) {
            ledger.abandoned.insert(call_id, call.clone());
        }
        call.map(|call| (call, took))
    }

    pub(crate) fn forget(&self, call: &Call) {
        self.ledger().calls.remove(&call.id);
        self.changed.notify_one();
    }

    pub(crate) fn write_done(&self, call: &Call) {
        if call.write_done() {
            self.forget(call);
        }
    }

    pub(crate) fn take_completions(&self) -> Vec<PendingCompletion> {
        std::mem::take(&mut *self.completions.lock().expect("completions"))
    }

    /// Hands the written completions' answers to their contexts: completed,
    /// or the lease was lost; a failed write is reported per task.
    pub(crate) fn deliver(
        &self,
        pending: Vec<PendingCompletion>,
        written: std::result::Result<Vec<String>, &Error>,
        reporter: &Reporter,
    ) {
        let completed: HashSet<String> = match &written {
            Ok(ids) => ids.iter().cloned().collect(),
            Err(_) => HashSet::new(),
        };
        // A completed child may have a parent waiting on it (docs/api.md,
        // "Durable steps"): woken after this commit, off the poll loop.
        let store = pending.first().map(|c| c.context.store().clone());
        let mut children = Vec::new();
        for completion in pending {
            let context = &completion.context;
            match &written {
                Ok(_) if completed.contains(context.task_id()) => {
                    context.mark_settled();
                    if context.task().parent_id.is_some() {
                        children.push(context.task_id().to_string());
                    }
                }
                Ok(_) => context.mark_lease_lost(),
                Err(err) => reporter.execute((*err).clone(), context.task_id()),
            }
            context.end_settling();
            self.write_done(&completion.call);
        }
        if let (Some(store), false) = (store, children.is_empty()) {
            self.runtime
                .spawn(async move { store.wake_parents_of(children).await });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_are_short_by_their_time_per_task() {
        let mut ledger = Ledger::default();
        assert!(!ledger.calls_are_short(), "nothing measured yet");
        // A batch call of 256 tasks in 16 ms: 62.5 µs a task.
        ledger.record_call_time(Duration::from_millis(16), 256);
        assert!(ledger.calls_are_short());
    }

    #[test]
    fn a_single_task_call_over_the_threshold_is_long() {
        let mut ledger = Ledger::default();
        ledger.record_call_time(Duration::from_millis(16), 1);
        assert!(!ledger.calls_are_short());
        // The average moves by an eighth a call: short calls bring it back.
        for _ in 0..16 {
            ledger.record_call_time(Duration::from_millis(1), 1);
        }
        assert!(ledger.calls_are_short());
    }
}
