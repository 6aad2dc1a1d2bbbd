//! `NativeMetrics`: the Prometheus exporter of one store (plus the workers
//! handed to it), behind `/metrics` and `cairnq metrics` (lib/metrics.js).

use std::sync::Arc;

use cairnq_core::metrics::Exporter;
use napi::Result;
use napi_derive::napi;

use crate::errors::IntoJs;
use crate::store::NativeStore;
use crate::worker::NativeWorker;

#[napi]
pub struct NativeMetrics {
    exporter: Arc<Exporter>,
}

#[napi]
impl NativeMetrics {
    #[napi(constructor)]
    pub fn new(store: &NativeStore) -> Self {
        NativeMetrics {
            exporter: Arc::new(Exporter::new(store.inner.clone())),
        }
    }

    /// Show `worker`'s queue waits and run times too.
    #[napi]
    pub fn add_worker(&self, worker: &NativeWorker) {
        self.exporter.add_worker(worker.core().clone());
    }

    /// The Prometheus text exposition, read now.
    #[napi]
    pub async fn render(&self) -> Result<String> {
        self.exporter.render().await.js()
    }
}
