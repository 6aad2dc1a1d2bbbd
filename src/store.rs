//! `NativeStore`: the store handle `lib/store.js` wraps. Every method returns
//! a Promise and runs on Rust threads; rows come back as JSON text.

use std::collections::BTreeMap;
use std::sync::Arc;

use cairnq_core::input::{stored_ms_or, timer_ms};
use cairnq_core::store::backpressure::{BackpressureOptions, QueueDepthLimit};
use cairnq_core::store::{
    ClaimRequest, ClaimSession, Draw, HeldTask, ListInput, OpenMode, Outcome, PurgeInput, Stats,
    SubmitInput, Target, TaskRef, Write, WriteAnswer, DEFAULT_LEASE_MS,
};
use cairnq_core::task::{summaries_to_json, tasks_to_json, Status};
use cairnq_core::wait::{self, WaitOptions};
use cairnq_core::{Error as CoreError, Store, Task};
use napi::bindgen_prelude::Either;
use napi_derive::napi;
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::errors::{reason, IntoJs};
use napi::Result;

/// `submit`'s arguments inside a write.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubmitArgs {
    pub name: String,
    pub payload: Option<String>,
    pub queue: Option<String>,
    pub key: Option<String>,
    pub conflict: Option<String>,
    #[serde(default, deserialize_with = "spelled_number")]
    pub max_attempts: Option<f64>,
    #[serde(default, deserialize_with = "spelled_number")]
    pub priority: Option<f64>,
    pub metadata: Option<String>,
    pub parent_id: Option<String>,
    pub root_id: Option<String>,
    pub correlation_id: Option<String>,
    #[serde(default, deserialize_with = "spelled_number")]
    pub run_at_delay_ms: Option<f64>,
    #[serde(default, deserialize_with = "spelled_number")]
    pub debounce_ms: Option<f64>,
    #[serde(default, deserialize_with = "spelled_number")]
    pub max_delay_ms: Option<f64>,
}

/// One client write of a JS tick (`lib/store.js` gathers them and sends
/// them as one JSON text): `kind` names the method, the other fields are its
/// arguments.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WriteArgs {
    pub kind: WriteKind,
    pub submit: Option<SubmitArgs>,
    pub task_id: Option<String>,
    pub key: Option<String>,
    pub worker_id: Option<String>,
    pub reset_attempt: Option<bool>,
    /// `succeed`/`complete`: the result's JSON; `fail`: the envelope's.
    pub json: Option<String>,
    pub retryable: Option<bool>,
    #[serde(default, deserialize_with = "spelled_number")]
    pub delay_ms: Option<f64>,
    #[serde(default, deserialize_with = "spelled_number")]
    pub progress: Option<f64>,
    pub message: Option<String>,
    #[serde(default, deserialize_with = "spelled_number")]
    pub lease_ms: Option<f64>,
}

/// The client method a write comes from.
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum WriteKind {
    Submit,
    Cancel,
    CancelByKey,
    Retry,
    RetryByKey,
    Succeed,
    Complete,
    Fail,
    Progress,
    Heartbeat,
}

/// A JS number as `lib/store.js` writes it: JSON numbers as they are, and
/// the values JSON cannot carry as their `String(n)` ("NaN", "Infinity").
fn spelled_number<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<f64>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Number {
        Finite(f64),
        Spelled(String),
    }
    match Option::<Number>::deserialize(d)? {
        None => Ok(None),
        Some(Number::Finite(v)) => Ok(Some(v)),
        Some(Number::Spelled(text)) => match text.as_str() {
            "NaN" => Ok(Some(f64::NAN)),
            "Infinity" => Ok(Some(f64::INFINITY)),
            "-Infinity" => Ok(Some(f64::NEG_INFINITY)),
            other => Err(serde::de::Error::custom(format!("not a number: {other}"))),
        },
    }
}

/// `open` as `lib/store.js` names the modes: absent = migrate, `"existing"`,
/// `"own"` (`OpenMode::MigrateOwn`).
fn open_mode(open: Option<String>) -> Result<OpenMode> {
    match open.as_deref() {
        None => Ok(OpenMode::Migrate),
        Some("existing") => Ok(OpenMode::Existing),
        Some("own") => Ok(OpenMode::MigrateOwn),
        Some(other) => Err(napi::Error::from_reason(format!(
            "unknown open mode {other}"
        ))),
    }
}

/// Decode the writes `lib/store.js` sent, one by one: a write that does not
/// decode is refused alone (an `Invalid` error in its place), so one caller's
/// bad argument never fails the other writes of its tick.
fn writes(text: &str) -> Result<Vec<cairnq_core::Result<Write>>> {
    let each: Vec<&RawValue> = serde_json::from_str(text)
        .map_err(|e| napi::Error::from_reason(format!("malformed writes: {e}")))?;
    Ok(each
        .into_iter()
        .map(|one| decode_write(one.get()))
        .collect())
}

pub(crate) fn decode_write(text: &str) -> cairnq_core::Result<Write> {
    let args: WriteArgs = serde_path_to_error::deserialize(
        &mut serde_json::Deserializer::from_str(text),
    )
    .map_err(|e| {
        // The field's path names the argument; the position inside
        // the JS layer's encoding would only confuse.
        let inner = e.inner();
        let at = format!(" at line {} column {}", inner.line(), inner.column());
        let detail = inner.to_string();
        let detail = detail.strip_suffix(&at).unwrap_or(&detail);
        CoreError::Invalid(format!("{}: {detail}", e.path()))
    })?;
    Write::try_from(args)
}

/// Replies as one JSON array, in order: the row (`null` for no row), or the
/// error reason (an object with a `cairnq` key) that `lib/errors.js` decodes.
fn replies(answers: Vec<WriteAnswer>) -> String {
    let mut out = String::from("[");
    for (i, answer) in answers.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        match answer {
            Ok(Some(task)) => out.push_str(&task.to_json()),
            Ok(None) => out.push_str("null"),
            Err(err) => out.push_str(&reason(&err)),
        }
    }
    out.push(']');
    out
}

impl From<ListArgs> for ListInput {
    fn from(args: ListArgs) -> Self {
        ListInput {
            status: args.status,
            queue: args.queue,
            name: args.name,
            root_id: args.root_id,
            correlation_id: args.correlation_id,
            limit: args.limit,
            offset: args.offset,
            bodies: args.bodies,
        }
    }
}

impl TryFrom<ClaimArgs> for ClaimRequest {
    type Error = CoreError;

    fn try_from(args: ClaimArgs) -> cairnq_core::Result<Self> {
        Ok(ClaimRequest {
            queues: args.queues,
            worker_id: args.worker_id,
            lease_ms: lease(args.lease_ms)?,
            names: args.names,
        })
    }
}

impl From<SubmitArgs> for SubmitInput {
    fn from(args: SubmitArgs) -> Self {
        SubmitInput {
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
            debounce_ms: args.debounce_ms,
            max_delay_ms: args.max_delay_ms,
        }
    }
}

impl TryFrom<WriteArgs> for Write {
    type Error = CoreError;

    fn try_from(args: WriteArgs) -> cairnq_core::Result<Write> {
        let missing =
            |field: &str| CoreError::Invalid(format!("write {:?}: {field} is required", args.kind));
        let task_id = || args.task_id.clone().ok_or_else(|| missing("taskId"));
        let key = || args.key.clone().ok_or_else(|| missing("key"));
        let owned = || -> cairnq_core::Result<HeldTask> {
            Ok(HeldTask {
                task_id: task_id()?,
                worker_id: args.worker_id.clone().ok_or_else(|| missing("workerId"))?,
            })
        };
        Ok(match args.kind {
            WriteKind::Submit => {
                Write::Submit(args.submit.ok_or_else(|| missing("submit"))?.into())
            }
            WriteKind::Cancel => Write::Cancel(Target::Id(task_id()?)),
            WriteKind::CancelByKey => Write::Cancel(Target::Key(key()?)),
            WriteKind::Retry => {
                Write::Retry(Target::Id(task_id()?), args.reset_attempt == Some(true))
            }
            WriteKind::RetryByKey => {
                Write::Retry(Target::Key(key()?), args.reset_attempt == Some(true))
            }
            WriteKind::Succeed => Write::Finish(owned()?, Outcome::Succeed { result: args.json }),
            WriteKind::Complete => Write::Finish(owned()?, Outcome::Complete { result: args.json }),
            WriteKind::Fail => Write::Finish(
                owned()?,
                Outcome::Fail {
                    error: args.json.clone().ok_or_else(|| missing("json"))?,
                    retryable: args.retryable != Some(false),
                    delay_ms: stored_ms_or("delayMs", args.delay_ms, 0)?.max(0),
                },
            ),
            WriteKind::Progress => Write::Progress(owned()?, args.progress, args.message),
            WriteKind::Heartbeat => Write::Heartbeat(owned()?, lease(args.lease_ms)?),
        })
    }
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
    /// false: rows without payload, result, error and metadata.
    pub bodies: Option<bool>,
}

#[napi(object)]
pub struct PurgeArgs {
    pub older_than_ms: Option<f64>,
    pub queue: Option<String>,
    pub status: Option<String>,
    pub name: Option<String>,
    pub limit: Option<f64>,
}

impl From<PurgeArgs> for PurgeInput {
    fn from(args: PurgeArgs) -> Self {
        PurgeInput {
            older_than_ms: args.older_than_ms,
            queue: args.queue,
            status: args.status,
            name: args.name,
            limit: args.limit,
        }
    }
}

#[napi(object)]
pub struct WaitArgs {
    pub timeout_ms: Option<f64>,
    pub poll_ms: Option<f64>,
    pub max_poll_ms: Option<f64>,
}

impl From<WaitArgs> for WaitOptions {
    fn from(args: WaitArgs) -> Self {
        WaitOptions {
            timeout_ms: args.timeout_ms,
            poll_ms: args.poll_ms,
            max_poll_ms: args.max_poll_ms,
        }
    }
}

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

fn lease(ms: Option<f64>) -> cairnq_core::Result<i64> {
    stored_ms_or("leaseMs", ms, DEFAULT_LEASE_MS)
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
    pub fn sqlite(
        path: String,
        busy_timeout_ms: Option<f64>,
        open: Option<String>,
    ) -> Result<NativeStore> {
        Ok(NativeStore {
            inner: Store::sqlite_with(&path, busy_timeout_ms, open_mode(open)?),
            executor: None,
        })
    }

    #[napi(factory)]
    pub fn postgres(
        dsn: String,
        max: Option<f64>,
        schema: Option<String>,
        open: Option<String>,
    ) -> Result<NativeStore> {
        Store::postgres_with(&dsn, max, schema, open_mode(open)?)
            .map(|inner| NativeStore {
                inner,
                executor: None,
            })
            .js()
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

    /// The writes of one JS tick (a JSON array), sharing a commit; the
    /// replies as one JSON array, in order.
    #[napi]
    pub async fn write_many(&self, writes_json: String) -> Result<String> {
        let writes = writes(&writes_json)?;
        Ok(replies(self.inner.write_group(writes).await))
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
    pub async fn list(&self, args: ListArgs) -> Result<String> {
        let input = ListInput::from(args);
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
    pub async fn purge(&self, args: PurgeArgs) -> Result<Vec<String>> {
        self.inner.purge(args.into()).await.js()
    }

    /// How many tasks `purge(args)` would delete now (at most its limit).
    #[napi]
    pub async fn purge_count(&self, args: PurgeArgs) -> Result<i64> {
        self.inner.purge_count(args.into()).await.js()
    }

    #[napi]
    pub async fn stats(&self, queue: Option<String>) -> Result<String> {
        self.inner.stats(queue).await.map(|s| stats_json(&s)).js()
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
    pub async fn wait(&self, task_id: String, opts: WaitArgs) -> Result<String> {
        wait::wait(&self.inner, Target::Id(task_id), opts.into())
            .await
            .map(row)
            .js()
    }

    #[napi]
    pub async fn wait_by_key(&self, key: String, opts: WaitArgs) -> Result<String> {
        wait::wait(&self.inner, Target::Key(key), opts.into())
            .await
            .map(row)
            .js()
    }

    #[napi]
    pub async fn claim(&self, args: ClaimArgs) -> Result<String> {
        let limit = args.limit.map_or(1, |v| v as i64);
        let request = ClaimRequest::try_from(args).js()?;
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
            .heartbeat_batch(task_ids, worker_id, lease(lease_ms).js()?)
            .await
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
    pub fn open_claim_session(&self, args: ClaimArgs) -> Result<NativeClaimSession> {
        let request = ClaimRequest::try_from(args).js()?;
        let backend = self.inner.backend().clone();
        let session = napi::bindgen_prelude::within_runtime_if_available(move || {
            ClaimSession::open(backend, request, &tokio::runtime::Handle::current())
        });
        Ok(NativeClaimSession {
            session: tokio::sync::Mutex::new(Some(session)),
        })
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
