//! `NativeStore`'s queue pause methods (docs/api.md, "Queue pauses"): every
//! check and decision is the core's (`cairnq_core::pauses`).

use cairnq_core::pauses::queues_to_json;
use napi::Result;
use napi_derive::napi;

use crate::errors::IntoJs;
use crate::store::NativeStore;

#[napi]
impl NativeStore {
    /// Whether this call paused `queue` (false: it was paused already).
    #[napi]
    pub async fn pause_queue(&self, queue: String) -> Result<bool> {
        self.inner.pause_queue(&queue).await.js()
    }

    /// Whether `queue` was paused.
    #[napi]
    pub async fn resume_queue(&self, queue: String) -> Result<bool> {
        self.inner.resume_queue(&queue).await.js()
    }

    /// Every queue with a task or a pause, by name, as a JSON array.
    #[napi]
    pub async fn queues(&self) -> Result<String> {
        self.inner
            .queues()
            .await
            .map(|queues| queues_to_json(&queues))
            .js()
    }
}
