//! `NativeStore`'s retryMany and cancelMany (docs/api.md, "Bulk retry and
//! cancel"): the filter in as JSON text, the page out as JSON text; every
//! check and decision is the core's (`cairnq_core::bulk`).

use cairnq_core::bulk::{BulkOp, BulkRequest};
use napi::Result;
use napi_derive::napi;

use crate::errors::IntoJs;
use crate::store::NativeStore;

impl NativeStore {
    async fn bulk(&self, op: BulkOp, filter_json: &str) -> Result<String> {
        let request = BulkRequest::read(op, filter_json).js()?;
        self.inner
            .bulk(request)
            .await
            .map(|page| page.to_json())
            .js()
    }
}

#[napi]
impl NativeStore {
    /// One page of failed (or canceled) tasks back to the queue: `{count, ids, more, dryRun}`.
    #[napi]
    pub async fn retry_many(&self, filter_json: String) -> Result<String> {
        self.bulk(BulkOp::RetryMany, &filter_json).await
    }

    /// One page of queued and running tasks canceled: `{count, ids, more, dryRun}`.
    #[napi]
    pub async fn cancel_many(&self, filter_json: String) -> Result<String> {
        self.bulk(BulkOp::CancelMany, &filter_json).await
    }
}
