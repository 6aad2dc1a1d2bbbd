//! Stores that are not this package's own (a store wrapped for metrics, a
//! test double), reached through their JS methods: `lib/housekeeping.js`
//! hands a function that calls `store[method](...args)` and answers the
//! value as JSON. The sweeper's and gate's timers, batches and stop stay
//! the core's.

use async_trait::async_trait;
use cairnq_core::retention::Purger;
use cairnq_core::store::backpressure::DepthProbe;
use cairnq_core::store::PurgeFilter;
use cairnq_core::{Error, Result};
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use crate::executor::{call_js, ExecutorFn};

pub struct ForeignStore {
    call: ExecutorFn,
}

impl ForeignStore {
    pub fn new(call: ExecutorFn) -> ForeignStore {
        ForeignStore { call }
    }

    /// `store[method](...args)`, its value decoded as `T`.
    async fn method<T: DeserializeOwned>(&self, method: &str, args: Value) -> Result<T> {
        let request = json!({"method": method, "args": args}).to_string();
        let answer = call_js(&self.call, request).await?;
        serde_json::from_str(&answer).map_err(|_| {
            Error::Invalid(format!(
                "store.{method} resolved to {answer}, which is not what a TaskStore's {method} returns"
            ))
        })
    }
}

#[async_trait]
impl Purger for ForeignStore {
    async fn purge(&self, filter: PurgeFilter) -> Result<Vec<String>> {
        // A rule's absent filters stay absent, as in `{...rule, limit}`.
        let mut input = serde_json::Map::new();
        match filter.keep_last {
            Some(keep) => input.insert("keepLast".into(), json!(keep)),
            None => input.insert("olderThanMs".into(), json!(filter.older_than_ms)),
        };
        let filters = [
            ("queue", filter.queue),
            ("status", filter.status.map(|s| s.as_str().to_string())),
            ("name", filter.name),
        ];
        for (key, value) in filters {
            if let Some(value) = value {
                input.insert(key.into(), json!(value));
            }
        }
        input.insert("limit".into(), json!(filter.limit));
        self.method("purge", json!([Value::Object(input)])).await
    }
}

#[async_trait]
impl DepthProbe for ForeignStore {
    async fn queue_depth(&self, queue: String, max_depth: i64) -> Result<i64> {
        let headroom: f64 = self.method("queueDepth", json!([queue, max_depth])).await?;
        Ok(headroom as i64)
    }
}
