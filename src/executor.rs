//! The application's `PgExecutor` as the core's `Executor`: each request
//! crosses to `lib/executor.js` as one JSON text through a thread-safe
//! function, whose promise resolves to the answer's JSON text. The store
//! methods here are the JS side's way back in: notifications of the
//! executor's LISTEN, and the transaction `completeIn` shares.

use std::sync::Arc;

use async_trait::async_trait;
use cairnq_core::store::postgres::executor::{Executor, ExecutorTransport};
use cairnq_core::store::postgres::PostgresBackend;
use cairnq_core::store::HeldTask;
use cairnq_core::{Error, Store};
use napi::bindgen_prelude::Promise;
use napi::threadsafe_function::ThreadsafeFunction;
use napi_derive::napi;

use crate::errors::IntoJs;
use crate::store::NativeStore;
use napi::Result;

/// `(request JSON) => Promise<answer JSON>`; unref'd: the executor's own
/// connections decide whether the process stays alive.
pub type ExecutorFn =
    ThreadsafeFunction<String, Promise<String>, String, napi::Status, false, true>;

struct JsExecutor {
    call: ExecutorFn,
}

/// One request to a JS function and its answer; a rejection's message is
/// the error's.
pub async fn call_js(call: &ExecutorFn, request: String) -> cairnq_core::Result<String> {
    let failed = |e: napi::Error| Error::Connection(e.reason);
    call.call_async(request)
        .await
        .map_err(failed)?
        .await
        .map_err(failed)
}

#[async_trait]
impl Executor for JsExecutor {
    async fn call(&self, request: String) -> cairnq_core::Result<String> {
        call_js(&self.call, request)
            .await
            .map_err(|e| Error::Connection(format!("the executor failed: {e}")))
    }
}

/// `schema` double-quoted, or the refusal of a name that is not a plain
/// identifier (`createPoolExecutor` checks with it, as a DSN store does).
#[napi]
pub fn quote_schema(schema: String) -> Result<String> {
    cairnq_core::store::postgres::quoted_schema(&schema).js()
}

/// What a connection string resolves to, as JSON text: hosts, ports, user,
/// password, database, options, application_name and sslmode (the DSN
/// table test holds it against node-postgres's own parser).
#[napi]
pub fn dsn_fields(dsn: String) -> Result<String> {
    cairnq_core::store::postgres::dsn_fields(&dsn)
        .map(|fields| fields.to_string())
        .js()
}

/// What `completeIn` opened: `session` is the executor's transaction id
/// when the executor holds it.
#[napi(object)]
pub struct SharedTxObject {
    pub id: f64,
    pub session: Option<f64>,
}

#[napi]
impl NativeStore {
    /// A Postgres store running every statement through `call` (`lib/executor.js`).
    #[napi(factory)]
    pub fn executor(call: ExecutorFn, schema: Option<String>) -> NativeStore {
        let backend = Arc::new(PostgresBackend::<ExecutorTransport>::over_executor(
            Arc::new(JsExecutor { call }),
            schema,
        ));
        NativeStore {
            inner: Store::new(backend.clone()),
            executor: Some(backend),
        }
    }

    /// A notification the executor's `listen` delivered.
    #[napi]
    pub fn notify(&self, channel: String, payload: String) {
        if let Some(backend) = &self.executor {
            backend.wakes().deliver(&channel, &payload);
        }
    }

    /// The executor's LISTEN ended (its `onClose`): retried with backoff.
    #[napi]
    pub fn listen_closed(&self) {
        if let Some(backend) = &self.executor {
            backend.wakes().closed();
        }
    }

    /// Whether push wakeups are live.
    #[napi]
    pub fn listening(&self) -> bool {
        self.executor.as_ref().is_some_and(|b| b.listening())
    }

    #[napi]
    pub async fn shared_tx_open(&self) -> Result<SharedTxObject> {
        let tx = self.inner.backend().shared_tx_open().await.js()?;
        Ok(SharedTxObject {
            id: tx.id as f64,
            session: tx.session.map(|s| s as f64),
        })
    }

    /// One statement of the caller in the shared transaction; rows as JSON.
    /// Without values: SQL of any number of statements (`session.exec`).
    #[napi]
    pub async fn shared_tx_query(
        &self,
        id: f64,
        sql: String,
        values_json: Option<String>,
    ) -> Result<String> {
        self.inner
            .backend()
            .shared_tx_query(id as u64, sql, values_json)
            .await
            .js()
    }

    /// Settle the task in the shared transaction and commit; the row as JSON.
    #[napi]
    pub async fn shared_tx_complete(
        &self,
        id: f64,
        task_id: String,
        worker_id: String,
        result_json: Option<String>,
    ) -> Result<String> {
        let owned = HeldTask { task_id, worker_id };
        self.inner
            .backend()
            .shared_tx_complete(id as u64, owned, result_json)
            .await
            .map(|task| task.to_json())
            .js()
    }

    #[napi]
    pub async fn shared_tx_abort(&self, id: f64) -> Result<()> {
        self.inner.backend().shared_tx_abort(id as u64).await.js()
    }
}
