//! Node-API bindings: thin wrappers that hand JS calls to `cairnq-core`.
//!
//! Values cross as JSON text (rows, payloads, results) because one
//! `JSON.parse` on the JS side is far cheaper than building objects through
//! N-API. Errors cross as a JSON object in the message that `lib/errors.js`
//! turns into the matching error class.

mod backpressure;
mod errors;
mod retention;
mod store;
// After `store`: its `#[napi] impl NativeStore` needs the struct seen first.
mod executor;
mod watch;
mod worker;

pub use backpressure::NativeGate;
pub use executor::quote_schema;
pub use retention::NativeRetention;
pub use store::NativeStore;
pub use watch::{NativeWatch, DEFAULT_WATCH_POLL_MS};
pub use worker::{NativeContext, NativeWorker};
