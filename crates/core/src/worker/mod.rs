//! The worker runtime (docs/api.md, "Worker options" through "TaskContext"):
//! the claim loop, the heartbeat, the cancel watch, time limits, the shutdown
//! deadline, retry backoff and every settlement write run here, on the async runtime, never waiting on the
//! thread that runs handlers. Handlers are reached through an [`Invoker`] the
//! bindings provide.

mod call;
mod cancel_watch;
mod completions;
mod context;
mod dispatch;
mod flow;
mod heartbeat;
mod invoker;
mod ledger;
mod pauses;
mod plan;
mod poll;
mod quiet;
mod registry;
mod report;
mod settings;
mod shutdown;
mod steps;
mod timings;
mod waits;

use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

pub use self::call::{calls_to_json, Call, CallOutcome, TaskResult};
pub use self::context::TaskContext;
pub use self::invoker::Invoker;
pub use self::registry::Registration;
pub use self::report::{ErrorHook, ErrorInfo, Phase};
pub use self::settings::{retry_backoff, WorkerOptions};
pub use self::steps::{ChildCall, RetryAfter, StepStart};
pub use self::timings::{merge as merge_timings, NameTimings, Timings};
pub use self::waits::WaitAnswer;

use self::call::Ending;
use self::flow::FlowState;
use self::heartbeat::Beat;
use self::ledger::{PendingCompletion, RunState};
use self::pauses::PauseView;
use self::plan::{Limits, PollPlan};
use self::poll::{Claimed, Next, PollState, Reading};
use self::quiet::Quiet;
pub use self::quiet::{drain_max, Drained, DEFAULT_DRAIN_MAX};
use self::registry::{ClaimSources, Registry};
use self::report::Reporter;
use self::settings::Settings;
use self::shutdown::{sleep_until, Shutdown};
use crate::error::Result;
use crate::ids::new_worker_id;
use crate::schedule::clock::fire_until_stopped;
use crate::store::{ClaimRequest, Store};

/// Pause after a failed claim session before the next poll.
const CLAIM_ERROR_PAUSE: Duration = Duration::from_millis(250);

pub(crate) struct WorkerInner {
    id: String,
    store: Arc<Store>,
    queues: Vec<String>,
    settings: Settings,
    reporter: Reporter,
    registry: Mutex<Registry>,
    stopped: watch::Sender<bool>,
    /// `stop({ timeoutMs })`'s deadline: then the calls still in flight are
    /// abandoned and their tasks handed back.
    shutdown: Shutdown,
    /// The run in progress, for `settle` and `context`.
    run: Mutex<Weak<RunState>>,
    /// Queue waits and run times per task name, for the metrics.
    timings: Mutex<Timings>,
    /// Declared limits and full rate windows (docs/api.md, "Flow control").
    flow: FlowState,
    /// The paused queues, as last read (docs/api.md, "Queue pauses").
    pauses: PauseView,
    /// Whether it has anything to do now (a test's drain).
    quiet: Quiet,
}

/// A worker: registrations plus the loop that claims and runs their tasks.
/// Cheap to clone; clones share everything.
#[derive(Clone)]
pub struct Worker {
    shared: Arc<WorkerInner>,
}

impl Worker {
    /// Validates `options` (docs/api.md, "Worker construction and lifecycle",
    /// in order) and installs backpressure.
    pub fn new(store: Arc<Store>, queues: Vec<String>, options: WorkerOptions) -> Result<Worker> {
        let settings = Settings::resolve(&options)?;
        if let Some(backpressure) = options.backpressure {
            store.use_backpressure(backpressure)?;
        }
        Ok(Worker {
            shared: Arc::new(WorkerInner {
                id: new_worker_id(),
                store,
                queues,
                settings,
                reporter: Reporter(options.on_error),
                registry: Mutex::new(Registry::default()),
                stopped: watch::channel(false).0,
                shutdown: Shutdown::new(),
                run: Mutex::new(Weak::new()),
                timings: Mutex::new(Timings::new()),
                flow: FlowState::default(),
                pauses: PauseView::default(),
                quiet: Quiet::default(),
            }),
        })
    }

    pub fn id(&self) -> &str {
        &self.shared.id
    }

    pub fn store(&self) -> &Arc<Store> {
        &self.shared.store
    }

    /// Queue waits and run times per task name since the worker was made.
    pub fn timings(&self) -> Timings {
        self.shared.timings().clone()
    }

    /// `worker.task(name, options, fn)`: adds or replaces (in place) the
    /// registration of `name`. Takes effect on the next poll.
    pub fn register(&self, name: &str, options: Registration) -> Result<()> {
        let settings = &self.shared.settings;
        let handler = registry::validate(name, options, &settings.resources, settings.backoff)?;
        self.shared.registry().register(handler)
    }

    /// Stops the loop for good and cuts any sleep short; running handlers
    /// are not interrupted.
    pub fn stop(&self) {
        self.shared.stopped.send_replace(true);
    }

    /// `stop(options)` (`{timeoutMs}` as JS sends it): `stop()`, and at the
    /// deadline (`shutdown.rs`) the calls still in flight are abandoned and
    /// their tasks handed back. Refused, nothing stopped: a bad timeout.
    pub fn stop_with(&self, options: &str) -> Result<()> {
        self.shared.shutdown.on_stop(options)?;
        self.stop();
        Ok(())
    }

    /// `serve({ shutdownTimeoutMs })` (the options as JS sends them): every
    /// later `stop` without a `timeoutMs` of its own gets this one.
    pub fn set_shutdown_timeout(&self, options: &str) -> Result<()> {
        self.shared.shutdown.on_serve(options)
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
        let beat = Beat {
            store: shared.store.clone(),
            worker_id: shared.id.clone(),
            lease_ms: shared.settings.lease_ms,
            interval_ms: shared.settings.heartbeat_interval_ms,
            every: shared.settings.heartbeat_every,
            reporter: shared.reporter.clone(),
        };
        let cancels = tokio::spawn(cancel_watch::watch_until(
            shared.store.clone(),
            run.clone(),
            shared.reporter.clone(),
            beats_until.clone(),
        ));
        let beats = tokio::spawn(heartbeat::beat_until(beat, run.clone(), beats_until));
        let clock = tokio::spawn(fire_until_stopped(
            shared.store.clone(),
            shared.queues.clone(),
            shared.stopped.subscribe(),
        ));
        shared.poll_until_stopped(&run, slots).await;
        let _ = clock.await;
        let mut shutdown_at = shared.shutdown.deadline();
        loop {
            let changed = run.changed.notified();
            let deadline = *shutdown_at.borrow_and_update();
            if deadline.is_some_and(|at| at <= Instant::now()) {
                shared.shut_down(&run);
            } else {
                shared.start_held(&run);
            }
            shared.flush_completions(&run).await;
            if run.finished() {
                break;
            }
            tokio::select! {
                _ = changed => {}
                _ = shutdown_at.changed() => {}
                _ = sleep_until(deadline) => {}
            }
        }
        beats_done.send_replace(true);
        let _ = beats.await;
        let _ = cancels.await;
        Ok(())
    }

    /// cairnq/testing's drain: resolves when this running worker has
    /// nothing to do now, or past `max_tasks` (quiet.rs).
    pub async fn until_quiet(&self, max_tasks: u64) -> Result<Drained> {
        let shared = &self.shared;
        let wake = || {
            if let Some(run) = shared.current_run() {
                run.changed.notify_one();
            }
        };
        let stopped = shared.stopped.subscribe();
        let (store, queues) = (&shared.store, &shared.queues);
        shared
            .quiet
            .wait(store, queues, max_tasks, stopped, wake)
            .await
    }
}

impl WorkerInner {
    fn registry(&self) -> std::sync::MutexGuard<'_, Registry> {
        self.registry.lock().expect("registry lock")
    }

    fn timings(&self) -> std::sync::MutexGuard<'_, Timings> {
        self.timings.lock().expect("timings")
    }

    fn current_run(&self) -> Option<Arc<RunState>> {
        self.run.lock().expect("run slot").upgrade()
    }

    /// The poll loop of docs/api.md, "Poll loop": each turn reads the run,
    /// lets `PollState` decide the next step (poll.rs tells the policy) and
    /// takes it.
    async fn poll_until_stopped(self: &Arc<Self>, run: &Arc<RunState>, slots: i64) {
        let mut stop = self.stopped.subscribe();
        let mut state = PollState::default();
        while !*stop.borrow() {
            let turn = self.quiet.turn();
            let changed = run.changed.notified();
            // Taken before this poll reads anything: a commit landing between
            // that read and the idle sleep ends the sleep at once.
            let ticket = self.store.wake_ticket();
            self.start_held(run);
            let (in_flight, bytes, held) = run.load();
            let claim_sources = self.registry().claim_sources();
            let notice = |message: String| run.invoker.notice(&message);
            if let Err(err) = self
                .flow
                .declare(&self.store, &self.id, &claim_sources, notice)
                .await
            {
                self.reporter.claim(err);
                sleep_unless_stopped(&mut stop, CLAIM_ERROR_PAUSE).await;
                continue;
            }
            let queues = match self.pauses.open_queues(&self.store, &self.queues).await {
                Ok(queues) => queues,
                Err(err) => {
                    self.reporter.claim(err);
                    sleep_unless_stopped(&mut stop, CLAIM_ERROR_PAUSE).await;
                    continue;
                }
            };
            let pending = self.completions_to_write(run);
            let reading = Reading {
                slots,
                in_flight,
                held,
                over_budget: self
                    .settings
                    .max_in_flight_bytes
                    .is_some_and(|budget| bytes as f64 >= budget),
                sources: claim_sources.sources.len(),
                may_claim_ahead: self.may_claim_ahead(&claim_sources),
                calls_are_short: run.calls_are_short(),
                completions_waiting: !pending.is_empty(),
                every_queue_paused: queues.is_empty() && !self.queues.is_empty(),
            };
            match state.next(&reading) {
                Next::SettleOrWait => {
                    if !self.write_completions(run, pending).await {
                        tokio::select! {
                            _ = changed => {}
                            _ = until_true(&mut stop) => {}
                        }
                    }
                }
                Next::SettleThenIdle => {
                    self.write_completions(run, pending).await;
                    if run.finished() {
                        self.quiet.found_nothing(turn);
                    }
                    self.idle(changed, ticket, &queues, &mut stop).await;
                }
                Next::Settle => {
                    self.write_completions(run, pending).await;
                }
                Next::Claim {
                    start,
                    limit,
                    probe,
                } => {
                    let plan = PollPlan::new(
                        claim_sources.clone(),
                        start,
                        limit,
                        run.usage(),
                        Limits {
                            claim_batch: self.settings.claim_batch,
                            resources: self.settings.resources.clone(),
                            flow_gate: self.flow.gate.clone(),
                        },
                    );
                    let request = ClaimRequest {
                        queues: queues.clone(),
                        worker_id: self.id.clone(),
                        lease_ms: self.settings.lease_ms,
                        // A name whose rate window is full makes no probe open a transaction.
                        names: Some(self.flow.gate.open_names(&claim_sources.names)),
                    };
                    let pending = if self.store.completes_apart() {
                        self.write_completions(run, pending).await;
                        Vec::new()
                    } else {
                        pending
                    };
                    let items = pending.iter().map(PendingCompletion::item).collect();
                    match self.store.poll(request, items, probe, plan).await {
                        Err(err) => {
                            run.deliver(pending, Err(&err), &self.reporter);
                            self.reporter.claim(err);
                            state.claimed(Claimed::Failed);
                            sleep_unless_stopped(&mut stop, CLAIM_ERROR_PAUSE).await;
                        }
                        Ok((completed, plan)) => {
                            run.deliver(pending, Ok(completed), &self.reporter);
                            match plan {
                                Some(plan) if !plan.calls.is_empty() => {
                                    state.claimed(Claimed::Calls {
                                        filled: plan.filled(),
                                    });
                                    self.dispatch(run, &claim_sources, plan.calls);
                                }
                                _ => {
                                    state.claimed(Claimed::Nothing);
                                    if run.finished() {
                                        self.quiet.found_nothing(turn);
                                    }
                                    self.idle(changed, ticket, &queues, &mut stop).await;
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// Claiming ahead needs calls that any free slot may take.
    fn may_claim_ahead(&self, claim_sources: &ClaimSources) -> bool {
        self.settings.max_in_flight_bytes.is_none()
            && claim_sources
                .sources
                .iter()
                .all(|s| s.concurrency.is_none() && s.resource.is_none())
    }

    /// The idle sleep: the poll interval, cut short by a claim wake on the
    /// `open` queues, a call ending (its completion is then written at
    /// once), a pause or resume in this process, or `stop()`.
    async fn idle(
        &self,
        changed: tokio::sync::futures::Notified<'_>,
        ticket: u64,
        open: &[String],
        stop: &mut watch::Receiver<bool>,
    ) {
        let every = self.flow.gate.sleep_bound(self.settings.poll_every);
        let every = self.pauses.sleep_bound(&self.queues, every);
        tokio::select! {
            _ = self.store.claim_wake(open, ticket, every) => {}
            _ = sleep_unless_stopped(stop, every) => {}
            _ = self.store.pause_presence().changes().notified() => {}
            _ = changed => {}
        }
    }
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

#[cfg(test)]
mod tests;
