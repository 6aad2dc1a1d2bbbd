//! `NativeRetention`: the sweeper behind `RetentionSweeper`; its schedule runs
//! on a Rust timer, which never keeps the Node process alive.

use std::sync::Arc;

use cairnq_core::retention::{Purger, RetentionOptions, RetentionSweeper};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;

use crate::errors::{reason, IntoJs};
use crate::executor::ExecutorFn;
use crate::foreign::ForeignStore;
use crate::store::NativeStore;
use napi::Result;

/// `onError(reason)`: the reason is the encoded error `lib/errors.js` decodes.
type ErrorCallback = ThreadsafeFunction<String, (), String, napi::Status, false, true>;

#[napi]
pub struct NativeRetention {
    sweeper: Arc<RetentionSweeper>,
}

#[napi]
impl NativeRetention {
    #[napi(constructor)]
    pub fn new(
        store: &NativeStore,
        options_json: String,
        on_error: Option<ErrorCallback>,
    ) -> Result<Self> {
        NativeRetention::over(store.inner.clone(), &options_json, on_error)
    }

    /// A sweeper over a store that is not this package's own, whose `purge`
    /// `call` reaches (`src/foreign.rs`).
    #[napi(factory)]
    pub fn foreign(
        call: ExecutorFn,
        options_json: String,
        on_error: Option<ErrorCallback>,
    ) -> Result<Self> {
        NativeRetention::over(Arc::new(ForeignStore::new(call)), &options_json, on_error)
    }

    fn over(
        store: Arc<dyn Purger>,
        options_json: &str,
        on_error: Option<ErrorCallback>,
    ) -> Result<Self> {
        let hook = on_error.map(|callback| {
            let callback = Arc::new(callback);
            Arc::new(move |err| {
                callback.call(reason(&err), ThreadsafeFunctionCallMode::NonBlocking);
            }) as Arc<dyn Fn(cairnq_core::Error) + Send + Sync>
        });
        let options = RetentionOptions::read(options_json).js()?;
        let sweeper = RetentionSweeper::new(store, options, hook).js()?;
        Ok(NativeRetention {
            sweeper: Arc::new(sweeper),
        })
    }

    #[napi]
    pub fn start(&self) {
        let sweeper = self.sweeper.clone();
        napi::bindgen_prelude::within_runtime_if_available(move || {
            sweeper.start(&tokio::runtime::Handle::current());
        });
    }

    #[napi]
    pub async fn stop(&self) {
        self.sweeper.stop().await
    }

    #[napi]
    pub async fn sweep(&self) -> Result<u32> {
        self.sweeper.sweep().await.map(|n| n as u32).js()
    }
}
