//! Manual fetch and settle (`client.fetch`, `complete`, `fail`,
//! `extendLease`): conversions only; `cairnq_core::fetch` decides.

use cairnq_core::fetch::{fetch, lease_of, settle, FetchInput, Settle};
use cairnq_core::store::{fail_outcome, HeldTask, Outcome};
use cairnq_core::task::tasks_to_json;
use napi::Result;
use napi_derive::napi;

use crate::errors::IntoJs;
use crate::store::{row, NativeStore};

fn held(task_id: String, worker_id: String) -> HeldTask {
    HeldTask { task_id, worker_id }
}

#[napi]
impl NativeStore {
    /// The tasks claimed, as a JSON array of rows.
    #[napi]
    pub async fn fetch(&self, options_json: String) -> Result<String> {
        let input = FetchInput::read(&options_json).js()?;
        let tasks = fetch(&self.inner, input).await.js()?;
        Ok(tasks_to_json(&tasks))
    }

    #[napi]
    pub async fn complete_fetched(
        &self,
        task_id: String,
        worker_id: String,
        result_json: Option<String>,
    ) -> Result<String> {
        let how = Settle::Finish(Outcome::Complete {
            result: result_json,
        });
        settle(&self.inner, held(task_id, worker_id), how)
            .await
            .map(row)
            .js()
    }

    #[napi]
    pub async fn fail_fetched(
        &self,
        task_id: String,
        worker_id: String,
        envelope_json: String,
        retryable: bool,
        delay_ms: Option<f64>,
    ) -> Result<String> {
        let how = Settle::Finish(fail_outcome(envelope_json, retryable, delay_ms).js()?);
        settle(&self.inner, held(task_id, worker_id), how)
            .await
            .map(row)
            .js()
    }

    #[napi]
    pub async fn extend_fetched(
        &self,
        task_id: String,
        worker_id: String,
        lease_ms: Option<f64>,
    ) -> Result<String> {
        let how = Settle::ExtendLease(lease_of(lease_ms).js()?);
        settle(&self.inner, held(task_id, worker_id), how)
            .await
            .map(row)
            .js()
    }
}
