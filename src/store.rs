//! `NativeStore`: the store handle `lib/sqlite-store.js` and
//! `lib/postgres-store.js` open and `lib/store.js` wraps (its writes sent
//! through `lib/tick-writes.js`). Its methods return Promises and run on Rust
//! threads, but for the `…Now` ones, which answer on the calling thread when
//! that cannot wait (else `undefined`); rows come back as JSON text.

use std::sync::Arc;

use cairnq_core::input::timer_ms;
use cairnq_core::store::backpressure::BackpressureOptions;
use cairnq_core::store::{
    self, refs_to_json, stats_to_json, ClaimInput, ListInput, PurgeInput, StoreOptions, Target,
    TaskRef,
};
use cairnq_core::task::{summaries_to_json, tasks_to_json};
use cairnq_core::wait::{self, WaitOptions};
use cairnq_core::{Store, Task};
use napi_derive::napi;

use crate::errors::IntoJs;
use crate::writes::{replies, writes};
use napi::Result;

/// `{id, status}` as `getStatus` returns it.
#[napi(object)]
pub struct TaskRefObject {
    pub id: String,
    pub status: String,
}

fn task_ref(found: Option<TaskRef>) -> Option<TaskRefObject> {
    found.map(|found| TaskRefObject {
        id: found.id,
        status: found.status.as_str().to_string(),
    })
}

pub(crate) fn row(task: Task) -> String {
    task.to_json()
}

fn maybe_row(task: Option<Task>) -> Option<String> {
    task.map(row)
}

#[napi]
pub struct NativeStore {
    pub(crate) inner: Arc<Store>,
    /// Whether a traced submit stores OpenTelemetry baggage too (JS's).
    pub(crate) propagate_baggage: bool,
    /// The backend of an executor store, which its JS side feeds notifications.
    pub(crate) executor: Option<
        Arc<
            cairnq_core::store::postgres::PostgresBackend<
                cairnq_core::store::postgres::executor::ExecutorTransport,
            >,
        >,
    >,
}

#[napi]
impl NativeStore {
    /// `open`: `"existing"` opens only an existing cairnq database, never
    /// creating or migrating one (`OpenMode::Existing`, for the command line
    /// and dashboard); `"own"` refuses another application's file
    /// (`OpenMode::MigrateOwn`, the command line's `submit`).
    #[napi(factory)]
    pub fn sqlite(path: String, options_json: String) -> Result<NativeStore> {
        let options = StoreOptions::read(
            "SQLiteStore options",
            &options_json,
            &StoreOptions::SQLITE_KEYS,
        )
        .js()?;
        Ok(NativeStore {
            inner: Store::sqlite_on(&path, options.busy_timeout_ms, options.open, options.clock),
            propagate_baggage: options.propagate_baggage,
            executor: None,
        })
    }

    #[napi(factory)]
    pub fn postgres(dsn: String, options_json: String) -> Result<NativeStore> {
        let options = StoreOptions::read(
            "PostgresStore options",
            &options_json,
            &StoreOptions::POSTGRES_KEYS,
        )
        .js()?;
        Store::postgres_with(&dsn, options.max, options.schema, options.open)
            .map(|inner| NativeStore {
                inner,
                propagate_baggage: options.propagate_baggage,
                executor: None,
            })
            .js()
    }

    /// Whether a traced submit stores OpenTelemetry baggage too
    /// (`propagateBaggage`).
    #[napi(getter)]
    pub fn propagate_baggage(&self) -> bool {
        self.propagate_baggage
    }

    /// Resolves when work may be claimable on `queues`, after `timeoutMs` at the latest.
    #[napi]
    pub async fn claim_wake(&self, queues: Vec<String>, timeout_ms: f64) {
        let since = self.inner.wake_ticket();
        self.inner
            .claim_wake(&queues, since, timer_ms(timeout_ms))
            .await
    }

    /// Resolves when the task may have finished, after `timeoutMs` at the latest.
    #[napi]
    pub async fn task_done_wake(&self, task_id: String, timeout_ms: f64) {
        self.inner
            .task_done_wake(&task_id, self.inner.wake_ticket(), timer_ms(timeout_ms))
            .await
    }

    #[napi]
    pub fn use_backpressure(&self, options_json: String) -> Result<()> {
        let options = BackpressureOptions::parse(&options_json).js()?;
        self.inner.use_backpressure(options).js()
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

    /// The writes of one JS tick (a JSON array), sharing a commit; the
    /// replies as one JSON array, in order.
    #[napi]
    pub async fn write_many(&self, writes_json: String) -> Result<String> {
        let writes = writes(&writes_json)?;
        Ok(replies(self.inner.write_group(writes).await))
    }

    /// `submitMany`: the items (`{task, payload, options}`, `wire::read_items`) in one
    /// transaction; their task refs as one JSON array, in item order.
    #[napi]
    pub async fn submit_many(&self, items_json: String) -> Result<String> {
        let refs = self
            .inner
            .submit_many(cairnq_core::wire::read_items(&items_json).js()?)
            .await
            .js()?;
        Ok(refs_to_json(&refs))
    }

    /// The writes of one JS tick (a JSON array) run on the calling thread,
    /// sharing a commit, when that cannot wait: the replies as `writeMany`
    /// gives them, or `undefined`: then use `writeMany`.
    #[napi]
    pub fn write_now(&self, writes_json: String) -> Result<Option<String>> {
        let writes = writes(&writes_json)?;
        Ok(self.inner.write_now(writes).map(replies))
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
    pub async fn list(&self, options_json: String) -> Result<String> {
        let input = ListInput::read(&options_json).js()?;
        let bodies = input.bodies != Some(false);
        self.inner
            .list(input)
            .await
            .map(|tasks| {
                if bodies {
                    tasks_to_json(&tasks)
                } else {
                    summaries_to_json(&tasks)
                }
            })
            .js()
    }

    #[napi]
    pub async fn purge(&self, options_json: String) -> Result<Vec<String>> {
        let input = PurgeInput::read(&options_json).js()?;
        self.inner.purge(input).await.js()
    }

    /// How many tasks `purge(args)` would delete now (at most its limit).
    #[napi]
    pub async fn purge_count(&self, options_json: String) -> Result<i64> {
        let input = PurgeInput::read(&options_json).js()?;
        self.inner.purge_count(input).await.js()
    }

    #[napi]
    pub async fn stats(&self, queue: Option<String>) -> Result<String> {
        self.inner
            .stats(queue)
            .await
            .map(|s| stats_to_json(&s))
            .js()
    }

    #[napi]
    pub async fn get_status(&self, task_id: String) -> Result<Option<TaskRefObject>> {
        self.inner
            .get_status(Target::Id(task_id))
            .await
            .map(task_ref)
            .js()
    }

    #[napi]
    pub async fn get_status_by_key(&self, key: String) -> Result<Option<TaskRefObject>> {
        self.inner
            .get_status(Target::Key(key))
            .await
            .map(task_ref)
            .js()
    }

    #[napi]
    pub async fn queue_depth(&self, queue: String, max_depth: f64) -> Result<i64> {
        self.inner.queue_depth(queue, max_depth).await.js()
    }

    /// Resolves with the terminal row, or rejects with TaskTimeout.
    #[napi]
    pub async fn wait(&self, task_id: String, options_json: String) -> Result<String> {
        let options = WaitOptions::read(&options_json).js()?;
        wait::wait(&self.inner, Target::Id(task_id), options)
            .await
            .map(row)
            .js()
    }

    #[napi]
    pub async fn wait_by_key(&self, key: String, options_json: String) -> Result<String> {
        let options = WaitOptions::read(&options_json).js()?;
        wait::wait(&self.inner, Target::Key(key), options)
            .await
            .map(row)
            .js()
    }

    /// A wait on an id or key that names no task: resolves once it runs
    /// out, with the timeout it ran out (`TaskTimeout` is JS's to raise,
    /// naming what was waited on as given).
    #[napi]
    pub async fn run_out_wait(&self, options_json: String) -> Result<f64> {
        let options = WaitOptions::read(&options_json).js()?;
        Ok(wait::run_out(options).await)
    }

    #[napi]
    pub async fn claim(&self, options_json: String) -> Result<String> {
        let input = ClaimInput::read(&options_json).js()?;
        let limit = input.limit();
        let request = input.request().js()?;
        self.inner
            .claim(request, limit)
            .await
            .map(|tasks| tasks_to_json(&tasks))
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
            .heartbeat_batch(task_ids, worker_id, store::lease_ms(lease_ms).js()?)
            .await
            .js()
    }
}
