//! `NativeRetention`: the sweeper behind `RetentionSweeper`; its schedule runs
//! on a Rust timer, which never keeps the Node process alive.

use std::sync::Arc;

use cairnq_core::retention::{Cutoffs, Purger, RetentionOptions, RetentionSweeper};
use cairnq_core::store::PurgeInput;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;

use crate::errors::{reason, IntoJs};
use crate::executor::ExecutorFn;
use crate::foreign::ForeignStore;
use crate::store::NativeStore;
use napi::Result;

/// `lib/housekeeping.js` sends the numeric form as `olderThanMs` and the map
/// and list forms as `rules` (the map's entries in key order).
#[napi(object)]
pub struct RetentionArgs {
    pub older_than_ms: Option<f64>,
    pub rules: Option<Vec<RuleArgs>>,
    pub interval_ms: Option<f64>,
    pub limit: Option<f64>,
}

#[napi(object)]
pub struct RuleArgs {
    pub older_than_ms: Option<f64>,
    pub queue: Option<String>,
    pub status: Option<String>,
    pub name: Option<String>,
}

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
        opts: RetentionArgs,
        on_error: Option<ErrorCallback>,
    ) -> Result<Self> {
        NativeRetention::over(store.inner.clone(), opts, on_error)
    }

    /// A sweeper over a store that is not this package's own, whose `purge`
    /// `call` reaches (`src/foreign.rs`).
    #[napi(factory)]
    pub fn foreign(
        call: ExecutorFn,
        opts: RetentionArgs,
        on_error: Option<ErrorCallback>,
    ) -> Result<Self> {
        NativeRetention::over(Arc::new(ForeignStore::new(call)), opts, on_error)
    }

    fn over(
        store: Arc<dyn Purger>,
        opts: RetentionArgs,
        on_error: Option<ErrorCallback>,
    ) -> Result<Self> {
        let hook = on_error.map(|callback| {
            let callback = Arc::new(callback);
            Arc::new(move |err| {
                callback.call(reason(&err), ThreadsafeFunctionCallMode::NonBlocking);
            }) as Arc<dyn Fn(cairnq_core::Error) + Send + Sync>
        });
        let cutoffs = match opts.rules {
            None => Cutoffs::Uniform(opts.older_than_ms),
            Some(rules) => Cutoffs::Rules(
                rules
                    .into_iter()
                    .map(|rule| PurgeInput {
                        older_than_ms: rule.older_than_ms,
                        queue: rule.queue,
                        status: rule.status,
                        name: rule.name,
                        limit: None,
                    })
                    .collect(),
            ),
        };
        let options = RetentionOptions {
            older_than_ms: cutoffs,
            interval_ms: opts.interval_ms,
            limit: opts.limit,
        };
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
