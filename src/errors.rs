//! Core errors → JS: the reason is `{"cairnq": <class>, "message": …, fields…}`,
//! decoded by `lib/errors.js` into the matching error class.

use cairnq_core::Error;
use serde::Serialize;
use serde_json::value::RawValue;

#[derive(Serialize, Default)]
#[serde(rename_all = "camelCase")]
struct Reason<'a> {
    cairnq: &'a str,
    message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    task_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    worker_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    owner: Option<&'a str>,
    /// `NotRunning`'s status; `null` when there is no task.
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<Option<&'a str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    key: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    queue: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_depth: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    waited_ms: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    timeout_ms: Option<f64>,
    /// The row as stored, keys in table order.
    #[serde(skip_serializing_if = "Option::is_none")]
    task: Option<Box<RawValue>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    late_ms: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    interval_ms: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    lease_ms: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<&'a str>,
}

/// The reason text of `err`: its class, its message as the core words it, and
/// the fields the JS class exposes. Rejections carry it as their message
/// (`to_js`); `onError` gets it as is.
pub fn reason(err: &Error) -> String {
    let mut reason = Reason {
        cairnq: err.class_name(),
        message: err.to_string(),
        ..Reason::default()
    };
    // No wildcard: a new variant decides here which fields cross over.
    match err {
        Error::LostLease { task_id } => reason.task_id = Some(task_id),
        Error::NotOwner {
            task_id,
            worker_id,
            owner,
        } => {
            reason.task_id = Some(task_id);
            reason.worker_id = Some(worker_id);
            reason.owner = Some(owner);
        }
        Error::LeaseExpired { task_id, worker_id } => {
            reason.task_id = Some(task_id);
            reason.worker_id = Some(worker_id);
        }
        Error::NotRunning { task_id, status } => {
            reason.task_id = Some(task_id);
            reason.status = Some(status.as_deref());
        }
        Error::AlreadyExists { key } => reason.key = Some(key),
        Error::QueueFull {
            queue,
            max_depth,
            waited_ms,
        } => {
            reason.queue = Some(queue);
            reason.max_depth = Some(*max_depth);
            reason.waited_ms = Some(*waited_ms);
        }
        Error::TaskTimeout {
            task_id,
            key,
            task,
            timeout_ms,
        } => {
            reason.task_id = Some(task_id);
            reason.key = key.as_deref();
            reason.timeout_ms = Some(*timeout_ms);
            reason.task = task
                .as_ref()
                .and_then(|t| RawValue::from_string(t.to_json()).ok());
        }
        Error::EventLoopBlocked {
            late_ms,
            interval_ms,
            lease_ms,
        } => {
            reason.late_ms = Some(*late_ms);
            reason.interval_ms = Some(*interval_ms);
            reason.lease_ms = Some(*lease_ms);
        }
        Error::Database { code, .. } | Error::NoCairnqDatabase { code, .. } => {
            reason.code = Some(code)
        }
        Error::NoSuchSchedule { .. } => reason.code = Some(cairnq_core::error::NO_SCHEDULE_CODE),
        Error::Invalid(_)
        | Error::ProtocolVersionMismatch { .. }
        | Error::Serialization(_)
        | Error::UnsupportedBackend(_)
        | Error::SchemaMismatch(_)
        | Error::Connection(_) => {}
    }
    serde_json::to_string(&reason).expect("an error reason encodes")
}

pub fn to_js(err: Error) -> napi::Error {
    napi::Error::from_reason(reason(&err))
}

/// `?`-friendly conversion for core results.
pub trait IntoJs<T> {
    fn js(self) -> napi::Result<T>;
}

impl<T> IntoJs<T> for cairnq_core::Result<T> {
    fn js(self) -> napi::Result<T> {
        self.map_err(to_js)
    }
}

/// Every variant's reason, written to `__test__/fixtures/error-reasons.json`
/// with what the JS error made from it must hold; `errors-parity.test.mjs`
/// decodes each one there. Regenerate with
/// `CAIRNQ_WRITE_FIXTURES=1 cargo test -p cairnq-node error_reasons`.
#[cfg(test)]
mod tests {
    use super::*;
    use cairnq_core::task::Task;
    use serde_json::{json, Value};

    const FIXTURE: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/__test__/fixtures/error-reasons.json"
    );
    const REGENERATE: &str = "CAIRNQ_WRITE_FIXTURES";

    /// The samples, each under the variant it stands for. The list also
    /// writes a `match` over the variants it names, without a wildcard: a
    /// variant missing here does not compile, and once listed, its sample
    /// changes the fixture, so the up-to-date check fails until it is
    /// regenerated and the JS side decodes it.
    macro_rules! per_variant {
        ($($variant:ident $pattern:tt => [$($sample:expr),+ $(,)?]),+ $(,)?) => {{
            fn listed(err: &Error) -> &'static str {
                match err {
                    $(Error::$variant $pattern => stringify!($variant),)+
                }
            }
            let mut samples: Vec<(&'static str, Error)> = Vec::new();
            $($(
                let sample: Error = $sample;
                assert_eq!(listed(&sample), stringify!($variant), "a sample listed under the wrong variant");
                samples.push((stringify!($variant), sample));
            )+)+
            samples
        }};
    }

    fn task(json: &str) -> Option<Box<Task>> {
        Some(Box::new(Task::from_json(json).expect("a sample task")))
    }

    fn samples() -> Vec<(&'static str, Error)> {
        per_variant! {
            Invalid(_) => [Error::Invalid("maxAttempts must be >= 1, got 0".into())],
            LostLease { .. } => [Error::LostLease { task_id: "task_01J9ZQ".into() }],
            NotOwner { .. } => [Error::NotOwner {
                task_id: "task_01J9ZQ".into(),
                worker_id: "script_b".into(),
                owner: "worker_01J9ZR".into(),
            }],
            LeaseExpired { .. } => [Error::LeaseExpired {
                task_id: "task_01J9ZQ".into(),
                worker_id: "script_a".into(),
            }],
            NotRunning { .. } => [
                Error::NotRunning { task_id: "task_01J9ZQ".into(), status: Some("succeeded".into()) },
                Error::NotRunning { task_id: "task_gone".into(), status: None },
            ],
            AlreadyExists { .. } => [
                Error::AlreadyExists { key: "order-1".into() },
                Error::AlreadyExists { key: "quote \" and ü — \\ kept".into() },
            ],
            QueueFull { .. } => [Error::QueueFull {
                queue: "emails".into(),
                max_depth: 100,
                waited_ms: 2500,
            }],
            TaskTimeout { .. } => [
                Error::TaskTimeout {
                    task_id: "task_missing".into(),
                    key: None,
                    task: None,
                    timeout_ms: 200.0,
                },
                Error::TaskTimeout {
                    task_id: "nobody".into(),
                    key: Some("nobody".into()),
                    task: None,
                    timeout_ms: 100.0,
                },
                Error::TaskTimeout {
                    task_id: "task_9".into(),
                    key: None,
                    task: task(
                        r#"{"id":"task_9","name":"emails.send","queue":"mail","status":"running",
                            "payload":{"to":"a@example.com"},"attempt":1,"max_attempts":4,
                            "worker_id":"worker_1","lease_until_ms":1700000030000,
                            "run_at_ms":1700000000000,"created_at_ms":1700000000000,
                            "updated_at_ms":1700000000000}"#,
                    ),
                    timeout_ms: 0.5,
                },
                Error::TaskTimeout {
                    task_id: "task_10".into(),
                    key: None,
                    task: task(
                        r#"{"id":"task_10","name":"n","queue":"q","status":"running","attempt":1,
                            "max_attempts":3,"cancel_requested_at_ms":1700000000000}"#,
                    ),
                    timeout_ms: 1e-7,
                },
                Error::TaskTimeout {
                    task_id: "task_11".into(),
                    key: Some("k1".into()),
                    task: task(
                        r#"{"id":"task_11","name":"pending.job","queue":"slow","status":"queued",
                            "attempt":0,"max_attempts":3,"run_at_ms":0}"#,
                    ),
                    timeout_ms: 1e21,
                },
                Error::TaskTimeout {
                    task_id: "task_12".into(),
                    key: None,
                    task: task(
                        r#"{"id":"task_12","name":"n","queue":"q","status":"queued","attempt":2,
                            "max_attempts":3,"run_at_ms":0}"#,
                    ),
                    timeout_ms: 30_000.0,
                },
            ],
            ProtocolVersionMismatch { .. } => [Error::ProtocolVersionMismatch { found: "2".into() }],
            Serialization(_) => [Error::Serialization(
                "non-finite number NaN is not JSON-serializable".into(),
            )],
            Database { .. } => [
                Error::Database {
                    code: "SQLITE_BUSY".into(),
                    message: "database is locked".into(),
                },
                Error::Database {
                    code: "23505".into(),
                    message: "duplicate key value violates unique constraint".into(),
                },
            ],
            SchemaMismatch(_) => [Error::SchemaMismatch(
                "cairnq is configured for schema \"billing\" but this connection resolves to \"public\" — check the connection's search_path".into(),
            )],
            UnsupportedBackend(_) => [Error::UnsupportedBackend(cairnq_core::error::NO_SHARED_TX.into())],
            Connection(_) => [Error::Connection("unable to open database file: /nonexistent/q.db".into())],
            NoCairnqDatabase { .. } => [
                Error::no_database("no cairnq database at missing.db: the file does not exist (nothing was created)".into()),
                Error::not_cairnq("notes.db is not a cairnq database: it has no cairnq_meta, cairnq_migrations and cairnq_tasks tables (the file was left untouched)".into()),
            ],
            NoSuchSchedule { .. } => [Error::NoSuchSchedule { name: "nightly-report".into() }],
            EventLoopBlocked { .. } => [Error::EventLoopBlocked {
                late_ms: 700,
                interval_ms: 100,
                lease_ms: 300,
            }],
        }
    }

    /// What the JS error decoded from `err`'s reason must hold, from the Rust
    /// side: `name`, `message` (TaskTimeout appends ": <what the snapshot
    /// says>", worded in JS), `code` where the error has one, its own `fields`,
    /// and for the classes users construct, the `args` their public
    /// constructor takes to word the same message.
    fn expectation<'a>(variant: &'a str, err: &Error) -> Expectation<'a> {
        let (fields, args, code) = match err {
            Error::Invalid(_) | Error::Connection(_) => (json!({}), Value::Null, Value::Null),
            Error::Database { code, .. } | Error::NoCairnqDatabase { code, .. } => {
                (json!({}), Value::Null, json!(code))
            }
            Error::NoSuchSchedule { .. } => (
                json!({}),
                Value::Null,
                json!(cairnq_core::error::NO_SCHEDULE_CODE),
            ),
            Error::LostLease { task_id } => {
                (json!({ "taskId": task_id }), json!([task_id]), Value::Null)
            }
            Error::NotOwner {
                task_id,
                worker_id,
                owner,
            } => (
                json!({ "taskId": task_id, "workerId": worker_id, "owner": owner }),
                json!([task_id, worker_id, owner]),
                Value::Null,
            ),
            Error::LeaseExpired { task_id, worker_id } => (
                json!({ "taskId": task_id, "workerId": worker_id }),
                json!([task_id, worker_id]),
                Value::Null,
            ),
            Error::NotRunning { task_id, status } => (
                json!({ "taskId": task_id, "status": status }),
                json!([task_id, status]),
                Value::Null,
            ),
            Error::AlreadyExists { key } => (json!({ "key": key }), json!([key]), Value::Null),
            Error::QueueFull {
                queue,
                max_depth,
                waited_ms,
            } => (
                json!({ "queue": queue, "maxDepth": max_depth, "waitedMs": waited_ms }),
                json!([queue, max_depth, waited_ms]),
                Value::Null,
            ),
            Error::TaskTimeout {
                task_id,
                key,
                task,
                timeout_ms,
            } => {
                let task = task.as_ref().map_or(Value::Null, |t| {
                    serde_json::from_str(&t.to_json()).expect("a task encodes")
                });
                (
                    json!({ "taskId": task_id, "key": key, "task": task }),
                    json!([task_id, { "timeoutMs": timeout_ms, "task": task, "key": key }]),
                    Value::Null,
                )
            }
            Error::ProtocolVersionMismatch { .. }
            | Error::Serialization(_)
            | Error::UnsupportedBackend(_)
            | Error::SchemaMismatch(_) => (json!({}), json!([err.to_string()]), Value::Null),
            Error::EventLoopBlocked {
                late_ms,
                interval_ms,
                lease_ms,
            } => (
                json!({ "lateMs": late_ms, "intervalMs": interval_ms, "leaseMs": lease_ms }),
                json!([late_ms, interval_ms, lease_ms]),
                Value::Null,
            ),
        };
        Expectation {
            variant,
            name: err.class_name(),
            message: err.to_string(),
            code: (!code.is_null()).then_some(code),
            fields,
            args: (!args.is_null()).then_some(args),
            reason: reason(err),
        }
    }

    /// One fixture entry; the fields in the order a reader wants them.
    #[derive(Serialize)]
    struct Expectation<'a> {
        variant: &'a str,
        name: &'static str,
        message: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        code: Option<Value>,
        fields: Value,
        #[serde(skip_serializing_if = "Option::is_none")]
        args: Option<Value>,
        reason: String,
    }

    #[derive(Serialize)]
    struct Fixture<'a> {
        generated: String,
        errors: Vec<Expectation<'a>>,
    }

    fn fixture(samples: &[(&'static str, Error)]) -> Fixture<'static> {
        Fixture {
            generated: format!(
                "by `{REGENERATE}=1 cargo test -p cairnq-node error_reasons` (src/errors.rs); do not edit"
            ),
            errors: samples
                .iter()
                .map(|(variant, err)| expectation(variant, err))
                .collect(),
        }
    }

    #[test]
    fn error_reasons_fixture_is_up_to_date() {
        let samples = samples();
        let fresh = fixture(&samples);
        if std::env::var_os(REGENERATE).is_some() {
            let text = serde_json::to_string_pretty(&fresh).expect("the fixture encodes") + "\n";
            std::fs::write(FIXTURE, text).expect("the fixture is written");
            return;
        }
        let committed = std::fs::read_to_string(FIXTURE).unwrap_or_default();
        let committed: Value = serde_json::from_str(&committed).unwrap_or(Value::Null);
        let fresh = serde_json::to_value(&fresh).expect("the fixture encodes");
        // Compared as JSON values: the test is about content, not layout.
        assert!(
            committed == fresh,
            "{FIXTURE} is stale: regenerate it with `{REGENERATE}=1 cargo test -p cairnq-node error_reasons`, \
             then run `node --test __test__/errors-parity.test.mjs`"
        );
    }

    #[test]
    fn a_reason_is_the_tagged_message_and_fields() {
        let lost = Error::LostLease {
            task_id: "t1".into(),
        };
        assert_eq!(
            reason(&lost),
            r#"{"cairnq":"LostLease","message":"lost lease on task t1","taskId":"t1"}"#
        );
        let busy = Error::Database {
            code: "SQLITE_BUSY".into(),
            message: "database is locked".into(),
        };
        assert_eq!(
            reason(&busy),
            r#"{"cairnq":"Error","message":"database is locked","code":"SQLITE_BUSY"}"#
        );
    }
}
