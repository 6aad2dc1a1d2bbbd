//! Where the core's reports of rows it cannot read go (docs/security.md,
//! "Rows written by others"): a JS function, weak, so it keeps no process
//! alive.

use std::sync::Arc;

use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::Status;
use napi_derive::napi;

/// `report(message)` hears each row once per process (the first function
/// given stays).
#[napi]
pub fn on_bad_row(report: ThreadsafeFunction<String, (), String, Status, false, true>) {
    cairnq_core::store::bad_rows::set_sink(Arc::new(move |message| {
        report.call(message, ThreadsafeFunctionCallMode::NonBlocking);
    }));
}
