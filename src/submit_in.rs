//! `submitIn`/`submitManyIn`: submits the caller's own connection writes
//! inside its transaction. The core checks them first (nothing reaches the
//! caller's connection before every check passed) and knows the statements.

use std::sync::Arc;

use cairnq_core::store::postgres::submit_in::submit_in;
use cairnq_core::store::sqlite::submit_in::submit_in as submit_in_on_sqlite;
use cairnq_core::store::submit_in::{submit_in_ops, submit_many_in_ops};
use cairnq_core::store::{refs_to_json, WriteOp};
use cairnq_core::wire::read_items;
use napi::bindgen_prelude::Function;
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
    /// SQLite: the submits run on the calling thread through `run`, which
    /// `lib/submit-in.js` answers on the caller's connection, synchronously,
    /// with the rows as JSON text (`sqlite::submit_in::RunOnCaller`), or with
    /// `null` when the driver threw (the JS side then throws the driver's own
    /// error), at the store clock's time. Their task refs as a JSON array.
    #[napi]
    pub fn submit_in_sqlite(
        &self,
        run: Function<'_, String, Option<String>>,
        many: bool,
        json: String,
    ) -> Result<String> {
        let ops = ops_of(many, &json)?;
        let mut on_caller = |request: String| match run.call(request) {
            Ok(Some(rows)) => Ok(rows),
            Ok(None) => Err(cairnq_core::Error::Connection(
                "your SQLite connection refused a statement of submitIn".into(),
            )),
            Err(e) => Err(cairnq_core::Error::Connection(e.reason)),
        };
        let now = self.inner.clock().now_ms();
        let refs = submit_in_on_sqlite(ops, many, now, &mut on_caller).js()?;
        Ok(refs_to_json(&refs))
    }
}
