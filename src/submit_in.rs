//! `submitIn`/`submitManyIn`: submits the caller's own connection writes
//! inside its transaction. The core checks them first (nothing reaches the
//! caller's connection before every check passed) and knows the statements.

use std::sync::Arc;

use cairnq_core::store::postgres::submit_in::submit_in;
use cairnq_core::store::sqlite::submit_in::submit_in_statements;
use cairnq_core::store::submit_in::{submit_in_ops, submit_many_in_ops};
use cairnq_core::store::{refs_to_json, WriteOp};
use cairnq_core::wire::read_items;
use napi::Result;
use napi_derive::napi;

use crate::errors::IntoJs;
use crate::executor::{ExecutorFn, JsExecutor};
use crate::store::NativeStore;

/// The ops of `submitIn` (`many` false: one submit's options) or of
/// `submitManyIn` (`many` true: its items).
fn ops_of(many: bool, json: &str) -> Result<Vec<WriteOp>> {
    if many {
        submit_many_in_ops(read_items(json).js()?).js()
    } else {
        submit_in_ops(json).js()
    }
}

/// Postgres: the submits through `session` (`lib/submit-in.js` answers its
/// requests on the caller's transaction, as `lib/executor.js` does); their
/// task refs as a JSON array.
#[napi]
pub async fn submit_in_postgres(session: ExecutorFn, many: bool, json: String) -> Result<String> {
    let ops = ops_of(many, &json)?;
    let refs = submit_in(Arc::new(JsExecutor { call: session }), ops)
        .await
        .js()?;
    Ok(refs_to_json(&refs))
}

#[napi]
impl NativeStore {
    /// SQLite: the statement and values the caller's connection runs, checked
    /// and built on the calling thread (`submit_in_statements`), at the
    /// store clock's time.
    #[napi]
    pub fn submit_in_sqlite(&self, many: bool, json: String) -> Result<String> {
        let now = self.inner.clock().now_ms();
        submit_in_statements(ops_of(many, &json)?, many, now).js()
    }
}
