//! The seam between the worker and whatever runs handlers: the bindings
//! implement it over JS functions; the core never learns what a handler is.

use std::sync::Arc;

use async_trait::async_trait;

use super::call::Call;
use super::context::TaskContext;
use crate::error::Error;

/// Runs handlers on behalf of the worker. The bindings implement it over JS
/// functions; the core never learns what a handler is.
#[async_trait]
pub trait Invoker: Send + Sync + 'static {
    /// Start the handlers of `calls`, one delivery for all of them. Each
    /// call's end comes back through `Worker::settle(call.id, …)`; a late
    /// answer (after a time limit or a shutdown) is ignored there. An error means none of
    /// them could be started.
    fn start(&self, calls: &[Arc<Call>]) -> Result<(), Error>;

    /// Resolve once the thread that runs handlers has executed a no-op. The
    /// worker pings while calls run; an answer later than one heartbeat
    /// interval is reported as `EventLoopBlocked`. The default answers at once.
    async fn ping(&self) {}

    /// A context of a running call has just aborted (once per context; its
    /// `abort_reason` says why): abort the handler's `signal`. Must not block.
    fn aborted(&self, _context: &TaskContext) {}

    /// Something the worker logs once (a declaration of flow limits that
    /// replaced another worker's, docs/api.md, "Flow control"). Must not block.
    fn notice(&self, _message: &str) {}
}
