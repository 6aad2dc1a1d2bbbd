//! `schedule(name, options)`'s input: the checks, in order, each error naming
//! its field, and the defaults (docs/api.md, "Schedules"). Nothing is written
//! before every check passed.

use serde_json::Value;

use super::recurrence::Recurrence;
use crate::error::{Error, Result};
use crate::flow::group::grouped_metadata;
use crate::input::{
    epoch_ms, finite_at_least, integer_at_least_one, name_field, priority, Options,
};
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

/// What an occurrence does while a task of its schedule is queued or
/// running.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overlap {
    /// It fires all the same (the default).
    Allow,
    /// It fires nothing; the schedule counts it as skipped.
    Skip,
}

impl Overlap {
    pub fn parse(text: &str) -> Option<Overlap> {
        match text {
            "allow" => Some(Overlap::Allow),
            "skip" => Some(Overlap::Skip),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Overlap::Allow => "allow",
            Overlap::Skip => "skip",
        }
    }
}

/// A checked schedule, ready to store.
#[derive(Clone, Debug)]
pub struct ScheduleSpec {
    pub name: String,
    pub task: String,
    /// Empty for an interval schedule.
    pub cron: String,
    pub tz: String,
    pub every_ms: Option<i64>,
    pub recurrence: Recurrence,
    pub queue: String,
    pub payload: String,
    pub metadata: String,
    pub priority: i64,
    pub max_attempts: i64,
    pub catch_up: CatchUp,
    pub overlap: Overlap,
    pub start_at_ms: Option<i64>,
    pub end_at_ms: Option<i64>,
    pub limit: Option<i64>,
}

/// The options `schedule()` takes (and `name`, which JS adds).
const KNOWN_KEYS: [&str; 16] = [
    "name",
    "task",
    "cron",
    "every",
    "tz",
    "payload",
    "queue",
    "priority",
    "maxAttempts",
    "metadata",
    "catchUp",
    "group",
    "overlap",
    "startAt",
    "endAt",
    "limit",
];

impl ScheduleSpec {
    /// `input` is a JSON object: `name`, `task` (a name), `cron` or `every`
    /// (exactly one), and optionally `tz`, `queue`, `priority`,
    /// `maxAttempts`, `catchUp`, `group`, `overlap`, `startAt`, `endAt`
    /// (epoch ms), `limit`, and `payload`/`metadata` as JSON texts (the
    /// caller encoded them). Any other key is refused, named.
    pub fn parse(input: &str) -> Result<ScheduleSpec> {
        let mut fields = Options::parse("schedule options", input, &KNOWN_KEYS)?;
        let name = fields.required_text("name")?;
        let task = fields.required_text("task")?;
        let (cron, every_ms) = match (fields.holds("cron"), fields.holds("every")) {
            (true, false) => (fields.required_text("cron")?, None),
            (false, true) => {
                let every = fields.number("every")?.expect("present");
                (String::new(), Some(integer_at_least_one("every", every)?))
            }
            (both, _) => {
                return Err(Error::Invalid(format!(
                    "cron or every must be given, exactly one, got {}",
                    if both { "both" } else { "neither" }
                )))
            }
        };
        let tz = fields.text("tz")?.unwrap_or_else(|| DEFAULT_TZ.into());
        let recurrence = Recurrence::of(&cron, &tz, every_ms)?;
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
        let overlap = match fields.text("overlap")? {
            None => Overlap::Allow,
            Some(given) => Overlap::parse(&given).ok_or_else(|| {
                Error::Invalid(format!(
                    "overlap must be \"allow\" or \"skip\", got {given:?}"
                ))
            })?,
        };
        let start_at_ms = fields
            .number("startAt")?
            .map(|v| epoch_ms("startAt", v))
            .transpose()?;
        let end_at_ms = fields
            .number("endAt")?
            .map(|v| epoch_ms("endAt", v))
            .transpose()?;
        if let (Some(start), Some(end)) = (start_at_ms, end_at_ms) {
            if end <= start {
                return Err(Error::Invalid(format!(
                    "endAt must be after startAt, got endAt {end} and startAt {start}"
                )));
            }
        }
        let limit = fields
            .number("limit")?
            .map(|v| integer_at_least_one("limit", v))
            .transpose()?;
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
            every_ms,
            recurrence,
            queue,
            payload,
            metadata,
            priority,
            max_attempts,
            catch_up,
            overlap,
            start_at_ms,
            end_at_ms,
            limit,
        })
    }
}
