//! The application's `PgExecutor` as the core's `Executor`: each request
//! crosses to `lib/executor.js` as one JSON text through a thread-safe
//! function, whose promise resolves to the answer's JSON text. The store
//! methods here are the JS side's way back in: notifications of the
//! executor's LISTEN.

use std::sync::Arc;

use async_trait::async_trait;
use cairnq_core::store::postgres::executor::{Executor, ExecutorTransport};
use cairnq_core::store::postgres::PostgresBackend;
use cairnq_core::store::StoreOptions;
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

/// A JS function as the core's `Executor`: the application's `PgExecutor`
/// (`lib/executor.js`) or a session it holds (`lib/submit-in.js`).
pub struct JsExecutor {
    pub call: ExecutorFn,
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

#[napi]
impl NativeStore {
    /// A Postgres store running every statement through `call` (`lib/executor.js`).
    #[napi(factory)]
    pub fn executor(call: ExecutorFn, options_json: String) -> Result<NativeStore> {
        let options = StoreOptions::read(
            "PostgresStore options",
            &options_json,
            &StoreOptions::POSTGRES_KEYS,
        )
        .js()?;
        let backend = Arc::new(PostgresBackend::<ExecutorTransport>::over_executor(
            Arc::new(JsExecutor { call }),
            options.schema,
        ));
        Ok(NativeStore {
            inner: Store::new(backend.clone()),
            propagate_baggage: options.propagate_baggage,
            executor: Some(backend),
        })
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
}
