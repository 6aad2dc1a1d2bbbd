//! `NativeGate`: the `QueueDepthGate` class for callers that hold one
//! directly, over a store of this package or any object with `queueDepth`.

use std::sync::Arc;

use cairnq_core::store::backpressure::{BackpressureOptions, QueueDepthGate};
use napi::Result;
use napi_derive::napi;

use crate::errors::IntoJs;
use crate::executor::ExecutorFn;
use crate::foreign::ForeignStore;
use crate::store::NativeStore;

#[napi]
pub struct NativeGate {
    gate: QueueDepthGate,
}

#[napi]
impl NativeGate {
    #[napi(constructor)]
    pub fn new(store: &NativeStore, options_json: String) -> Result<Self> {
        let probe = Arc::new(store.inner.backend().clone());
        let gate =
            QueueDepthGate::new(probe, BackpressureOptions::parse(&options_json).js()?).js()?;
        Ok(NativeGate { gate })
    }

    /// A gate over a store that is not this package's own, whose
    /// `queueDepth` `call` reaches (`src/foreign.rs`).
    #[napi(factory)]
    pub fn foreign(call: ExecutorFn, options_json: String) -> Result<Self> {
        let probe = Arc::new(ForeignStore::new(call));
        let gate =
            QueueDepthGate::new(probe, BackpressureOptions::parse(&options_json).js()?).js()?;
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
