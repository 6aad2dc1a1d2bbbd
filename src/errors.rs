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

pub fn to_js(err: Error) -> napi::Error {
    let mut reason = Reason {
        cairnq: err.class_name(),
        message: err.to_string(),
        ..Reason::default()
    };
    match &err {
        Error::LostLease { task_id } => reason.task_id = Some(task_id),
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
        Error::Database { code, .. } => reason.code = Some(code),
        _ => {}
    }
    let text = serde_json::to_string(&reason).expect("an error reason encodes");
    napi::Error::from_reason(text)
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
