//! `schedule(name, options)`'s input: the checks, in order, each error naming
//! its field, and the defaults (docs/api.md, "Schedules"). Nothing is written
//! before every check passed.

use serde_json::{Map, Value};

use super::cron::Occurrences;
use crate::error::{Error, Result};
use crate::input::{at_least, name_field};
use crate::store::{DEFAULT_MAX_ATTEMPTS, DEFAULT_QUEUE};

/// What happens to occurrences that fell due while no worker ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CatchUp {
    /// None of them fires; only an occurrence due less than
    /// `MISFIRE_GRACE_MS` ago (a late wake, not downtime) still does.
    None,
    /// Only the latest of them fires (the default).
    Latest,
    /// All of them fire, the latest `CATCH_UP_CAP` at most.
    All,
}

/// The most occurrences one catch-up fires (`catchUp: "all"`); the earliest
/// task fired records that it left earlier ones out.
pub const CATCH_UP_CAP: usize = 100;

/// How late an occurrence may be found and still count as on time for
/// `catchUp: "none"`.
pub const MISFIRE_GRACE_MS: i64 = 10_000;

/// The zone when none is given.
pub const DEFAULT_TZ: &str = "UTC";

impl CatchUp {
    pub fn parse(text: &str) -> Option<CatchUp> {
        match text {
            "none" => Some(CatchUp::None),
            "latest" => Some(CatchUp::Latest),
            "all" => Some(CatchUp::All),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            CatchUp::None => "none",
            CatchUp::Latest => "latest",
            CatchUp::All => "all",
        }
    }
}

/// A checked schedule, ready to store.
#[derive(Clone, Debug)]
pub struct ScheduleSpec {
    pub name: String,
    pub task: String,
    pub cron: String,
    pub tz: String,
    pub occurrences: Occurrences,
    pub queue: String,
    pub payload: String,
    pub metadata: String,
    pub priority: i64,
    pub max_attempts: i64,
    pub catch_up: CatchUp,
}

impl ScheduleSpec {
    /// `input` is a JSON object: `name`, `task` (a name), `cron`, and
    /// optionally `tz`, `queue`, `priority`, `maxAttempts`, `catchUp`, and
    /// `payload`/`metadata` as JSON texts (the caller encoded them).
    pub fn parse(input: &str) -> Result<ScheduleSpec> {
        let fields: Map<String, Value> = serde_json::from_str(input)
            .map_err(|e| Error::Invalid(format!("schedule options must be an object: {e}")))?;
        let text = |key: &str| -> Result<Option<&str>> {
            match fields.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.as_str())),
                Some(other) => Err(Error::Invalid(format!(
                    "{key} must be a string, got {}",
                    type_name(other)
                ))),
            }
        };
        let number = |key: &str| -> Result<Option<f64>> {
            match fields.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::Number(n)) => Ok(n.as_f64()),
                Some(other) => Err(Error::Invalid(format!(
                    "{key} must be a number, got {}",
                    type_name(other)
                ))),
            }
        };
        let name = match text("name")? {
            Some(name) if !name.is_empty() => name.to_string(),
            _ => return Err(Error::Invalid("name must be a non-empty string".into())),
        };
        let task = match fields.get("task") {
            Some(Value::String(task)) if !task.is_empty() => task.clone(),
            other => {
                return Err(Error::Invalid(format!(
                    "task must be a task name (a non-empty string) or a TaskDef, got {}",
                    other.map_or("undefined", type_name)
                )))
            }
        };
        let cron = text("cron")?
            .ok_or_else(|| Error::Invalid("cron must be a string, got undefined".into()))?
            .to_string();
        let tz = text("tz")?.unwrap_or(DEFAULT_TZ).to_string();
        let occurrences = Occurrences::parse(&cron, &tz)?;
        let queue = text("queue")?.unwrap_or(DEFAULT_QUEUE).to_string();
        for (field, value) in [("name", &name), ("task", &task), ("queue", &queue)] {
            name_field(field, value)?;
        }
        let priority = match number("priority")? {
            Some(v) if v.is_finite() => v as i64,
            Some(v) => return Err(Error::Invalid(format!("priority must be finite, got {v}"))),
            None => 0,
        };
        let max_attempts = match number("maxAttempts")? {
            Some(v) => at_least("maxAttempts", v, 1.0)?.min(i64::MAX as f64) as i64,
            None => DEFAULT_MAX_ATTEMPTS,
        };
        let catch_up = match text("catchUp")? {
            None => CatchUp::Latest,
            Some(given) => CatchUp::parse(given).ok_or_else(|| {
                Error::Invalid(format!(
                    "catchUp must be \"none\", \"latest\" or \"all\", got {given:?}"
                ))
            })?,
        };
        let payload = text("payload")?.unwrap_or("{}").to_string();
        let metadata = text("metadata")?.unwrap_or("{}").to_string();
        if !matches!(serde_json::from_str(&metadata), Ok(Value::Object(_))) {
            return Err(Error::Invalid("metadata must be a plain object".into()));
        }
        Ok(ScheduleSpec {
            name,
            task,
            cron,
            tz,
            occurrences,
            queue,
            payload,
            metadata,
            priority,
            max_attempts,
            catch_up,
        })
    }
}

/// A JSON value's kind as JS's `typeof` words it.
fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}
