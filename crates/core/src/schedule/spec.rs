//! `schedule(name, options)`'s input: the checks, in order, each error naming
//! its field, and the defaults (docs/api.md, "Schedules"). Nothing is written
//! before every check passed.

use serde_json::Value;

use super::cron::Occurrences;
use crate::error::{Error, Result};
use crate::input::{finite_at_least, name_field, priority, Options};
use crate::store::flow::group::grouped_metadata;
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

/// The options `schedule()` takes (and `name`, which JS adds).
const KNOWN_KEYS: [&str; 11] = [
    "name",
    "task",
    "cron",
    "tz",
    "payload",
    "queue",
    "priority",
    "maxAttempts",
    "metadata",
    "catchUp",
    "group",
];

impl ScheduleSpec {
    /// `input` is a JSON object: `name`, `task` (a name), `cron`, and
    /// optionally `tz`, `queue`, `priority`, `maxAttempts`, `catchUp`,
    /// `group`, and `payload`/`metadata` as JSON texts (the caller encoded
    /// them). Any other key is refused, named.
    pub fn parse(input: &str) -> Result<ScheduleSpec> {
        let mut fields = Options::parse("schedule options", input, &KNOWN_KEYS)?;
        let name = fields.required_text("name")?;
        let task = fields.required_text("task")?;
        let cron = fields.required_text("cron")?;
        let tz = fields.text("tz")?.unwrap_or_else(|| DEFAULT_TZ.into());
        let occurrences = Occurrences::parse(&cron, &tz)?;
        let queue = fields
            .text("queue")?
            .unwrap_or_else(|| DEFAULT_QUEUE.into());
        for (field, value) in [("name", &name), ("task", &task), ("queue", &queue)] {
            name_field(field, value)?;
        }
        let priority = match fields.number("priority")? {
            Some(v) => priority(v)?,
            None => 0,
        };
        let max_attempts = match fields.number("maxAttempts")? {
            Some(v) => finite_at_least("maxAttempts", v, 1.0)? as i64,
            None => DEFAULT_MAX_ATTEMPTS,
        };
        let catch_up = match fields.text("catchUp")? {
            None => CatchUp::Latest,
            Some(given) => CatchUp::parse(&given).ok_or_else(|| {
                Error::Invalid(format!(
                    "catchUp must be \"none\", \"latest\" or \"all\", got {given:?}"
                ))
            })?,
        };
        let payload = fields.text("payload")?.unwrap_or_else(|| "{}".into());
        let metadata = fields.text("metadata")?.unwrap_or_else(|| "{}".into());
        if !matches!(serde_json::from_str(&metadata), Ok(Value::Object(_))) {
            return Err(Error::Invalid("metadata must be a plain object".into()));
        }
        let group = fields.text("group")?;
        let metadata = grouped_metadata(Some(metadata), group)?.expect("metadata was given");
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
