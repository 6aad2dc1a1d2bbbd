//! `NativeStore`: the store handle `lib/store.js` wraps. Every method returns
//! a Promise and runs on Rust threads; rows come back as JSON text.

use std::collections::BTreeMap;
use std::sync::Arc;

use cairnq_core::gate::{BackpressureOptions, QueueDepthLimit};
use cairnq_core::store::{
    ClaimRequest, ClaimSession, Draw, ListInput, Outcome, Owned, Stats, SubmitInput, Target,
    DEFAULT_LEASE_MS,
};
use cairnq_core::task::{tasks_to_json, Status};
use cairnq_core::{wait, Store, Task};
use napi::bindgen_prelude::Either;
use napi_derive::napi;

use crate::errors::IntoJs;
use napi::Result;

#[napi(object)]
pub struct SubmitArgs {
    pub name: String,
    pub payload: Option<String>,
    pub queue: Option<String>,
    pub key: Option<String>,
    pub conflict: Option<String>,
    pub max_attempts: Option<f64>,
    pub priority: Option<f64>,
    pub metadata: Option<String>,
    pub parent_id: Option<String>,
    pub root_id: Option<String>,
    pub correlation_id: Option<String>,
    pub run_at_delay_ms: Option<f64>,
}

#[napi(object)]
pub struct ListArgs {
    pub status: Option<String>,
    pub queue: Option<String>,
    pub name: Option<String>,
    pub root_id: Option<String>,
    pub correlation_id: Option<String>,
    pub limit: Option<f64>,
    pub offset: Option<f64>,
}

#[napi(object)]
pub struct ClaimArgs {
    pub queues: Vec<String>,
    pub worker_id: String,
    pub lease_ms: Option<f64>,
    pub limit: Option<f64>,
    pub names: Option<Vec<String>>,
}

#[napi(object)]
pub struct BackpressureArgs {
    pub max_queue_depth: Either<f64, BTreeMap<String, f64>>,
    pub max_queue_wait_ms: Option<f64>,
    pub queue_poll_interval_ms: Option<f64>,
}

impl From<BackpressureArgs> for BackpressureOptions {
    fn from(args: BackpressureArgs) -> Self {
        BackpressureOptions {
            max_queue_depth: match args.max_queue_depth {
                Either::A(all) => QueueDepthLimit::All(all),
                Either::B(per_queue) => QueueDepthLimit::PerQueue(per_queue),
            },
            max_queue_wait_ms: args.max_queue_wait_ms,
            queue_poll_interval_ms: args.queue_poll_interval_ms,
        }
    }
}

fn millis(ms: f64) -> std::time::Duration {
    std::time::Duration::from_millis(if ms.is_finite() && ms > 0.0 {
        ms as u64
    } else {
        0
    })
}

fn lease(ms: Option<f64>) -> i64 {
    ms.map_or(DEFAULT_LEASE_MS, |v| v as i64)
}

fn owned(task_id: String, worker_id: String) -> Owned {
    Owned { task_id, worker_id }
}

fn row(task: Task) -> String {
    task.to_json()
}

fn maybe_row(task: Option<Task>) -> Option<String> {
    task.map(row)
}

/// `{queue: {queued, running, succeeded, failed, canceled}}` in `STATUSES` order.
fn stats_json(stats: &Stats) -> String {
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

#[napi]
pub struct NativeStore {
    pub(crate) inner: Arc<Store>,
}

#[napi]
impl NativeStore {
    #[napi(factory)]
    pub fn sqlite(path: String, busy_timeout_ms: Option<f64>) -> NativeStore {
        NativeStore {
            inner: Store::sqlite(&path, busy_timeout_ms),
        }
    }

    #[napi(factory)]
    pub fn postgres(dsn: String, max: Option<f64>) -> Result<NativeStore> {
        Store::postgres(&dsn, max)
            .map(|inner| NativeStore { inner })
            .js()
    }

    /// Resolves when work may be claimable on `queues`, after `timeoutMs` at the latest.
    #[napi]
    pub async fn claim_wake(&self, queues: Vec<String>, timeout_ms: f64) {
        self.inner.claim_wake(&queues, millis(timeout_ms)).await
    }

    /// Resolves when the task may have finished, after `timeoutMs` at the latest.
    #[napi]
    pub async fn task_done_wake(&self, task_id: String, timeout_ms: f64) {
        self.inner
            .task_done_wake(&task_id, millis(timeout_ms))
            .await
    }

    #[napi]
    pub fn use_backpressure(&self, opts: BackpressureArgs) -> Result<()> {
        self.inner.use_backpressure(opts.into()).js()
    }

    #[napi]
    pub async fn connect(&self) -> Result<()> {
        self.inner.connect().await.js()
    }

    #[napi]
    pub async fn close(&self) -> Result<()> {
        self.inner.close().await.js()
    }

    #[napi]
    pub async fn protocol_version(&self) -> Result<i64> {
        self.inner.protocol_version().await.js()
    }

    #[napi]
    pub async fn submit(&self, args: SubmitArgs) -> Result<String> {
        let input = SubmitInput {
            name: args.name,
            payload: args.payload,
            queue: args.queue,
            key: args.key,
            conflict: args.conflict,
            max_attempts: args.max_attempts,
            priority: args.priority,
            metadata: args.metadata,
            parent_id: args.parent_id,
            root_id: args.root_id,
            correlation_id: args.correlation_id,
            run_at_delay_ms: args.run_at_delay_ms,
        };
        self.inner.submit(input).await.map(row).js()
    }

    /// The row as JSON (`"null"` when missing) read on the calling thread, or
    /// `undefined` when that would have to wait: then use `get`.
    #[napi]
    pub fn get_now(&self, task_id: String) -> Result<Option<String>> {
        self.inline(Target::Id(task_id))
    }

    #[napi]
    pub fn get_by_key_now(&self, key: String) -> Result<Option<String>> {
        self.inline(Target::Key(key))
    }

    fn inline(&self, target: Target) -> Result<Option<String>> {
        match self.inner.get_inline(&target) {
            None => Ok(None),
            Some(found) => found
                .map(|task| Some(task.map_or_else(|| "null".to_string(), row)))
                .js(),
        }
    }

    #[napi]
    pub async fn get(&self, task_id: String) -> Result<Option<String>> {
        self.inner
            .get(Target::Id(task_id))
            .await
            .map(maybe_row)
            .js()
    }

    #[napi]
    pub async fn get_by_key(&self, key: String) -> Result<Option<String>> {
        self.inner.get(Target::Key(key)).await.map(maybe_row).js()
    }

    #[napi]
    pub async fn list(&self, args: ListArgs) -> Result<String> {
        let input = ListInput {
            status: args.status,
            queue: args.queue,
            name: args.name,
            root_id: args.root_id,
            correlation_id: args.correlation_id,
            limit: args.limit,
            offset: args.offset,
        };
        self.inner
            .list(input)
            .await
            .map(|tasks| tasks_to_json(&tasks))
            .js()
    }

    #[napi]
    pub async fn cancel(&self, task_id: String) -> Result<Option<String>> {
        self.inner
            .cancel(Target::Id(task_id))
            .await
            .map(maybe_row)
            .js()
    }

    #[napi]
    pub async fn cancel_by_key(&self, key: String) -> Result<Option<String>> {
        self.inner
            .cancel(Target::Key(key))
            .await
            .map(maybe_row)
            .js()
    }

    #[napi]
    pub async fn retry(&self, task_id: String, reset_attempt: bool) -> Result<Option<String>> {
        self.inner
            .retry(Target::Id(task_id), reset_attempt)
            .await
            .map(maybe_row)
            .js()
    }

    #[napi]
    pub async fn retry_by_key(&self, key: String, reset_attempt: bool) -> Result<Option<String>> {
        self.inner
            .retry(Target::Key(key), reset_attempt)
            .await
            .map(maybe_row)
            .js()
    }

    #[napi]
    pub async fn purge(
        &self,
        older_than_ms: Option<f64>,
        limit: Option<f64>,
    ) -> Result<Vec<String>> {
        self.inner.purge(older_than_ms, limit).await.js()
    }

    #[napi]
    pub async fn stats(&self) -> Result<String> {
        self.inner.stats().await.map(|s| stats_json(&s)).js()
    }

    #[napi]
    pub async fn queue_depth(&self, queue: String, max_depth: f64) -> Result<i64> {
        self.inner.queue_depth(queue, max_depth).await.js()
    }

    /// Resolves with the terminal row, or rejects with TaskTimeout.
    #[napi]
    pub async fn wait(
        &self,
        task_id: String,
        timeout_ms: Option<f64>,
        poll_ms: Option<f64>,
    ) -> Result<String> {
        wait::wait(&self.inner, Target::Id(task_id), timeout_ms, poll_ms)
            .await
            .map(row)
            .js()
    }

    #[napi]
    pub async fn wait_by_key(
        &self,
        key: String,
        timeout_ms: Option<f64>,
        poll_ms: Option<f64>,
    ) -> Result<String> {
        wait::wait(&self.inner, Target::Key(key), timeout_ms, poll_ms)
            .await
            .map(row)
            .js()
    }

    #[napi]
    pub async fn claim(&self, args: ClaimArgs) -> Result<String> {
        let request = ClaimRequest {
            queues: args.queues,
            worker_id: args.worker_id,
            lease_ms: lease(args.lease_ms),
            names: args.names,
        };
        let limit = args.limit.map_or(1, |v| v as i64);
        self.inner
            .claim(request, limit)
            .await
            .map(|tasks| tasks_to_json(&tasks))
            .js()
    }

    #[napi]
    pub async fn heartbeat(
        &self,
        task_id: String,
        worker_id: String,
        lease_ms: Option<f64>,
    ) -> Result<String> {
        self.inner
            .heartbeat(owned(task_id, worker_id), lease(lease_ms))
            .await
            .map(row)
            .js()
    }

    /// `[[id, cancelRequested], …]` for the tasks still owned.
    #[napi]
    pub async fn heartbeat_batch(
        &self,
        task_ids: Vec<String>,
        worker_id: String,
        lease_ms: Option<f64>,
    ) -> Result<Vec<(String, bool)>> {
        self.inner
            .heartbeat_batch(task_ids, worker_id, lease(lease_ms))
            .await
            .js()
    }

    #[napi]
    pub async fn progress(
        &self,
        task_id: String,
        worker_id: String,
        progress: Option<f64>,
        message: Option<String>,
    ) -> Result<String> {
        self.inner
            .progress(owned(task_id, worker_id), progress, message)
            .await
            .map(row)
            .js()
    }

    #[napi]
    pub async fn succeed(
        &self,
        task_id: String,
        worker_id: String,
        result: Option<String>,
    ) -> Result<String> {
        self.finish(task_id, worker_id, Outcome::Succeed { result })
            .await
    }

    #[napi]
    pub async fn complete(
        &self,
        task_id: String,
        worker_id: String,
        result: Option<String>,
    ) -> Result<String> {
        self.finish(task_id, worker_id, Outcome::Complete { result })
            .await
    }

    #[napi]
    pub async fn fail(
        &self,
        task_id: String,
        worker_id: String,
        error: String,
        retryable: bool,
        delay_ms: Option<f64>,
    ) -> Result<String> {
        let outcome = Outcome::Fail {
            error,
            retryable,
            delay_ms: delay_ms.map_or(0, |v| v.max(0.0) as i64),
        };
        self.finish(task_id, worker_id, outcome).await
    }
}

impl NativeStore {
    async fn finish(&self, task_id: String, worker_id: String, outcome: Outcome) -> Result<String> {
        self.inner
            .finish(owned(task_id, worker_id), outcome)
            .await
            .map(row)
            .js()
    }
}

/// `store.claimSession(input, plan)`: a claim transaction whose draws the JS
/// plan makes one by one.
#[napi]
pub struct NativeClaimSession {
    session: tokio::sync::Mutex<Option<ClaimSession>>,
}

#[napi]
impl NativeStore {
    #[napi]
    pub fn open_claim_session(&self, args: ClaimArgs) -> NativeClaimSession {
        let request = ClaimRequest {
            queues: args.queues,
            worker_id: args.worker_id,
            lease_ms: lease(args.lease_ms),
            names: args.names,
        };
        let store = self.inner.clone();
        let session = napi::bindgen_prelude::within_runtime_if_available(move || {
            ClaimSession::open(store, request, &tokio::runtime::Handle::current())
        });
        NativeClaimSession {
            session: tokio::sync::Mutex::new(Some(session)),
        }
    }
}

#[napi]
impl NativeClaimSession {
    /// True once the transaction is open; false when there was nothing to claim.
    #[napi]
    pub async fn opened(&self) -> Result<bool> {
        let mut slot = self.session.lock().await;
        let session = slot
            .as_mut()
            .ok_or_else(|| napi::Error::from_reason("the claim session has ended"))?;
        session.opened().await.js()
    }

    #[napi]
    pub async fn draw(&self, names: Option<Vec<String>>, limit: f64) -> Result<String> {
        let slot = self.session.lock().await;
        let session = slot
            .as_ref()
            .ok_or_else(|| napi::Error::from_reason("the claim session has ended"))?;
        let draw = Draw {
            names,
            limit: limit as i64,
        };
        session
            .draw(draw)
            .await
            .map(|tasks| tasks_to_json(&tasks))
            .js()
    }

    /// Commit (`keep`) or roll back the draws.
    #[napi]
    pub async fn finish(&self, keep: bool) -> Result<()> {
        match self.session.lock().await.take() {
            Some(session) => session.finish(keep).await.js(),
            None => Ok(()),
        }
    }
}
