//! Node-API bindings: thin wrappers that hand JS calls to `cairnq-core`.
//!
//! Values cross as JSON text (rows, payloads, results) because one
//! `JSON.parse` on the JS side is far cheaper than building objects through
//! N-API. Errors cross as a JSON object in the message that `lib/errors.js`
//! turns into the matching error class.

mod backpressure;
mod bad_rows;
mod bulk;
mod errors;
mod fetch;
mod retention;
mod store;
mod writes;
// After `store`: their `#[napi] impl NativeStore` needs the struct seen first.
mod claim_session;
mod events;
mod executor;
mod foreign;
mod pauses;
mod schedules;
mod shared_tx;
mod statuses;
mod submit_in;
mod watch;
mod worker;
// After `worker` and `store`: it adds methods to their structs.
mod testing;
// After `worker` and `store`: it adds methods to their structs.
mod steps;
// After `store` and `worker`, whose structs its constructor and methods take.
mod metrics;

pub use backpressure::NativeGate;
pub use bad_rows::on_bad_row;
pub use events::NativeEvents;
pub use executor::{dsn_fields, quote_schema};
pub use metrics::NativeMetrics;
pub use retention::NativeRetention;
pub use statuses::task_statuses;
pub use store::NativeStore;
pub use submit_in::submit_in_postgres;
pub use testing::drain_limit;
pub use watch::{NativeWatch, DEFAULT_WATCH_POLL_MS};
pub use worker::{NativeContext, NativeWorker};

/// One runtime thread beside the JS thread, unless `TOKIO_WORKER_THREADS`
/// says otherwise. The runtime never waits on a lock (a write that finds the
/// database locked moves to a thread of its own; reads have theirs), so a
/// second runtime thread buys no throughput. It costs latency instead: a task
/// woken from outside (a commit's file event, a settle from the JS thread)
/// lands on whichever thread the scheduler picks, and the hand-offs between
/// the two cost a `call()` across processes about a tenth of its time.
#[napi_derive::module_init]
fn init() {
    let mut runtime = tokio::runtime::Builder::new_multi_thread();
    if std::env::var_os("TOKIO_WORKER_THREADS").is_none() {
        runtime.worker_threads(1);
    }
    let runtime = runtime
        .thread_name("cairnq-runtime")
        .enable_all()
        .build()
        .expect("the async runtime starts");
    napi::bindgen_prelude::create_custom_tokio_runtime(runtime);
}
