//! The write wire format: the client writes of one JS tick as
//! `lib/tick-writes.js` encodes them (one JSON array), decoded one by one into
//! the core's `Write`s, and their replies as one JSON array.

use cairnq_core::store::{self, HeldTask, Outcome, SubmitInput, Target, Write, WriteAnswer};
use cairnq_core::Error as CoreError;
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::errors::reason;
use napi::Result;

/// `submit`'s arguments inside a write.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubmitArgs {
    pub name: String,
    pub payload: Option<String>,
    pub queue: Option<String>,
    pub key: Option<String>,
    pub conflict: Option<String>,
    #[serde(default, deserialize_with = "spelled_number")]
    pub max_attempts: Option<f64>,
    #[serde(default, deserialize_with = "spelled_number")]
    pub priority: Option<f64>,
    pub metadata: Option<String>,
    pub parent_id: Option<String>,
    pub root_id: Option<String>,
    pub correlation_id: Option<String>,
    #[serde(default, deserialize_with = "spelled_number")]
    pub run_at_delay_ms: Option<f64>,
    #[serde(default, deserialize_with = "spelled_number")]
    pub debounce_ms: Option<f64>,
    #[serde(default, deserialize_with = "spelled_number")]
    pub max_delay_ms: Option<f64>,
    pub group: Option<String>,
}

/// One client write of a JS tick (`lib/tick-writes.js` gathers them and
/// sends them as one JSON text): `kind` names the method, the other fields are its
/// arguments.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WriteArgs {
    pub kind: WriteKind,
    pub submit: Option<SubmitArgs>,
    pub task_id: Option<String>,
    pub key: Option<String>,
    pub worker_id: Option<String>,
    pub reset_attempt: Option<bool>,
    /// `succeed`/`complete`: the result's JSON; `fail`: the envelope's.
    pub json: Option<String>,
    pub retryable: Option<bool>,
    #[serde(default, deserialize_with = "spelled_number")]
    pub delay_ms: Option<f64>,
    #[serde(default, deserialize_with = "spelled_number")]
    pub progress: Option<f64>,
    pub message: Option<String>,
    #[serde(default, deserialize_with = "spelled_number")]
    pub lease_ms: Option<f64>,
    /// A cancel's `children` option: `false` leaves its `callChild`
    /// children alone.
    pub children: Option<bool>,
}

/// The client method a write comes from.
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum WriteKind {
    Submit,
    Cancel,
    CancelByKey,
    Retry,
    RetryByKey,
    Succeed,
    Complete,
    Fail,
    Progress,
    Heartbeat,
}

/// A JS number as `lib/tick-writes.js` writes it: JSON numbers as they are, and
/// the values JSON cannot carry as their `String(n)` ("NaN", "Infinity").
fn spelled_number<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<f64>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Number {
        Finite(f64),
        Spelled(String),
    }
    match Option::<Number>::deserialize(d)? {
        None => Ok(None),
        Some(Number::Finite(v)) => Ok(Some(v)),
        Some(Number::Spelled(text)) => match text.as_str() {
            "NaN" => Ok(Some(f64::NAN)),
            "Infinity" => Ok(Some(f64::INFINITY)),
            "-Infinity" => Ok(Some(f64::NEG_INFINITY)),
            other => Err(serde::de::Error::custom(format!("not a number: {other}"))),
        },
    }
}

/// Decode the writes `lib/tick-writes.js` sent, one by one: a write that does not
/// decode is refused alone (an `Invalid` error in its place), so one caller's
/// bad argument never fails the other writes of its tick.
pub fn writes(text: &str) -> Result<Vec<cairnq_core::Result<Write>>> {
    let each: Vec<&RawValue> = serde_json::from_str(text)
        .map_err(|e| napi::Error::from_reason(format!("malformed writes: {e}")))?;
    Ok(each
        .into_iter()
        .map(|one| decode_write(one.get()))
        .collect())
}

pub(crate) fn decode_write(text: &str) -> cairnq_core::Result<Write> {
    let args: WriteArgs = serde_path_to_error::deserialize(
        &mut serde_json::Deserializer::from_str(text),
    )
    .map_err(|e| {
        // The field's path names the argument; the position inside
        // the JS layer's encoding would only confuse.
        let inner = e.inner();
        let at = format!(" at line {} column {}", inner.line(), inner.column());
        let detail = inner.to_string();
        let detail = detail.strip_suffix(&at).unwrap_or(&detail);
        CoreError::Invalid(format!("{}: {detail}", e.path()))
    })?;
    Write::try_from(args)
}

/// Replies as one JSON array, in order: the row (`null` for no row), or the
/// error reason (an object with a `cairnq` key) that `lib/errors.js` decodes.
pub fn replies(answers: Vec<WriteAnswer>) -> String {
    let mut out = String::from("[");
    for (i, answer) in answers.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        match answer {
            Ok(Some(task)) => out.push_str(&task.to_json()),
            Ok(None) => out.push_str("null"),
            Err(err) => out.push_str(&reason(&err)),
        }
    }
    out.push(']');
    out
}

impl From<SubmitArgs> for SubmitInput {
    fn from(args: SubmitArgs) -> Self {
        SubmitInput {
            name: args.name,
            payload: args.payload,
            queue: args.queue,
            key: args.key,
            conflict: args.conflict,
            max_attempts: args.max_attempts,
            priority: args.priority,
            metadata: args.metadata,
            parent_id: args.parent_id,
            root_id: args.root_id,
            correlation_id: args.correlation_id,
            run_at_delay_ms: args.run_at_delay_ms,
            debounce_ms: args.debounce_ms,
            max_delay_ms: args.max_delay_ms,
            group: args.group,
        }
    }
}

impl TryFrom<WriteArgs> for Write {
    type Error = CoreError;

    fn try_from(args: WriteArgs) -> cairnq_core::Result<Write> {
        let missing =
            |field: &str| CoreError::Invalid(format!("write {:?}: {field} is required", args.kind));
        let task_id = || args.task_id.clone().ok_or_else(|| missing("taskId"));
        let key = || args.key.clone().ok_or_else(|| missing("key"));
        let owned = || -> cairnq_core::Result<HeldTask> {
            Ok(HeldTask {
                task_id: task_id()?,
                worker_id: args.worker_id.clone().ok_or_else(|| missing("workerId"))?,
            })
        };
        Ok(match args.kind {
            WriteKind::Submit => {
                Write::Submit(args.submit.ok_or_else(|| missing("submit"))?.into())
            }
            WriteKind::Cancel => {
                Write::Cancel(Target::Id(task_id()?), args.children != Some(false))
            }
            WriteKind::CancelByKey => {
                Write::Cancel(Target::Key(key()?), args.children != Some(false))
            }
            WriteKind::Retry => {
                Write::Retry(Target::Id(task_id()?), args.reset_attempt == Some(true))
            }
            WriteKind::RetryByKey => {
                Write::Retry(Target::Key(key()?), args.reset_attempt == Some(true))
            }
            WriteKind::Succeed => Write::Finish(owned()?, Outcome::Succeed { result: args.json }),
            WriteKind::Complete => Write::Finish(owned()?, Outcome::Complete { result: args.json }),
            WriteKind::Fail => Write::Finish(
                owned()?,
                store::fail_outcome(
                    args.json.clone().ok_or_else(|| missing("json"))?,
                    args.retryable != Some(false),
                    args.delay_ms,
                )?,
            ),
            WriteKind::Progress => Write::Progress(owned()?, args.progress, args.message),
            WriteKind::Heartbeat => Write::Heartbeat(owned()?, store::lease_ms(args.lease_ms)?),
        })
    }
}
