//! `NativeGate`: the `QueueDepthGate` class for callers that hold one directly.

use cairnq_core::store::backpressure::QueueDepthGate;
use napi::Result;
use napi_derive::napi;

use crate::errors::IntoJs;
use crate::store::{BackpressureArgs, NativeStore};

#[napi]
pub struct NativeGate {
    gate: QueueDepthGate,
}

#[napi]
impl NativeGate {
    #[napi(constructor)]
    pub fn new(store: &NativeStore, opts: BackpressureArgs) -> Result<Self> {
        let gate = QueueDepthGate::new(store.inner.backend().clone(), opts.into()).js()?;
        Ok(NativeGate { gate })
    }

    #[napi]
    pub fn limit_for(&self, queue: String) -> Option<i64> {
        self.gate.limit_for(&queue)
    }

    #[napi]
    pub async fn acquire(&self, queue: String) -> Result<()> {
        self.gate.acquire(&queue).await.js()
    }
}
