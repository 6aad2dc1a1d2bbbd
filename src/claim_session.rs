//! `store.claimSession`: a claim transaction whose draws the JS plan makes
//! one by one.

use cairnq_core::store::{ClaimInput, ClaimSession, Draw};
use cairnq_core::task::tasks_to_json;
use napi_derive::napi;

use crate::errors::IntoJs;
use crate::store::NativeStore;
use napi::Result;

/// `store.claimSession(input, plan)`: a claim transaction whose draws the JS
/// plan makes one by one.
#[napi]
pub struct NativeClaimSession {
    session: tokio::sync::Mutex<Option<ClaimSession>>,
}

#[napi]
impl NativeStore {
    #[napi]
    pub fn open_claim_session(&self, options_json: String) -> Result<NativeClaimSession> {
        let request = ClaimInput::read(&options_json)
            .and_then(ClaimInput::request)
            .js()?;
        let backend = self.inner.backend().clone();
        let session = napi::bindgen_prelude::within_runtime_if_available(move || {
            ClaimSession::open(backend, request, &tokio::runtime::Handle::current())
        });
        Ok(NativeClaimSession {
            session: tokio::sync::Mutex::new(Some(session)),
        })
    }
}

#[napi]
impl NativeClaimSession {
    /// True once the transaction is open; false when there was nothing to claim.
    #[napi]
    pub async fn opened(&self) -> Result<bool> {
        let mut slot = self.session.lock().await;
        let session = slot
            .as_mut()
            .ok_or_else(|| napi::Error::from_reason("the claim session has ended"))?;
        session.opened().await.js()
    }

    #[napi]
    pub async fn draw(&self, names: Option<Vec<String>>, limit: f64) -> Result<String> {
        let slot = self.session.lock().await;
        let session = slot
            .as_ref()
            .ok_or_else(|| napi::Error::from_reason("the claim session has ended"))?;
        let draw = Draw {
            names,
            limit: limit as i64,
            flow: false,
        };
        session
            .draw(draw)
            .await
            .map(|tasks| tasks_to_json(&tasks))
            .js()
    }

    /// Commit (`keep`) or roll back the draws.
    #[napi]
    pub async fn finish(&self, keep: bool) -> Result<()> {
        match self.session.lock().await.take() {
            Some(session) => session.finish(keep).await.js(),
            None => Ok(()),
        }
    }
}
