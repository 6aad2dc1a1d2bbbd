//! The worker runtime (API.md §10–§13): the claim loop, the heartbeat, the
//! `maxRunMs` ceiling, retry backoff and every settlement write run here, on
//! the async runtime, never waiting on the thread that runs handlers. Handlers
//! are reached through an [`Invoker`] the bindings provide.

mod call;
mod context;
mod heartbeat;
mod plan;
mod registry;

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use tokio::sync::{watch, Notify};
use tokio::task::AbortHandle;

pub use self::call::{Call, CallOutcome, Invoker, TaskResult};
pub use self::context::TaskContext;
pub use self::registry::Registration;

use self::call::{Ending, MaxRun, Settlement};
use self::plan::{Limits, PollPlan, Usage};
use self::registry::{Registry, Schedule};
use crate::backoff::Backoff;
use crate::error::{Error, Result};
use crate::gate::BackpressureOptions;
use crate::ids::new_worker_id;
use crate::store::{js_number, ClaimRequest, Store, DEFAULT_LEASE_MS};
use crate::task::Task;

const DEFAULT_POLL_INTERVAL_MS: f64 = 500.0;
/// Handlers whose recent calls average less than this may have a round of
/// calls claimed ahead of them (see `poll_until_stopped`).
const SHORT_CALL: Duration = Duration::from_millis(5);
/// Pause after a failed claim session before the next poll.
const CLAIM_ERROR_PAUSE: Duration = Duration::from_millis(250);

/// Which part of the loop survived an error (`ErrorPhase`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Claim,
    Execute,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Claim => "claim",
            Phase::Execute => "execute",
        }
    }
}

/// The second argument of `onError`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ErrorInfo {
    pub phase: Phase,
    /// Set for the execute phase.
    pub task_id: Option<String>,
}

pub type ErrorHook = Arc<dyn Fn(Error, ErrorInfo) + Send + Sync>;

/// `WorkerOptions` (API.md §10.2) as JS numbers; `None` = absent.
#[derive(Clone, Default)]
pub struct WorkerOptions {
    pub concurrency: Option<f64>,
    pub lease_ms: Option<f64>,
    pub heartbeat_interval_ms: Option<f64>,
    pub poll_interval_ms: Option<f64>,
    pub claim_batch: Option<f64>,
    pub retry_backoff_ms: Option<f64>,
    pub retry_backoff_max_ms: Option<f64>,
    pub max_run_ms: Option<f64>,
    pub max_in_flight_bytes: Option<f64>,
    /// In the order the caller listed them (validation reports the first bad one).
    pub resources: Vec<(String, f64)>,
    pub on_error: Option<ErrorHook>,
    /// `maxQueueDepth` and friends: installed on the store at construction.
    pub backpressure: Option<BackpressureOptions>,
}

/// Options resolved to the units the loop uses.
pub(crate) struct Settings {
    concurrency: Option<f64>,
    lease_ms: i64,
    heartbeat_interval_ms: i64,
    heartbeat_every: Duration,
    poll_every: Duration,
    claim_batch: Option<f64>,
    backoff: Backoff,
    max_run: Option<MaxRun>,
    max_in_flight_bytes: Option<f64>,
    resources: Arc<HashMap<String, i64>>,
}

/// Milliseconds as a duration; NaN and negatives are 0 (as a JS timer treats them).
fn millis(ms: f64) -> Duration {
    if ms.is_nan() {
        return Duration::ZERO;
    }
    Duration::from_secs_f64((ms / 1000.0).clamp(0.0, 1e9))
}

impl Settings {
    fn resolve(options: &WorkerOptions) -> Result<Settings> {
        if let Some(v) = options.max_run_ms.filter(|v| *v <= 0.0) {
            return Err(Error::Invalid(format!(
                "maxRunMs must be > 0, got {}",
                js_number(v)
            )));
        }
        if let Some(v) = options.max_in_flight_bytes.filter(|v| *v <= 0.0) {
            return Err(Error::Invalid(format!(
                "maxInFlightBytes must be > 0, got {}",
                js_number(v)
            )));
        }
        let mut resources = HashMap::new();
        for (name, capacity) in &options.resources {
            if !(capacity.fract() == 0.0 && *capacity >= 1.0) {
                let quoted = serde_json::to_string(name).expect("a string encodes");
                return Err(Error::Invalid(format!(
                    "resources[{quoted}] must be an integer >= 1, got {}",
                    js_number(*capacity)
                )));
            }
            resources.insert(name.clone(), capacity.min(i64::MAX as f64) as i64);
        }
        let lease_ms = options.lease_ms.unwrap_or(DEFAULT_LEASE_MS as f64) as i64;
        let heartbeat_ms = options
            .heartbeat_interval_ms
            .unwrap_or_else(|| (lease_ms / 3).max(50) as f64);
        let backoff_defaults = Backoff::default();
        Ok(Settings {
            concurrency: options.concurrency,
            lease_ms,
            heartbeat_interval_ms: heartbeat_ms as i64,
            // A zero period would spin; a JS timer would not fire sooner than 1 ms either.
            heartbeat_every: millis(heartbeat_ms).max(Duration::from_millis(1)),
            poll_every: millis(options.poll_interval_ms.unwrap_or(DEFAULT_POLL_INTERVAL_MS)),
            claim_batch: options.claim_batch,
            backoff: Backoff {
                base_ms: options.retry_backoff_ms.unwrap_or(backoff_defaults.base_ms),
                max_ms: options
                    .retry_backoff_max_ms
                    .unwrap_or(backoff_defaults.max_ms),
            },
            max_run: options.max_run_ms.map(|ms| MaxRun {
                limit: millis(ms),
                shown: js_number(ms),
            }),
            max_in_flight_bytes: options.max_in_flight_bytes,
            resources: Arc::new(resources),
        })
    }
}

/// Delivers survived errors to `onError`; a panicking hook is contained.
#[derive(Clone)]
pub(crate) struct Reporter(Option<ErrorHook>);

impl Reporter {
    fn report(&self, err: Error, phase: Phase, task_id: Option<&str>) {
        if let Some(hook) = &self.0 {
            let info = ErrorInfo {
                phase,
                task_id: task_id.map(str::to_string),
            };
            let _ = catch_unwind(AssertUnwindSafe(|| hook(err, info)));
        }
    }

    fn claim(&self, err: Error) {
        self.report(err, Phase::Claim, None);
    }

    pub(crate) fn execute(&self, err: Error, task_id: &str) {
        self.report(err, Phase::Execute, Some(task_id));
    }
}

pub(crate) struct Shared {
    id: String,
    store: Arc<Store>,
    queues: Vec<String>,
    settings: Settings,
    reporter: Reporter,
    registry: Mutex<Registry>,
    stopped: watch::Sender<bool>,
    /// The run in progress, for `settle` and `context`.
    run: Mutex<Weak<RunState>>,
}

/// A worker: registrations plus the loop that claims and runs their tasks.
/// Cheap to clone; clones share everything.
#[derive(Clone)]
pub struct Worker {
    shared: Arc<Shared>,
}

impl Worker {
    /// Validates `options` (API.md §10.1 order) and installs backpressure.
    pub fn new(store: Arc<Store>, queues: Vec<String>, options: WorkerOptions) -> Result<Worker> {
        let settings = Settings::resolve(&options)?;
        if let Some(backpressure) = options.backpressure {
            store.use_backpressure(backpressure)?;
        }
        Ok(Worker {
            shared: Arc::new(Shared {
                id: new_worker_id(),
                store,
                queues,
                settings,
                reporter: Reporter(options.on_error),
                registry: Mutex::new(Registry::default()),
                stopped: watch::channel(false).0,
                run: Mutex::new(Weak::new()),
            }),
        })
    }

    pub fn id(&self) -> &str {
        &self.shared.id
    }

    pub fn store(&self) -> &Arc<Store> {
        &self.shared.store
    }

    /// `worker.task(name, options, fn)`: adds or replaces (in place) the
    /// registration of `name`. Takes effect on the next poll.
    pub fn register(&self, name: &str, options: Registration) -> Result<()> {
        let handler = registry::validate(name, options, &self.shared.settings.resources)?;
        self.shared.registry().register(handler);
        Ok(())
    }

    /// Stops the loop for good and cuts any sleep short; running handlers
    /// are not interrupted.
    pub fn stop(&self) {
        self.shared.stopped.send_replace(true);
    }

    /// The handler of call `call_id` has ended. Frees its slot at once; the
    /// tasks it left unsettled are written by the next poll (completions) or
    /// right away (failures). A call already ended (`maxRunMs`) ignores it.
    pub fn settle(&self, call_id: u64, outcome: CallOutcome) {
        if let Some(run) = self.shared.current_run() {
            self.shared
                .end_call(&run, call_id, Ending::Handler(outcome));
        }
    }

    /// Calls claimed ahead (see `poll_until_stopped`) that free slots can
    /// take now, already charged: the caller starts them. The JS side asks
    /// right after settling, so the next handlers start without a round trip.
    pub fn start_ready(&self) -> Vec<Arc<Call>> {
        match self.shared.current_run() {
            Some(run) => self.shared.admit_held(&run),
            None => Vec::new(),
        }
    }

    /// The context of task `index` of call `call_id`, while the call is in
    /// flight or its settlement is being written.
    pub fn context(&self, call_id: u64, index: usize) -> Option<Arc<TaskContext>> {
        let run = self.shared.current_run()?;
        let ledger = run.ledger();
        let call = ledger
            .calls
            .get(&call_id)
            .or_else(|| ledger.abandoned.get(&call_id))?;
        call.contexts.get(index).cloned()
    }

    /// Connects, then polls until `stop()`, then waits for every call in
    /// flight and writes its settlement. `concurrency` overrides the option.
    pub async fn run(&self, invoker: Arc<dyn Invoker>, concurrency: Option<f64>) -> Result<()> {
        let shared = &self.shared;
        let slots = concurrency
            .or(shared.settings.concurrency)
            .map_or(1, |c| c.max(1.0).min(i64::MAX as f64) as i64);
        shared.store.connect().await?;
        let run = Arc::new(RunState::new(invoker, slots));
        *shared.run.lock().expect("run slot") = Arc::downgrade(&run);
        let (beats_done, beats_until) = watch::channel(false);
        let beats = tokio::spawn(heartbeat::beat_until(
            shared.clone(),
            run.clone(),
            beats_until,
        ));
        shared.poll_until_stopped(&run, slots).await;
        loop {
            let changed = run.changed.notified();
            shared.start_held(&run);
            shared.flush_completions(&run).await;
            if run.finished() {
                break;
            }
            changed.await;
        }
        beats_done.send_replace(true);
        let _ = beats.await;
        Ok(())
    }
}

impl Shared {
    fn registry(&self) -> std::sync::MutexGuard<'_, Registry> {
        self.registry.lock().expect("registry lock")
    }

    fn current_run(&self) -> Option<Arc<RunState>> {
        self.run.lock().expect("run slot").upgrade()
    }

    /// The poll loop of API.md §11.1. Each poll writes the completions that
    /// queued since the last one and claims for the free slots, in one
    /// transaction; right after a poll that claimed, the next skips the probe.
    ///
    /// While the queue has a backlog (the last poll got every call it asked
    /// for), handlers are short (recent calls took under `SHORT_CALL` on
    /// average) and the registrations set no per-name, resource or byte
    /// limits, a poll also claims one round ahead: up to `slots` calls held
    /// until slots free up. The handler thread then starts them as soon as
    /// earlier handlers return (`start_ready`), while the next poll writes
    /// those completions and claims the following round: handlers and
    /// database work overlap instead of taking turns. A held task waits a few
    /// milliseconds at most; it is leased and heartbeated like a running one,
    /// and runs even after `stop()`.
    async fn poll_until_stopped(self: &Arc<Self>, run: &Arc<RunState>, slots: i64) {
        let mut stop = self.stopped.subscribe();
        let mut rotation = 0;
        let mut found_work = false;
        let mut backlog = false;
        while !*stop.borrow() {
            let changed = run.changed.notified();
            self.start_held(run);
            let (in_flight, bytes, held) = run.load();
            let free = (slots - in_flight).max(0);
            let over_budget = self
                .settings
                .max_in_flight_bytes
                .is_some_and(|budget| bytes as f64 >= budget);
            let schedule = self.registry().schedule();
            let ahead =
                if backlog && held == 0 && run.calls_are_short() && self.may_claim_ahead(&schedule)
                {
                    slots
                } else {
                    0
                };
            if in_flight > 0 && (free <= 0 || over_budget) && ahead == 0 {
                if !self.flush_completions(run).await {
                    tokio::select! {
                        _ = changed => {}
                        _ = until_true(&mut stop) => {}
                    }
                }
                continue;
            }
            if schedule.sources.is_empty() {
                self.flush_completions(run).await;
                self.idle(changed, &mut stop).await;
                continue;
            }
            let start = rotation % schedule.sources.len();
            rotation = (start + 1) % schedule.sources.len();
            let plan = PollPlan::new(
                schedule.clone(),
                start,
                free + ahead,
                run.usage(),
                Limits {
                    claim_batch: self.settings.claim_batch,
                    resources: self.settings.resources.clone(),
                },
            );
            let request = ClaimRequest {
                queues: self.queues.clone(),
                worker_id: self.id.clone(),
                lease_ms: self.settings.lease_ms,
                names: Some(schedule.names.clone()),
            };
            let leftovers = run.take_completions();
            let items = leftovers.iter().map(Leftover::item).collect();
            match self.store.poll(request, items, !found_work, plan).await {
                Err(err) => {
                    run.deliver(leftovers, Err(&err), &self.reporter);
                    self.reporter.claim(err);
                    (found_work, backlog) = (false, false);
                    sleep_unless_stopped(&mut stop, CLAIM_ERROR_PAUSE).await;
                }
                Ok((completed, plan)) => {
                    run.deliver(leftovers, Ok(completed), &self.reporter);
                    match plan {
                        Some(plan) if !plan.calls.is_empty() => {
                            (found_work, backlog) = (true, plan.filled());
                            self.dispatch(run, &schedule, plan.calls);
                        }
                        _ => {
                            (found_work, backlog) = (false, false);
                            self.idle(changed, &mut stop).await;
                        }
                    }
                }
            }
        }
    }

    /// Claiming ahead needs calls that any free slot may take.
    fn may_claim_ahead(&self, schedule: &Schedule) -> bool {
        self.settings.max_in_flight_bytes.is_none()
            && schedule
                .sources
                .iter()
                .all(|s| s.concurrency.is_none() && s.resource.is_none())
    }

    /// The idle sleep: the poll interval, cut short by a claim wake, a call
    /// ending (its completion is then written at once) or `stop()`.
    async fn idle(
        &self,
        changed: tokio::sync::futures::Notified<'_>,
        stop: &mut watch::Receiver<bool>,
    ) {
        tokio::select! {
            _ = self.store.claim_wake(&self.queues, self.settings.poll_every) => {}
            _ = sleep_unless_stopped(stop, self.settings.poll_every) => {}
            _ = changed => {}
        }
    }

    /// Write the queued completions on their own (no claim to pair them
    /// with); false when there were none.
    async fn flush_completions(&self, run: &RunState) -> bool {
        let leftovers = run.take_completions();
        if leftovers.is_empty() {
            return false;
        }
        let items = leftovers.iter().map(Leftover::item).collect();
        match self.store.complete_batch(self.id.clone(), items).await {
            Ok(completed) => run.deliver(leftovers, Ok(completed), &self.reporter),
            Err(err) => run.deliver(leftovers, Err(&err), &self.reporter),
        }
        true
    }

    fn context(&self, task: Task) -> TaskContext {
        TaskContext::new(
            self.store.clone(),
            task,
            self.id.clone(),
            self.settings.lease_ms,
            self.settings.backoff,
        )
    }

    /// Takes the claimed calls (API.md §11.5): a call without a handler
    /// fails at once; the others wait in order for a slot, where each is
    /// charged its slot, bytes, name and resource until its handler ends.
    fn dispatch(self: &Arc<Self>, run: &Arc<RunState>, schedule: &Schedule, calls: Vec<Vec<Task>>) {
        let listener = Arc::downgrade(&run.invoker);
        for tasks in calls {
            let bytes = if self.settings.max_in_flight_bytes.is_some() {
                tasks.iter().map(|t| payload_bytes(&t.payload)).sum()
            } else {
                0
            };
            let name = tasks[0].name.clone();
            let handler = schedule.handlers.get(&name);
            let charge = Charge {
                bytes,
                name: handler.and_then(|h| h.concurrency).map(|_| name.clone()),
                resource: handler.and_then(|h| h.resource.clone()),
                timer: None,
                started: None,
            };
            let batch = handler.is_some_and(|h| h.batch.is_some());
            let make = |id| {
                let contexts = tasks
                    .into_iter()
                    .enumerate()
                    .map(|(index, task)| {
                        Arc::new(self.context(task).in_call(listener.clone(), id, index))
                    })
                    .collect();
                Call::new(id, name, batch, contexts)
            };
            if handler.is_none() {
                let call = run.admit(charge, make);
                self.end_call(run, call.id, Ending::NoHandler);
            } else {
                run.hold(charge, make);
            }
        }
        self.start_held(run);
    }

    /// Starts the held calls that fit in the free slots.
    fn start_held(self: &Arc<Self>, run: &Arc<RunState>) {
        let calls = self.admit_held(run);
        if calls.is_empty() {
            return;
        }
        if let Err(err) = run.invoker.start(&calls) {
            for call in calls {
                let broken = CallOutcome::Broken(err.clone());
                self.end_call(run, call.id, Ending::Handler(broken));
            }
        }
    }

    /// Charges the held calls that fit in the free slots and arms their
    /// `maxRunMs` timers; the caller starts them.
    fn admit_held(self: &Arc<Self>, run: &Arc<RunState>) -> Vec<Arc<Call>> {
        let calls = run.admit_held();
        if let Some(max_run) = &self.settings.max_run {
            for call in &calls {
                let (shared, weak_run, max_run, id) =
                    (self.clone(), Arc::downgrade(run), max_run.clone(), call.id);
                let timer = run.runtime.spawn(async move {
                    tokio::time::sleep(max_run.limit).await;
                    if let Some(run) = weak_run.upgrade() {
                        shared.end_call(&run, id, Ending::TimedOut(max_run));
                    }
                });
                run.set_timer(call.id, timer.abort_handle());
            }
        }
        calls
    }

    /// A call's handler has ended (or was abandoned): refund its charges,
    /// then queue its completions for the next poll and write its failures.
    fn end_call(&self, run: &Arc<RunState>, call_id: u64, ending: Ending) {
        let Some(call) = run.release(call_id, &ending) else {
            return;
        };
        let writes = call::settlements(&call, ending, &self.reporter);
        call.expect_writes(writes.len());
        if writes.is_empty() {
            run.forget(&call);
        }
        for (context, settlement) in writes {
            match settlement {
                Settlement::Complete(result) => {
                    context.begin_settling();
                    run.completions.lock().expect("completions").push(Leftover {
                        call: call.clone(),
                        context,
                        result,
                    });
                }
                Settlement::Fail {
                    envelope,
                    retryable,
                } => {
                    let (run, call, reporter) = (run.clone(), call.clone(), self.reporter.clone());
                    run.runtime.clone().spawn(async move {
                        if let Err(err) = context.fail_leftover(envelope, retryable).await {
                            reporter.execute(err, context.task_id());
                        }
                        run.write_done(&call);
                    });
                }
            }
        }
        run.changed.notify_one();
    }
}

/// A payload's charge against `maxInFlightBytes`: the UTF-8 length of its
/// compact JSON (what `JSON.stringify(payload)` gives), whatever spacing or
/// escaping the writer stored it with (Python escapes non-ASCII, jsonb spaces).
fn payload_bytes(stored: &str) -> u64 {
    serde_json::from_str::<serde_json::Value>(stored)
        .map(|value| value.to_string().len() as u64)
        .unwrap_or(stored.len() as u64)
}

async fn sleep_unless_stopped(stop: &mut watch::Receiver<bool>, duration: Duration) {
    tokio::select! {
        _ = tokio::time::sleep(duration) => {}
        _ = until_true(stop) => {}
    }
}

/// Resolves once the flag is (or becomes) true, or its sender is gone.
pub(crate) async fn until_true(flag: &mut watch::Receiver<bool>) {
    // The borrow the wait returns is dropped here: it must not live across an await.
    let _ = flag.wait_for(|set| *set).await.map(|_| ());
}

/// A returned task waiting for its `complete` (written by the next poll).
struct Leftover {
    call: Arc<Call>,
    context: Arc<TaskContext>,
    result: Option<String>,
}

impl Leftover {
    fn item(&self) -> (String, Option<String>) {
        (self.context.task_id().to_string(), self.result.clone())
    }
}

/// The state of one `run`: the invoker, what is in flight, what awaits its
/// settlement write.
pub(crate) struct RunState {
    invoker: Arc<dyn Invoker>,
    ledger: Mutex<Ledger>,
    completions: Mutex<Vec<Leftover>>,
    /// Wakes the poll loop: a call ended or a settlement was written.
    changed: Notify,
    runtime: tokio::runtime::Handle,
    /// Handlers that may run at once.
    slots: i64,
}

#[derive(Default)]
struct Ledger {
    in_flight: i64,
    bytes: u64,
    /// Calls by dispatch order, until their settlement is written; the
    /// heartbeat covers their tasks.
    calls: BTreeMap<u64, Arc<Call>>,
    /// The charges of the calls whose handler has not ended.
    running: HashMap<u64, Charge>,
    /// Claimed calls waiting for a slot, in claim order, with their charges.
    held: VecDeque<(Arc<Call>, Charge)>,
    /// Calls abandoned at `maxRunMs` whose handler has not answered yet: its
    /// contexts must still tell it that the lease is lost.
    abandoned: HashMap<u64, Arc<Call>>,
    next_call: u64,
    usage: Usage,
    /// Moving average of how long handlers took, `None` before the first.
    call_time: Option<Duration>,
}

impl Ledger {
    /// A call starts: it takes a slot and its bytes, name and resource.
    fn charge(&mut self, id: u64, mut charge: Charge) {
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
}

/// What a running call holds.
struct Charge {
    bytes: u64,
    name: Option<String>,
    resource: Option<String>,
    /// The `maxRunMs` timer, stopped when the handler ends first.
    timer: Option<AbortHandle>,
    /// When the handler started (set when the call is charged).
    started: Option<Instant>,
}

impl RunState {
    fn new(invoker: Arc<dyn Invoker>, slots: i64) -> RunState {
        RunState {
            invoker,
            ledger: Mutex::new(Ledger::default()),
            completions: Mutex::new(Vec::new()),
            changed: Notify::new(),
            runtime: tokio::runtime::Handle::current(),
            slots,
        }
    }

    fn ledger(&self) -> std::sync::MutexGuard<'_, Ledger> {
        self.ledger.lock().expect("ledger lock")
    }

    /// Calls running, their bytes, calls held.
    fn load(&self) -> (i64, u64, usize) {
        let ledger = self.ledger();
        (ledger.in_flight, ledger.bytes, ledger.held.len())
    }

    fn usage(&self) -> Usage {
        self.ledger().usage.clone()
    }

    /// Whether recent handler calls were short enough to claim ahead of them.
    fn calls_are_short(&self) -> bool {
        self.ledger().call_time.is_some_and(|t| t < SHORT_CALL)
    }

    /// No call in flight and nothing left to write.
    fn finished(&self) -> bool {
        self.ledger().calls.is_empty() && self.completions.lock().expect("completions").is_empty()
    }

    /// Every context of a call in flight that may still need its lease.
    fn live_contexts(&self) -> Vec<Arc<TaskContext>> {
        self.ledger()
            .calls
            .values()
            .flat_map(|call| call.contexts.iter())
            .filter(|c| !c.settled() && !c.lease_lost())
            .cloned()
            .collect()
    }

    fn oldest_task_id(&self) -> Option<String> {
        let ledger = self.ledger();
        let (_, call) = ledger.calls.first_key_value()?;
        Some(call.first_task_id().to_string())
    }

    /// Charges a new call, built by `make` with its id.
    fn admit(&self, charge: Charge, make: impl FnOnce(u64) -> Call) -> Arc<Call> {
        let mut ledger = self.ledger();
        let id = ledger.next_call;
        ledger.next_call += 1;
        let call = Arc::new(make(id));
        ledger.calls.insert(id, call.clone());
        ledger.charge(id, charge);
        call
    }

    /// Keeps a new call until a slot is free (`admit_held`); its tasks are
    /// heartbeated meanwhile.
    fn hold(&self, charge: Charge, make: impl FnOnce(u64) -> Call) {
        let mut ledger = self.ledger();
        let id = ledger.next_call;
        ledger.next_call += 1;
        let call = Arc::new(make(id));
        ledger.calls.insert(id, call.clone());
        ledger.held.push_back((call, charge));
    }

    /// Charges held calls, oldest first, while slots are free.
    fn admit_held(&self) -> Vec<Arc<Call>> {
        let mut ledger = self.ledger();
        let mut started = Vec::new();
        while ledger.in_flight < self.slots {
            let Some((call, charge)) = ledger.held.pop_front() else {
                break;
            };
            ledger.charge(call.id, charge);
            started.push(call);
        }
        started
    }

    fn set_timer(&self, call_id: u64, timer: AbortHandle) {
        match self.ledger().running.get_mut(&call_id) {
            Some(charge) => charge.timer = Some(timer),
            None => timer.abort(),
        }
    }

    /// Ends a running call: refunds its charges and stops its timer. `None`
    /// when it had already ended.
    fn release(&self, call_id: u64, ending: &Ending) -> Option<Arc<Call>> {
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
        if let Some(started) = charge.started {
            let took = started.elapsed();
            ledger.call_time = Some(match ledger.call_time {
                None => took,
                Some(average) => (average * 7 + took) / 8,
            });
        }
        let call = ledger.calls.get(&call_id).cloned();
        if let (Ending::TimedOut(_), Some(call)) = (ending, &call) {
            ledger.abandoned.insert(call_id, call.clone());
        }
        call
    }

    fn forget(&self, call: &Call) {
        self.ledger().calls.remove(&call.id);
        self.changed.notify_one();
    }

    fn write_done(&self, call: &Call) {
        if call.write_done() {
            self.forget(call);
        }
    }

    fn take_completions(&self) -> Vec<Leftover> {
        std::mem::take(&mut *self.completions.lock().expect("completions"))
    }

    /// Hands the written completions' answers to their contexts: completed,
    /// or the lease was lost; a failed write is reported per task.
    fn deliver(
        &self,
        leftovers: Vec<Leftover>,
        written: std::result::Result<Vec<String>, &Error>,
        reporter: &Reporter,
    ) {
        let completed: HashSet<String> = match &written {
            Ok(ids) => ids.iter().cloned().collect(),
            Err(_) => HashSet::new(),
        };
        for leftover in leftovers {
            let context = &leftover.context;
            match &written {
                Ok(_) if completed.contains(context.task_id()) => context.mark_settled(),
                Ok(_) => context.mark_lease_lost(),
                Err(err) => reporter.execute((*err).clone(), context.task_id()),
            }
            context.end_settling();
            self.write_done(&leftover.call);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payload_bytes_follow_compact_json() {
        assert_eq!(
            payload_bytes(r#"{"a": "\u00e9"}"#),
            r#"{"a":"é"}"#.len() as u64
        );
        assert_eq!(payload_bytes("[1, 2]"), 5);
        assert_eq!(millis(f64::NAN), Duration::ZERO);
    }
    use crate::store::SubmitInput;

    fn invalid(options: WorkerOptions) -> String {
        Settings::resolve(&options)
            .err()
            .expect("rejected")
            .to_string()
    }

    #[test]
    fn options_are_validated_in_order_with_the_api_messages() {
        let resources = vec![("ok".to_string(), 2.0), ("gpu \"x\"".to_string(), 1.5)];
        assert_eq!(
            invalid(WorkerOptions {
                max_run_ms: Some(0.0),
                max_in_flight_bytes: Some(-1.0),
                ..Default::default()
            }),
            "maxRunMs must be > 0, got 0"
        );
        assert_eq!(
            invalid(WorkerOptions {
                max_in_flight_bytes: Some(-1.0),
                resources: resources.clone(),
                ..Default::default()
            }),
            "maxInFlightBytes must be > 0, got -1"
        );
        assert_eq!(
            invalid(WorkerOptions {
                resources,
                ..Default::default()
            }),
            r#"resources["gpu \"x\""] must be an integer >= 1, got 1.5"#
        );
    }

    #[test]
    fn defaults_follow_the_lease() {
        let defaults = Settings::resolve(&WorkerOptions::default()).unwrap();
        assert_eq!(defaults.lease_ms, 30_000);
        assert_eq!(defaults.heartbeat_interval_ms, 10_000);
        assert_eq!(defaults.poll_every, Duration::from_millis(500));
        assert_eq!(defaults.backoff, Backoff::default());
        let short = Settings::resolve(&WorkerOptions {
            lease_ms: Some(100.0),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(short.heartbeat_every, Duration::from_millis(50));
    }

    #[test]
    fn registrations_check_resources_against_the_options() {
        let store = Store::sqlite(":memory:", None);
        let worker = Worker::new(
            store,
            vec!["default".into()],
            WorkerOptions {
                resources: vec![("gpu".into(), 1.0)],
                ..Default::default()
            },
        )
        .unwrap();
        assert!(worker.id().starts_with("worker_"));
        let on_gpu = Registration {
            resource: Some("gpu".into()),
            ..Default::default()
        };
        assert!(worker.register("a", on_gpu).is_ok());
        let on_tpu = Registration {
            resource: Some("tpu".into()),
            ..Default::default()
        };
        assert_eq!(
            worker.register("b", on_tpu).unwrap_err().to_string(),
            "task \"b\" declares resource \"tpu\", which is not in WorkerOptions.resources; declared: gpu"
        );
    }

    struct NeverCalled;

    #[async_trait::async_trait]
    impl Invoker for NeverCalled {
        fn start(&self, _calls: &[Arc<Call>]) -> std::result::Result<(), Error> {
            unreachable!("a task without a registration reaches no handler")
        }
    }

    #[tokio::test]
    async fn a_claimed_task_without_a_registration_fails_for_good() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("q.db").to_string_lossy().into_owned();
        let store = Store::sqlite(&path, None);
        let worker =
            Worker::new(store.clone(), vec!["default".into()], Default::default()).unwrap();
        store
            .submit(SubmitInput {
                name: "ghost".into(),
                ..Default::default()
            })
            .await
            .unwrap();
        let request = ClaimRequest {
            queues: vec!["default".into()],
            worker_id: worker.id().into(),
            lease_ms: 30_000,
            names: None,
        };
        let claimed = store.claim(request, 1).await.unwrap();
        let id = claimed[0].id.clone();

        let run = Arc::new(RunState::new(Arc::new(NeverCalled), 1));
        let schedule = worker.shared.registry().schedule();
        worker.shared.dispatch(&run, &schedule, vec![claimed]);
        // The slot is free at once; the failure is written in the background.
        assert_eq!(run.load(), (0, 0, 0));
        while !run.finished() {
            tokio::time::timeout(Duration::from_secs(10), run.changed.notified())
                .await
                .expect("the failure is written");
        }
        let failed = store
            .get(crate::store::Target::Id(id))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(failed.status, crate::task::Status::Failed);
        assert_eq!(
            failed.error.as_deref(),
            Some(
                r#"{"type":"NoHandler","code":"no_handler","message":"no handler registered for ghost","retryable":false,"details":{}}"#
            )
        );
    }
}
