//! Every failure the core reports. The bindings map each variant onto the JS
//! error class of the same name (API.md §4); `Invalid` becomes a plain `Error`.

use crate::task::Task;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Clone, Debug, thiserror::Error)]
pub enum Error {
    /// Argument validation; the message is the one API.md prescribes.
    #[error("{0}")]
    Invalid(String),
    #[error("lost lease on task {task_id}")]
    LostLease { task_id: String },
    #[error("task with key {key} already exists")]
    AlreadyExists { key: String },
    #[error(
        "queue {queue} still holds {max_depth} or more queued tasks after {waited_ms}ms; refusing to enqueue more"
    )]
    QueueFull {
        queue: String,
        max_depth: i64,
        waited_ms: i64,
    },
    /// A wait's deadline passed; the task keeps running. `task` is the last
    /// snapshot, `key` is set for waits on a key. The JS class words the
    /// user-facing diagnostic from these fields.
    #[error("{} did not finish within {timeout_ms}ms", key.as_ref().map_or(format!("task {task_id}"), |k| format!("key {k}")))]
    TaskTimeout {
        task_id: String,
        key: Option<String>,
        task: Option<Box<Task>>,
        timeout_ms: f64,
    },
    #[error("storage protocol_version={found}, SDK supports 1")]
    ProtocolVersionMismatch { found: String },
    #[error("{0}")]
    Serialization(String),
    /// The database refused or failed a statement. `code` is the driver's code
    /// (`SQLITE_BUSY`, a Postgres SQLSTATE, …) so callers can branch on it.
    #[error("{message}")]
    Database { code: String, message: String },
    /// The database could not be reached or opened (wrong path, wrong DSN,
    /// not a database). Passwords never appear in the message.
    #[error("{0}")]
    Connection(String),
    /// A backend this build cannot provide.
    #[error("{0}")]
    Unavailable(String),
    /// The thread that runs handlers answered a worker's ping `late_ms` late.
    /// Only reported through `onError`; the native heartbeat kept the leases.
    #[error(
        "heartbeat beat was {late_ms}ms late (interval {interval_ms}ms, lease {lease_ms}ms): the event loop was blocked long enough to miss a beat. Leases stay renewed natively, but a blocked loop stalls every other handler and timer: move long synchronous work to a worker thread or child process."
    )]
    EventLoopBlocked {
        late_ms: i64,
        interval_ms: i64,
        lease_ms: i64,
    },
}

impl Error {
    /// The JS error class this maps to (`Error` for the plain kinds).
    pub fn class_name(&self) -> &'static str {
        match self {
            Error::LostLease { .. } => "LostLease",
            Error::AlreadyExists { .. } => "AlreadyExists",
            Error::QueueFull { .. } => "QueueFull",
            Error::TaskTimeout { .. } => "TaskTimeout",
            Error::ProtocolVersionMismatch { .. } => "ProtocolVersionMismatch",
            Error::Serialization(_) => "SerializationError",
            Error::EventLoopBlocked { .. } => "EventLoopBlocked",
            Error::Invalid(_)
            | Error::Database { .. }
            | Error::Connection(_)
            | Error::Unavailable(_) => "Error",
        }
    }

    pub fn is_busy(&self) -> bool {
        matches!(self, Error::Database { code, .. } if code.starts_with("SQLITE_BUSY"))
    }
}
