//! `NativeWorker` and `NativeContext`: the Rust worker with JS handlers.
//!
//! The claim loop, heartbeat, cancel watch, time limits and settlement writes run on
//! Rust threads; JS is only entered to run a handler (`dispatch`), to answer
//! the blocked-loop ping, to abort a context's signal and to report errors.
//! Every one of those calls is non-blocking from Rust's side, and the
//! thread-safe functions are weak: a running worker is kept alive by its
//! `run()` promise alone, so nothing outlives `close()`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use async_trait::async_trait;
use cairnq_core::clock::Clock;
use cairnq_core::input::stored_ms;
use cairnq_core::worker::{
    calls_to_json, retry_backoff, Call, CallOutcome, ErrorInfo, Invoker, Registration, TaskContext,
    TaskResult, Worker, WorkerOptions,
};
use cairnq_core::{Error, Task};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{Result, Status};
use napi_derive::napi;

use crate::errors::{reason, IntoJs};
use crate::store::NativeStore;

/// How a handler ended.
#[napi(string_enum = "camelCase")]
pub enum OutcomeKind {
    Returned,
    Threw,
    LostLease,
    /// A step sent the task back to the queue (`ctx.sleep`, `ctx.callChild`).
    Suspended,
    /// The handler threw the failure a `ctx.callChild` step threw.
    ChildFailed,
}

/// How the JS shim says the handler ended.
#[napi(object)]
pub struct OutcomeArg {
    pub kind: OutcomeKind,
    /// For `returned`: per task, encoded JSON (absent = null result)…
    pub results: Option<Vec<ResultArg>>,
    /// For `threw`: the envelope as JSON text and its retryability.
    pub envelope: Option<String>,
    pub retryable: Option<bool>,
    /// For `threw`: per task, what the registration's backoff function
    /// returned (null where it was not called).
    pub backoff_ms: Option<Vec<Option<f64>>>,
    /// For `childFailed`: the child step's id.
    pub step_id: Option<String>,
}

#[napi(object)]
pub struct ResultArg {
    pub json: Option<String>,
    /// …or why the value could not be encoded.
    pub unserializable: Option<String>,
}

#[napi(object)]
pub struct ErrorArg {
    pub reason: String,
    pub phase: String,
    pub task_id: Option<String>,
}

/// Which context aborted: task `index` of call `call`.
#[napi(object)]
pub struct ContextArg {
    pub call: f64,
    pub index: u32,
}

type JsFn<Arg, Ret> = ThreadsafeFunction<Arg, Ret, Arg, Status, false, true>;

struct JsInvoker {
    /// Takes the calls of one poll as one JSON text:
    /// `[{"id", "name", "batch", "tasks": [rows]}, …]`.
    dispatch: JsFn<String, ()>,
    ping: JsFn<(), ()>,
    aborted: JsFn<ContextArg, ()>,
    notice: Option<JsFn<String, ()>>,
    /// The store's clock: the queue wait each handler reads.
    clock: Clock,
}

impl From<OutcomeArg> for CallOutcome {
    fn from(outcome: OutcomeArg) -> CallOutcome {
        match outcome.kind {
            OutcomeKind::Returned => CallOutcome::Returned(
                outcome
                    .results
                    .unwrap_or_default()
                    .into_iter()
                    .map(|r| match r.unserializable {
                        Some(detail) => TaskResult::Unserializable(detail),
                        None => TaskResult::Value(r.json),
                    })
                    .collect(),
            ),
            OutcomeKind::LostLease => CallOutcome::LostLease,
            OutcomeKind::Suspended => CallOutcome::Suspended,
            OutcomeKind::ChildFailed => CallOutcome::ChildFailed {
                step_id: outcome.step_id.unwrap_or_default(),
            },
            OutcomeKind::Threw => CallOutcome::Threw {
                envelope_json: outcome.envelope.unwrap_or_else(|| "{}".into()),
                retryable: outcome.retryable.unwrap_or(true),
                backoff_ms: outcome.backoff_ms.unwrap_or_default(),
            },
        }
    }
}

#[async_trait]
impl Invoker for JsInvoker {
    fn start(&self, calls: &[Arc<Call>]) -> std::result::Result<(), Error> {
        match self.dispatch.call(
            calls_to_json(calls, self.clock.now_ms()),
            ThreadsafeFunctionCallMode::NonBlocking,
        ) {
            Status::Ok => Ok(()),
            status => Err(Error::Connection(format!(
                "the handler could not be run: {status}"
            ))),
        }
    }

    async fn ping(&self) {
        let _ = self.ping.call_async(()).await;
    }

    fn aborted(&self, context: &TaskContext) {
        if let Some((call, index)) = context.position() {
            let arg = ContextArg {
                call: call as f64,
                index: index as u32,
            };
            self.aborted
                .call(arg, ThreadsafeFunctionCallMode::NonBlocking);
        }
    }

    fn notice(&self, message: &str) {
        if let Some(notice) = &self.notice {
            notice.call(message.to_string(), ThreadsafeFunctionCallMode::NonBlocking);
        }
    }
}

#[napi]
pub struct NativeWorker {
    worker: Worker,
    invoker: Arc<JsInvoker>,
    /// Whether `run` may still start (a worker runs once).
    runnable: AtomicBool,
}

impl NativeWorker {
    /// The core worker (for the metrics exporter, which reads its timings).
    pub(crate) fn core(&self) -> &Worker {
        &self.worker
    }

    fn ready(&self) -> Option<String> {
        let calls = self.worker.start_ready();
        (!calls.is_empty()).then(|| calls_to_json(&calls, self.worker.store().clock().now_ms()))
    }
}

#[napi]
impl NativeWorker {
    // Each JS callback crosses as a thread-safe function of its own.
    #[allow(clippy::too_many_arguments)]
    #[napi(constructor)]
    pub fn new(
        store: &NativeStore,
        queues: Vec<String>,
        options_json: String,
        dispatch: JsFn<String, ()>,
        ping: JsFn<(), ()>,
        aborted: JsFn<ContextArg, ()>,
        on_error: Option<JsFn<ErrorArg, ()>>,
        notice: Option<JsFn<String, ()>>,
    ) -> Result<Self> {
        let on_error = on_error.map(|report| {
            let report = Arc::new(report);
            Arc::new(move |err: Error, info: ErrorInfo| {
                let arg = ErrorArg {
                    reason: reason(&err),
                    phase: info.phase.as_str().into(),
                    task_id: info.task_id,
                };
                report.call(arg, ThreadsafeFunctionCallMode::NonBlocking);
            }) as cairnq_core::worker::ErrorHook
        });
        let options = WorkerOptions {
            on_error,
            ..WorkerOptions::read(&options_json).js()?
        };
        let worker = Worker::new(store.inner.clone(), queues, options).js()?;
        let invoker = Arc::new(JsInvoker {
            dispatch,
            ping,
            aborted,
            notice,
            clock: store.inner.clock().clone(),
        });
        Ok(NativeWorker {
            worker,
            invoker,
            runnable: AtomicBool::new(true),
        })
    }

    #[napi(getter)]
    pub fn id(&self) -> String {
        self.worker.id().to_string()
    }

    #[napi]
    pub fn register(&self, name: String, options_json: String) -> Result<()> {
        let registration = Registration::read(&options_json).js()?;
        self.worker.register(&name, registration).js()
    }

    /// The handler of call `id` has ended. Returns the calls to start now
    /// in the slot it freed (as `dispatch` takes them), if any were waiting.
    #[napi]
    pub fn settle(&self, id: f64, outcome: OutcomeArg) -> Option<String> {
        self.worker.settle(id as u64, outcome.into());
        self.ready()
    }

    /// Handlers that returned, gathered over a tick: call ids, how many
    /// tasks each call has, and their results' JSON (`null` for no result),
    /// each call's tasks in order. Returns the calls to start now, like
    /// `settle`.
    #[napi]
    pub fn settle_returned(
        &self,
        ids: Vec<f64>,
        counts: Vec<u32>,
        results: Vec<Option<String>>,
    ) -> Option<String> {
        let mut results = results.into_iter();
        for (id, count) in ids.into_iter().zip(counts) {
            let values = results
                .by_ref()
                .take(count as usize)
                .map(TaskResult::Value)
                .collect();
            self.worker.settle(id as u64, CallOutcome::Returned(values));
        }
        self.ready()
    }

    /// The native half of task `index` of call `call`; `null` once the call's
    /// settlement is written.
    #[napi]
    pub fn context(&self, call: f64, index: u32) -> Option<NativeContext> {
        self.worker
            .context(call as u64, index as usize)
            .map(|inner| NativeContext { inner })
    }

    /// `stop({ timeoutMs })`, the options as `encodeOptions` gives them.
    #[napi]
    pub fn stop(&self, options_json: String) -> Result<()> {
        self.worker.stop_with(&options_json).js()
    }

    /// `serve({ shutdownTimeoutMs })`, the options as `encodeOptions` gives them.
    #[napi]
    pub fn set_shutdown_timeout(&self, options_json: String) -> Result<()> {
        self.worker.set_shutdown_timeout(&options_json).js()
    }

    /// Polls until `stop()`, then drains the calls in flight. A worker runs
    /// once; its JS functions are weak, so a finished worker holds nothing.
    #[napi]
    pub async fn run(&self, concurrency: Option<f64>) -> Result<()> {
        if !self.runnable.swap(false, Ordering::SeqCst) {
            return Ok(());
        }
        self.worker
            .run(self.invoker.clone(), concurrency)
            .await
            .js()
    }
}

/// The Rust half of one `TaskContext`.
#[napi]
pub struct NativeContext {
    pub(crate) inner: Arc<TaskContext>,
}

#[napi]
impl NativeContext {
    /// A context outside any worker (`new TaskContext(store, task, …)`).
    #[napi(factory)]
    pub fn standalone(
        store: &NativeStore,
        task: String,
        worker_id: String,
        lease_ms: f64,
        retry_backoff_ms: Option<f64>,
        retry_backoff_max_ms: Option<f64>,
    ) -> Result<Self> {
        let task = Task::from_json(&task)
            .map_err(cairnq_core::Error::from)
            .js()?;
        let backoff = retry_backoff(retry_backoff_ms, retry_backoff_max_ms).js()?;
        let lease_ms = stored_ms("leaseMs", lease_ms).js()?;
        let inner = TaskContext::new(store.inner.clone(), task, worker_id, lease_ms, backoff);
        Ok(NativeContext {
            inner: Arc::new(inner),
        })
    }

    #[napi(getter)]
    pub fn settled(&self) -> bool {
        self.inner.settled()
    }

    #[napi(getter)]
    pub fn lost_lease(&self) -> bool {
        self.inner.lease_lost()
    }

    #[napi(getter)]
    pub fn cancel_seen(&self) -> bool {
        self.inner.cancel_seen()
    }

    /// Why `signal` aborted (`lostLease`, `timeout`, `canceled`,
    /// `shutdown`), or `null` while it has not.
    #[napi(getter)]
    pub fn abort_reason(&self) -> Option<&'static str> {
        self.inner.abort_reason().map(|reason| reason.as_str())
    }

    /// `ctx.succeedIn`: settle in the shared transaction `shared`; the row
    /// as JSON, or `undefined` when already settled.
    #[napi]
    pub async fn complete_shared(
        &self,
        shared: f64,
        result_json: Option<String>,
    ) -> Result<Option<String>> {
        self.inner
            .complete_shared(shared as u64, result_json)
            .await
            .map(|task| task.map(|t| t.to_json()))
            .js()
    }

    #[napi]
    pub fn mark_settled(&self) {
        self.inner.mark_settled();
    }

    #[napi]
    pub fn mark_lease_lost(&self) {
        self.inner.mark_lease_lost();
    }

    #[napi]
    pub fn observe_cancel(&self, requested: bool) {
        self.inner.observe_cancel(requested);
    }

    #[napi]
    pub async fn progress(&self, progress: Option<f64>, message: Option<String>) -> Result<String> {
        self.inner
            .progress(progress, message)
            .await
            .map(|t| t.to_json())
            .js()
    }

    #[napi]
    pub async fn heartbeat(&self) -> Result<String> {
        self.inner.heartbeat().await.map(|t| t.to_json()).js()
    }

    #[napi]
    pub async fn canceled(&self) -> Result<bool> {
        self.inner.canceled().await.js()
    }

    #[napi]
    pub async fn succeed(&self, result: Option<String>) -> Result<Option<String>> {
        self.inner
            .succeed(result)
            .await
            .map(|t| t.map(|t| t.to_json()))
            .js()
    }

    #[napi]
    pub async fn fail(
        &self,
        envelope: String,
        retryable: bool,
        options_json: String,
        backoff_ms: Option<f64>,
    ) -> Result<Option<String>> {
        self.inner
            .fail(envelope, retryable, &options_json, backoff_ms)
            .await
            .map(|t| t.map(|t| t.to_json()))
            .js()
    }
}
