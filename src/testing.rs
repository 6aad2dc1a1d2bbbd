//! cairnq/testing's native half (docs/api.md, "Testing"): a test store's
//! clock, read and moved, and a drain's wait for a worker with nothing to
//! do. Every check and decision is the core's (`cairnq_core::clock`,
//! `cairnq_core::worker::until_quiet`).

use cairnq_core::clock::step_of;
use cairnq_core::worker::drain_max;
use napi::Result;
use napi_derive::napi;

use crate::errors::IntoJs;
use crate::store::NativeStore;
use crate::worker::NativeWorker;

/// How a drain ended (`Drained`).
#[napi(object)]
pub struct DrainedObject {
    pub tasks: f64,
    pub limit_reached: bool,
}

#[napi]
impl NativeStore {
    /// Epoch milliseconds on the store's clock.
    #[napi]
    pub fn clock_now(&self) -> f64 {
        self.inner.clock().now_ms() as f64
    }

    /// Whether the store runs on a test clock.
    #[napi]
    pub fn has_test_clock(&self) -> bool {
        self.inner.clock().is_test()
    }

    /// Move the test clock forward (`{"ms": …}`); its time after.
    #[napi]
    pub fn advance_clock(&self, options_json: String) -> Result<f64> {
        let ms = step_of(&options_json).js()?;
        self.inner.advance_clock(ms).map(|now| now as f64).js()
    }
}

/// `drain(options)`'s `max`, checked before anything runs.
#[napi]
pub fn drain_limit(options_json: String) -> Result<f64> {
    drain_max(&options_json).map(|max| max as f64).js()
}

#[napi]
impl NativeWorker {
    /// Resolves when the running worker has nothing to do now, or has
    /// run more than `max` tasks since the call.
    #[napi]
    pub async fn until_quiet(&self, max: f64) -> Result<DrainedObject> {
        let drained = self.core().until_quiet(max as u64).await.js()?;
        Ok(DrainedObject {
            tasks: drained.tasks as f64,
            limit_reached: drained.limit_reached,
        })
    }
}
