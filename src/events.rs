//! `NativeEvents`: one `client.events` subscription (docs/api.md,
//! "Events"). The options are read at once (a bad one throws); pages are
//! the core's (`cairnq_core::events::Subscription`), one JSON array each.

use std::sync::Arc;

use cairnq_core::events::{EventsOptions, Subscription};
use napi::Result;
use napi_derive::napi;

use crate::errors::IntoJs;
use crate::store::NativeStore;

#[napi]
pub struct NativeEvents {
    inner: Arc<Subscription>,
}

#[napi]
impl NativeStore {
    /// A subscription of `options` (JSON): refused here when they are bad.
    #[napi]
    pub fn events(&self, options_json: String) -> Result<NativeEvents> {
        let options = EventsOptions::read(&options_json).js()?;
        Ok(NativeEvents {
            inner: Arc::new(Subscription::new(self.inner.clone(), options)),
        })
    }
}

#[napi]
impl NativeEvents {
    /// Create the tables on first use and take the start position.
    #[napi]
    pub async fn start(&self) -> Result<()> {
        self.inner.start().await.js()
    }

    /// The next events as a JSON array, once there are any; null once closed.
    #[napi]
    pub async fn next(&self) -> Result<Option<String>> {
        self.inner.next_page().await.js()
    }

    /// End the subscription: a pending `next` answers null.
    #[napi]
    pub fn close(&self) {
        self.inner.close()
    }
}
