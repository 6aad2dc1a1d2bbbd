//! The worker runtime (API.md §10–§13): the claim loop, the heartbeat, the
//! `maxRunMs` ceiling, retry backoff and every settlement write run here, on
//! the async runtime, never waiting on the thread that runs handlers. Handlers
//! are reached through an [`Invoker`] the bindings provide.

mod call;
mod completions;
mod context;
mod heartbeat;
mod plan;
mod registry;

use std::collections::{BTreeMap, HashMap};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinSet;

pub use self::call::{Call, CallOutcome, Invoker, TaskResult};
pub use self::context::TaskContext;
pub use self::registry::Registration;

use self::call::MaxRun;
use self::completions::Completions;
use self::plan::{Limits, PollPlan, Usage};
use self::registry::{Registry, Schedule};
use crate::backoff::Backoff;
use crate::error::{Error, Result};
use crate::gate::BackpressureOptions;
use crate::ids::new_worker_id;
use crate::store::{js_number, ClaimRequest, Store, DEFAULT_LEASE_MS};
use crate::task::Task;

const DEFAULT_POLL_INTERVAL_MS: f64 = 500.0;
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

    /// Connects, then polls until `stop()`, then waits for every call in
    /// flight. `concurrency` overrides the option.
    pub async fn run(&self, invoker: Arc<dyn Invoker>, concurrency: Option<f64>) -> Result<()> {
        let shared = &self.shared;
        let slots = concurrency
            .or(shared.settings.concurrency)
            .map_or(1, |c| c.max(1.0).min(i64::MAX as f64) as i64);
        shared.store.connect().await?;
        let completions = Completions::start(shared.store.clone(), shared.id.clone());
        let run = Arc::new(RunState::new(invoker, completions));
        let (beats_done, beats_until) = watch::channel(false);
        let beats = tokio::spawn(heartbeat::beat_until(
            shared.clone(),
            run.clone(),
            beats_until,
        ));
        let mut calls = JoinSet::new();
        shared.poll_until_stopped(&run, slots, &mut calls).await;
        while calls.join_next().await.is_some() {}
        beats_done.send_replace(true);
        let _ = beats.await;
        Ok(())
    }
}

impl Shared {
    fn registry(&self) -> std::sync::MutexGuard<'_, Registry> {
        self.registry.lock().expect("registry lock")
    }

    /// The poll loop of API.md §11.1.
    async fn poll_until_stopped(&self, run: &Arc<RunState>, slots: i64, calls: &mut JoinSet<()>) {
        let mut stop = self.stopped.subscribe();
        let mut rotation = 0;
        while !*stop.borrow() {
            while calls.try_join_next().is_some() {}
            let (in_flight, bytes) = run.load();
            let free = slots - in_flight;
            let over_budget = self
                .settings
                .max_in_flight_bytes
                .is_some_and(|budget| bytes as f64 >= budget);
            if in_flight > 0 && (free <= 0 || over_budget) {
                tokio::select! {
                    _ = calls.join_next() => {}
                    _ = until_true(&mut stop) => {}
                }
                continue;
            }
            let schedule = self.registry().schedule();
            if schedule.sources.is_empty() {
                self.idle(&mut stop).await;
                continue;
            }
            let start = rotation % schedule.sources.len();
            rotation = (start + 1) % schedule.sources.len();
            let plan = PollPlan::new(
                schedule.clone(),
                start,
                free,
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
            match self.store.claim_session(request, plan).await {
                Err(err) => {
                    self.reporter.claim(err);
                    sleep_unless_stopped(&mut stop, CLAIM_ERROR_PAUSE).await;
                }
                Ok(Some(plan)) if !plan.calls.is_empty() => {
                    for tasks in plan.calls {
                        self.dispatch(run, &schedule, tasks, calls);
                    }
                }
                Ok(_) => self.idle(&mut stop).await,
            }
        }
    }

    /// The idle sleep: the poll interval, cut short by a claim wake or `stop()`.
    async fn idle(&self, stop: &mut watch::Receiver<bool>) {
        tokio::select! {
            _ = self.store.claim_wake(&self.queues, self.settings.poll_every) => {}
            _ = sleep_unless_stopped(stop, self.settings.poll_every) => {}
        }
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

    /// Starts one call (API.md §11.5), charging its slot, bytes, name and
    /// resource until it finishes.
    fn dispatch(
        &self,
        run: &Arc<RunState>,
        schedule: &Schedule,
        tasks: Vec<Task>,
        calls: &mut JoinSet<()>,
    ) {
        let bytes = if self.settings.max_in_flight_bytes.is_some() {
            tasks.iter().map(|t| payload_bytes(&t.payload)).sum()
        } else {
            0
        };
        let name = tasks[0].name.clone();
        let reporter = self.reporter.clone();
        let Some(handler) = schedule.handlers.get(&name) else {
            let admission = run.admit(None, bytes, None, None);
            let contexts: Vec<TaskContext> = tasks.into_iter().map(|t| self.context(t)).collect();
            calls.spawn(async move {
                for context in contexts {
                    call::fail_no_handler(context, &reporter).await;
                }
                drop(admission);
            });
            return;
        };
        let listener = Arc::downgrade(&run.invoker);
        let call = Arc::new(Call {
            name: name.clone(),
            batch: handler.batch.is_some(),
            contexts: tasks
                .into_iter()
                .map(|task| Arc::new(self.context(task).with_listener(listener.clone())))
                .collect(),
        });
        let admission = run.admit(
            Some(call.clone()),
            bytes,
            handler.concurrency.map(|_| name),
            handler.resource.clone(),
        );
        let invoker = run.invoker.clone();
        let completions = run.completions.clone();
        let max_run = self.settings.max_run.clone();
        calls.spawn(async move {
            call::execute(call, invoker, completions, max_run, reporter).await;
            drop(admission);
        });
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

/// The state of one `run`: the invoker and what is in flight.
pub(crate) struct RunState {
    invoker: Arc<dyn Invoker>,
    completions: Completions,
    ledger: Mutex<Ledger>,
}

#[derive(Default)]
struct Ledger {
    in_flight: i64,
    bytes: u64,
    /// Handler calls by dispatch order; the heartbeat covers their tasks.
    calls: BTreeMap<u64, Arc<Call>>,
    next_call: u64,
    usage: Usage,
}

impl RunState {
    fn new(invoker: Arc<dyn Invoker>, completions: Completions) -> RunState {
        RunState {
            invoker,
            completions,
            ledger: Mutex::new(Ledger::default()),
        }
    }

    fn ledger(&self) -> std::sync::MutexGuard<'_, Ledger> {
        self.ledger.lock().expect("ledger lock")
    }

    fn load(&self) -> (i64, u64) {
        let ledger = self.ledger();
        (ledger.in_flight, ledger.bytes)
    }

    fn usage(&self) -> Usage {
        self.ledger().usage.clone()
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

    /// Charges a call; the returned guard refunds everything when dropped.
    fn admit(
        self: &Arc<Self>,
        call: Option<Arc<Call>>,
        bytes: u64,
        name: Option<String>,
        resource: Option<String>,
    ) -> Admission {
        let mut ledger = self.ledger();
        ledger.in_flight += 1;
        ledger.bytes += bytes;
        let call_key = call.map(|call| {
            let key = ledger.next_call;
            ledger.next_call += 1;
            ledger.calls.insert(key, call);
            key
        });
        if let Some(name) = &name {
            *ledger.usage.by_name.entry(name.clone()).or_default() += 1;
        }
        if let Some(resource) = &resource {
            *ledger
                .usage
                .by_resource
                .entry(resource.clone())
                .or_default() += 1;
        }
        Admission {
            run: self.clone(),
            call_key,
            bytes,
            name,
            resource,
        }
    }
}

/// One dispatched call's charges.
struct Admission {
    run: Arc<RunState>,
    call_key: Option<u64>,
    bytes: u64,
    name: Option<String>,
    resource: Option<String>,
}

impl Drop for Admission {
    fn drop(&mut self) {
        let mut ledger = self.run.ledger();
        ledger.in_flight -= 1;
        ledger.bytes -= self.bytes;
        if let Some(key) = self.call_key {
            ledger.calls.remove(&key);
        }
        if let Some(name) = &self.name {
            *ledger.usage.by_name.entry(name.clone()).or_default() -= 1;
        }
        if let Some(resource) = &self.resource {
            *ledger
                .usage
                .by_resource
                .entry(resource.clone())
                .or_default() -= 1;
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
        async fn invoke(&self, _call: Arc<Call>) -> CallOutcome {
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

        let completions = Completions::start(store.clone(), worker.id().to_string());
        let run = Arc::new(RunState::new(Arc::new(NeverCalled), completions));
        let schedule = worker.shared.registry().schedule();
        let mut calls = JoinSet::new();
        worker.shared.dispatch(&run, &schedule, claimed, &mut calls);
        assert_eq!(run.load().0, 1);
        while calls.join_next().await.is_some() {}

        assert_eq!(run.load(), (0, 0));
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
