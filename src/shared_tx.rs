//! The transaction `completeIn` shares with its caller (Postgres stores,
//! DSN or executor alike): opened, queried in, settled in or aborted.

use cairnq_core::store::HeldTask;
use napi_derive::napi;

use crate::errors::IntoJs;
use crate::store::NativeStore;
use napi::Result;

/// What `completeIn` opened: `session` is the executor's transaction id
/// when the executor holds it.
#[napi(object)]
pub struct SharedTxObject {
    pub id: f64,
    pub session: Option<f64>,
}

#[napi]
impl NativeStore {
    #[napi]
    pub async fn shared_tx_open(&self) -> Result<SharedTxObject> {
        let tx = self.inner.backend().shared_tx_open().await.js()?;
        Ok(SharedTxObject {
            id: tx.id as f64,
            session: tx.session.map(|s| s as f64),
        })
    }

    /// One statement of the caller in the shared transaction; rows as JSON.
    /// Without values: SQL of any number of statements (`session.exec`).
    #[napi]
    pub async fn shared_tx_query(
        &self,
        id: f64,
        sql: String,
        values_json: Option<String>,
    ) -> Result<String> {
        self.inner
            .backend()
            .shared_tx_query(id as u64, sql, values_json)
            .await
            .js()
    }

    /// Settle the task in the shared transaction and commit; the row as JSON.
    #[napi]
    pub async fn shared_tx_complete(
        &self,
        id: f64,
        task_id: String,
        worker_id: String,
        result_json: Option<String>,
    ) -> Result<String> {
        let owned = HeldTask { task_id, worker_id };
        self.inner
            .backend()
            .shared_tx_complete(id as u64, owned, result_json)
            .await
            .map(|task| task.to_json())
            .js()
    }

    #[napi]
    pub async fn shared_tx_abort(&self, id: f64) -> Result<()> {
        self.inner.backend().shared_tx_abort(id as u64).await.js()
    }
}
