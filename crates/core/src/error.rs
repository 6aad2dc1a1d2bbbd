//! Every failure the core reports. The bindings map each variant onto the JS
//! error class of the same name (docs/api.md, "Errors"); `Invalid` becomes a
//! plain `Error`.
//!
//! The messages are written here, once: the bindings send this `Display` text
//! with the fields, and the JS classes take it as given. The JS constructors
//! users call word the same text for errors made in JS;
//! `__test__/errors-parity.test.mjs` checks that both agree for every variant.

use crate::task::{NotATask, Task};

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Clone, Debug, thiserror::Error)]
pub enum Error {
    /// Argument validation; the message is the one the API prescribes
    /// (docs/api.md).
    #[error("{0}")]
    Invalid(String),
    #[error("lost lease on task {task_id}")]
    LostLease { task_id: String },
    /// A fetched task's write refused: another worker's id holds the row
    /// (docs/api.md, "Manual fetch").
    #[error("task {task_id} is held by worker {owner}, not {worker_id}")]
    NotOwner {
        task_id: String,
        worker_id: String,
        owner: String,
    },
    /// A fetched task's write refused: the caller's own lease ran out (the
    /// row is still running under its id, recoverable by any worker).
    #[error("the lease of worker {worker_id} on task {task_id} has expired")]
    LeaseExpired { task_id: String, worker_id: String },
    /// A fetched task's write refused: the row is not running (`status`), or
    /// there is none (`None`).
    #[error("{}", status.as_ref().map_or(format!("no task {task_id}"), |s| format!("task {task_id} is {s}, not running")))]
    NotRunning {
        task_id: String,
        status: Option<String>,
    },
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
    /// snapshot, `key` is set for waits on a key. The JS class appends what
    /// the snapshot says (worded against its own clock: "next run in ~Nms").
    #[error("{} did not finish within {}ms", key.as_ref().map_or(format!("task {task_id}"), |k| format!("key {k}")), js_number(*timeout_ms))]
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
    /// A Postgres connection would split or miss the installation
    /// (docs/protocol.md, "Connection setup (Postgres)").
    #[error("{0}")]
    SchemaMismatch(String),
    /// This store cannot do what was asked (`completeIn` on SQLite).
    #[error("{0}")]
    UnsupportedBackend(String),
    /// The database refused or failed a statement. `code` is the driver's code
    /// (`SQLITE_BUSY`, a Postgres SQLSTATE, …) so callers can branch on it.
    #[error("{message}")]
    Database { code: String, message: String },
    /// The database could not be reached or opened (wrong path, wrong DSN,
    /// not a database). Passwords never appear in the message.
    #[error("{0}")]
    Connection(String),
    /// A store opened with `OpenMode::Existing` found no cairnq database to
    /// open: `code` is `NO_DATABASE_CODE` (nothing there) or
    /// `NOT_CAIRNQ_CODE` (a file or database that is not cairnq's). Nothing
    /// was created or changed.
    #[error("{message}")]
    NoCairnqDatabase { code: String, message: String },
    /// `triggerSchedule` of a name no schedule has (JS: a plain `Error` with
    /// `code` `NO_SCHEDULE_CODE`). Nothing was written.
    #[error("no schedule named {name:?}")]
    NoSuchSchedule { name: String },
    /// The thread that runs handlers answered a worker's ping `late_ms` late.
    /// Only reported through `onError`; the native heartbeat kept the leases.
    #[error(
        "heartbeat beat was {late_ms}ms late (interval {interval_ms}ms, lease {lease_ms}ms): the event loop was blocked long enough to miss a beat, so this worker's leases are at risk. Usually synchronous work in a handler (move it off the loop); otherwise the worker is oversubscribed for its leaseMs."
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
            Error::NotOwner { .. } => "NotOwner",
            Error::LeaseExpired { .. } => "LeaseExpired",
            Error::NotRunning { .. } => "NotRunning",
            Error::AlreadyExists { .. } => "AlreadyExists",
            Error::QueueFull { .. } => "QueueFull",
            Error::TaskTimeout { .. } => "TaskTimeout",
            Error::ProtocolVersionMismatch { .. } => "ProtocolVersionMismatch",
            Error::Serialization(_) => "SerializationError",
            Error::UnsupportedBackend(_) => "UnsupportedBackend",
            Error::SchemaMismatch(_) => "SchemaMismatch",
            Error::EventLoopBlocked { .. } => "EventLoopBlocked",
            Error::Invalid(_)
            | Error::Database { .. }
            | Error::Connection(_)
            | Error::NoCairnqDatabase { .. }
            | Error::NoSuchSchedule { .. } => "Error",
        }
    }

    pub fn is_busy(&self) -> bool {
        matches!(self, Error::Database { code, .. } if code.starts_with("SQLITE_BUSY"))
    }
}

/// `Error::NoCairnqDatabase`'s code when there is no database at all.
pub const NO_DATABASE_CODE: &str = "CAIRNQ_NO_DATABASE";
/// `Error::NoCairnqDatabase`'s code for a database that is not cairnq's.
pub const NOT_CAIRNQ_CODE: &str = "CAIRNQ_NOT_CAIRNQ";

/// `Error::NoSuchSchedule`'s code.
pub const NO_SCHEDULE_CODE: &str = "CAIRNQ_NO_SCHEDULE";

/// `completeIn`'s refusal on a store without a transaction to share.
pub const NO_SHARED_TX: &str = "this store cannot share a transaction with the caller — completeIn requires a Postgres store (see PgExecutor)";

impl Error {
    pub fn no_database(message: String) -> Error {
        Error::NoCairnqDatabase {
            code: NO_DATABASE_CODE.into(),
            message,
        }
    }

    pub fn not_cairnq(message: String) -> Error {
        Error::NoCairnqDatabase {
            code: NOT_CAIRNQ_CODE.into(),
            message,
        }
    }
}

impl From<NotATask> for Error {
    fn from(err: NotATask) -> Error {
        Error::Invalid(err.0)
    }
}

/// `ms` as JavaScript's `String(ms)` writes it (`1e+21`, `1e-7`, `0` for -0,
/// `Infinity`), so a message holding a JS number reads the same whichever side
/// wrote it. Every message that echoes a number uses it.
pub fn js_number(ms: f64) -> String {
    if ms.is_nan() {
        return "NaN".into();
    }
    if ms.is_infinite() {
        return if ms > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    if ms == 0.0 {
        return "0".into();
    }
    // Shortest round-trip digits and exponent: `d.ddde±x`.
    let sci = format!("{:e}", ms.abs());
    let (mantissa, exp) = sci.split_once('e').expect("{:e} writes an exponent");
    let digits = mantissa.replace('.', "");
    let k = digits.len() as i32;
    let n = exp.parse::<i32>().expect("an integer exponent") + 1;
    let body = if k <= n && n <= 21 {
        format!("{digits}{}", "0".repeat((n - k) as usize))
    } else if 0 < n && n <= 21 {
        format!("{}.{}", &digits[..n as usize], &digits[n as usize..])
    } else if -6 < n && n <= 0 {
        format!("0.{}{digits}", "0".repeat(-n as usize))
    } else {
        let sign = if n - 1 < 0 { '-' } else { '+' };
        let tail = if k == 1 {
            String::new()
        } else {
            format!(".{}", &digits[1..])
        };
        format!("{}{tail}e{sign}{}", &digits[..1], (n - 1).abs())
    };
    if ms < 0.0 {
        format!("-{body}")
    } else {
        body
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_as_javascript_writes_them() {
        for (ms, js) in [
            (0.0, "0"),
            (-0.0, "0"),
            (5.0, "5"),
            (30_000.0, "30000"),
            (-5.0, "-5"),
            (0.5, "0.5"),
            (1.25, "1.25"),
            (0.1 + 0.2, "0.30000000000000004"),
            (123_456.789, "123456.789"),
            (0.000_001, "0.000001"),
            (0.000_000_1, "1e-7"),
            (1.5e-7, "1.5e-7"),
            (1e20, "100000000000000000000"),
            (1e21, "1e+21"),
            (1.5e300, "1.5e+300"),
            (-2.5e22, "-2.5e+22"),
            (f64::MAX, "1.7976931348623157e+308"),
            (5e-324, "5e-324"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
            (f64::NAN, "NaN"),
        ] {
            assert_eq!(js_number(ms), js, "{ms:?}");
        }
    }

    #[test]
    fn task_timeout_words_its_subject_and_deadline() {
        let timeout = |key: Option<&str>, timeout_ms| Error::TaskTimeout {
            task_id: "task_1".into(),
            key: key.map(Into::into),
            task: None,
            timeout_ms,
        };
        assert_eq!(
            timeout(None, 200.0).to_string(),
            "task task_1 did not finish within 200ms"
        );
        assert_eq!(
            timeout(Some("k"), 0.5).to_string(),
            "key k did not finish within 0.5ms"
        );
    }
}

/// A stored error envelope, keys in protocol order (docs/protocol.md, "Error
/// envelope").
#[derive(serde::Serialize)]
struct Envelope<'a, D> {
    #[serde(rename = "type")]
    kind: &'a str,
    code: &'a str,
    message: &'a str,
    retryable: bool,
    details: D,
}

/// An error envelope the SDK writes, as JSON text; `details` `{}` when
/// there is nothing to add.
pub fn envelope(
    kind: &str,
    code: &str,
    message: &str,
    retryable: bool,
    details: impl serde::Serialize,
) -> String {
    serde_json::to_string(&Envelope {
        kind,
        code,
        message,
        retryable,
        details,
    })
    .expect("an envelope of strings encodes")
}
