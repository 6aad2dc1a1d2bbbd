//! Core errors → JS: the reason is `{"cairnq": <class>, "message": …, fields…}`.

use cairnq_core::Error;
use serde_json::{json, value::RawValue, Value};

pub fn to_js(err: Error) -> napi::Error {
    let mut body = json!({ "cairnq": err.class_name(), "message": err.to_string() });
    let fields = &mut body;
    match &err {
        Error::LostLease { task_id } => fields["taskId"] = json!(task_id),
        Error::AlreadyExists { key } => fields["key"] = json!(key),
        Error::QueueFull {
            queue,
            max_depth,
            waited_ms,
        } => {
            fields["queue"] = json!(queue);
            fields["maxDepth"] = json!(max_depth);
            fields["waitedMs"] = json!(waited_ms);
        }
        Error::TaskTimeout {
            task_id,
            key,
            task,
            timeout_ms,
        } => {
            fields["taskId"] = json!(task_id);
            fields["key"] = json!(key);
            fields["timeoutMs"] = json!(timeout_ms);
            fields["task"] = match task {
                Some(task) => serde_json::to_value(
                    RawValue::from_string(task.to_json()).expect("task JSON is valid"),
                )
                .unwrap_or(Value::Null),
                None => Value::Null,
            };
        }
        Error::EventLoopBlocked {
            late_ms,
            interval_ms,
            lease_ms,
        } => {
            fields["lateMs"] = json!(late_ms);
            fields["intervalMs"] = json!(interval_ms);
            fields["leaseMs"] = json!(lease_ms);
        }
        Error::Database { code, .. } => fields["code"] = json!(code),
        _ => {}
    }
    napi::Error::from_reason(body.to_string())
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
