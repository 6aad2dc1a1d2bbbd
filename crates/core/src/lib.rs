//! cairnq's core: the storage protocol, the SQLite and Postgres stores, the
//! client-side orchestration (waits, backpressure, retention) and the worker's
//! scheduler. Nothing here knows about Node; the bindings crate wraps it.

pub mod backoff;
pub mod bulk;
pub mod clock;
pub mod deadletter;
pub mod error;
pub mod events;
pub mod fetch;
pub mod flow;
pub mod followups;
pub mod ids;
pub mod input;
pub mod metrics;
pub mod pauses;
pub mod protocol;
pub mod retention;
pub mod retry;
pub mod schedule;
pub mod signals;
pub mod steps;
pub mod store;
pub mod task;
pub mod timeouts;
pub mod unique;
pub mod wait;
pub mod watch;
pub mod wire;
pub mod worker;

pub use error::{Error, Result};
pub use store::Store;
pub use task::{Status, Task};
