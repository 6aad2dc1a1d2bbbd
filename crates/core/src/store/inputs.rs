//! What the API passes the store, as it receives it (JSON already encoded,
//! numbers as JS numbers, absent fields `None`), and its checks and defaults.

use crate::clock::Clock;
use crate::deadletter::{self, Route};
use crate::error::{Error, Result};
use crate::flow::group::grouped_metadata;
use crate::followups::debounce::{debounce_of, DebounceInput};
use crate::ids::new_task_id;
use crate::input::{
    at_least, finite_at_least, name_field, non_negative_integer, priority, saturating_i64,
    stored_ms_or, Options, FOREVER_MS,
};
use crate::retry::{self, RetrySpec};
use crate::store::backend::{
    ClaimRequest, Conflict, NewTask, OpenMode, Outcome, PurgeFilter, WriteOp,
};
use crate::task::Status;
use crate::timeouts::timed_metadata;
use crate::unique;

pub const DEFAULT_QUEUE: &str = "default";
pub const DEFAULT_LEASE_MS: i64 = 30_000;
pub const DEFAULT_MAX_ATTEMPTS: i64 = 3;
pub const DEFAULT_LIST_LIMIT: i64 = 100;
pub const DEFAULT_PURGE_LIMIT: i64 = 1_000;
/// Tasks `store.claim` takes when no `limit` is given.
pub const DEFAULT_CLAIM_LIMIT: i64 = 1;

/// A store's options (docs/api.md, "Stores") as JS sends them
/// (`input::Options`): each dialect's own, `existing` and `ownOnly` (the
/// open mode) and `propagateBaggage` (JS's, for tracing).
#[derive(Clone, Debug)]
pub struct StoreOptions {
    pub busy_timeout_ms: Option<f64>,
    pub max: Option<f64>,
    pub schema: Option<String>,
    pub open: OpenMode,
    pub propagate_baggage: bool,
    /// `testClockMs` (SQLite, cairnq/testing): a test clock standing there.
    pub clock: Clock,
}

impl StoreOptions {
    pub const SQLITE_KEYS: [&'static str; 5] = [
        "busyTimeoutMs",
        "existing",
        "ownOnly",
        "propagateBaggage",
        "testClockMs",
    ];
    /// `max` sizes a DSN store's pool; an executor store ignores it.
    pub const POSTGRES_KEYS: [&'static str; 5] =
        ["max", "schema", "existing", "ownOnly", "propagateBaggage"];

    pub fn read(what: &str, options: &str, known: &[&str]) -> Result<StoreOptions> {
        let mut fields = Options::parse(what, options, known)?;
        let open = if fields.bool("existing")? == Some(true) {
            OpenMode::Existing
        } else if fields.bool("ownOnly")? == Some(true) {
            OpenMode::MigrateOwn
        } else {
            OpenMode::Migrate
        };
        Ok(StoreOptions {
            busy_timeout_ms: fields.number("busyTimeoutMs")?,
            max: fields.number("max")?,
            schema: fields.text("schema")?,
            open,
            propagate_baggage: fields.bool("propagateBaggage")? == Some(true),
            clock: match fields.number("testClockMs")? {
                Some(start_ms) => Clock::test_at("testClockMs", start_ms)?,
                None => Clock::Host,
            },
        })
    }
}

/// `leaseMs` as a worker or a store method receives it: `DEFAULT_LEASE_MS`
/// when absent.
pub fn lease_ms(v: Option<f64>) -> Result<i64> {
    stored_ms_or("leaseMs", v, DEFAULT_LEASE_MS)
}

/// `store.claim`'s and `store.claimSession`'s input as the API receives it.
#[derive(Clone, Debug, Default)]
pub struct ClaimInput {
    pub queues: Vec<String>,
    pub worker_id: String,
    pub lease_ms: Option<f64>,
    /// `store.claim` only.
    pub limit: Option<f64>,
    pub names: Option<Vec<String>>,
}

impl ClaimInput {
    /// `store.claim`'s and `store.claimSession`'s options as JS sends them
    /// (`input::Options`).
    pub fn read(options: &str) -> Result<ClaimInput> {
        let mut fields = Options::parse(
            "claim options",
            options,
            &["queues", "workerId", "leaseMs", "limit", "names"],
        )?;
        Ok(ClaimInput {
            queues: fields.texts("queues")?.unwrap_or_default(),
            worker_id: fields.required_text("workerId")?,
            lease_ms: fields.number("leaseMs")?,
            limit: fields.number("limit")?,
            names: fields.texts("names")?,
        })
    }

    /// How many tasks `store.claim` takes (a fraction truncated).
    pub fn limit(&self) -> i64 {
        self.limit.map_or(DEFAULT_CLAIM_LIMIT, |v| v as i64)
    }

    /// The claim request, its lease checked (`lease_ms`).
    pub fn request(self) -> Result<ClaimRequest> {
        Ok(ClaimRequest {
            queues: self.queues,
            worker_id: self.worker_id,
            lease_ms: lease_ms(self.lease_ms)?,
            names: self.names,
        })
    }
}

/// `store.fail`'s outcome: re-queued (when `retryable` and attempts remain)
/// after `delayMs`, none when absent or negative; failed for good,
/// dead-lettered where the task's metadata says.
pub fn fail_outcome(error: String, retryable: bool, delay_ms: Option<f64>) -> Result<Outcome> {
    Ok(Outcome::Fail {
        error,
        retryable,
        delay_ms: stored_ms_or("delayMs", delay_ms, 0)?.max(0),
        dead_letter: Route::Stored,
    })
}

/// `submit`'s input as the API receives it: JSON already encoded by the
/// caller, numbers as JS numbers, absent fields `None`.
#[derive(Clone, Debug, Default)]
pub struct SubmitInput {
    pub name: String,
    pub payload: Option<String>,
    pub queue: Option<String>,
    pub key: Option<String>,
    pub conflict: Option<String>,
    pub max_attempts: Option<f64>,
    pub priority: Option<f64>,
    pub metadata: Option<String>,
    pub parent_id: Option<String>,
    pub root_id: Option<String>,
    pub correlation_id: Option<String>,
    pub run_at_delay_ms: Option<f64>,
    /// docs/api.md, "Debounce".
    pub debounce_ms: Option<f64>,
    pub max_delay_ms: Option<f64>,
    /// docs/api.md, "Flow control": kept in the metadata.
    pub group: Option<String>,
    /// docs/api.md, "Time limits and aborts": kept in the metadata.
    pub timeout_ms: Option<f64>,
    /// docs/api.md, "Retry policy": `max_attempts` and the metadata.
    pub retry: Option<RetrySpec>,
    /// docs/api.md, "Uniqueness window": `unique.forMs`, kept in the metadata.
    pub unique_for_ms: Option<f64>,
    /// docs/api.md, "Dead letters": the queue, kept in the metadata.
    pub dead_letter: Option<String>,
}

#[derive(Clone, Debug, Default)]
pub struct ListInput {
    pub status: Option<String>,
    pub queue: Option<String>,
    pub name: Option<String>,
    pub root_id: Option<String>,
    pub correlation_id: Option<String>,
    pub limit: Option<f64>,
    pub offset: Option<f64>,
    /// `Some(false)`: summary rows, bodies unread (see `ListFilter::bodies`).
    pub bodies: Option<bool>,
}

impl ListInput {
    /// `list`'s options as JS sends them (`input::Options`).
    pub fn read(options: &str) -> Result<ListInput> {
        let mut fields = Options::parse(
            "list options",
            options,
            &[
                "status",
                "queue",
                "name",
                "rootId",
                "correlationId",
                "limit",
                "offset",
                "bodies",
            ],
        )?;
        Ok(ListInput {
            status: fields.text("status")?,
            queue: fields.text("queue")?,
            name: fields.text("name")?,
            root_id: fields.text("rootId")?,
            correlation_id: fields.text("correlationId")?,
            limit: fields.number("limit")?,
            offset: fields.number("offset")?,
            bodies: fields.bool("bodies")?,
        })
    }
}

/// `purge`'s input as the API receives it (docs/api.md, "Stores").
#[derive(Clone, Debug, Default)]
pub struct PurgeInput {
    pub older_than_ms: Option<f64>,
    /// Retention by count: keep the most recently completed this many of
    /// the matched rows, purge the rest (instead of a cutoff).
    pub keep_last: Option<f64>,
    pub queue: Option<String>,
    pub status: Option<String>,
    pub name: Option<String>,
    pub limit: Option<f64>,
}

impl PurgeInput {
    /// The keys of a purge input (and of a retention rule).
    pub const KEYS: [&'static str; 6] = [
        "olderThanMs",
        "keepLast",
        "queue",
        "status",
        "name",
        "limit",
    ];

    /// The options as JS sends them (`input::Options`).
    pub fn read(options: &str) -> Result<PurgeInput> {
        let mut fields = Options::parse("purge options", options, &PurgeInput::KEYS)?;
        PurgeInput::of(&mut fields)
    }

    /// The input's fields, read from `fields` (a purge's options, or a
    /// retention rule).
    pub fn of(fields: &mut Options) -> Result<PurgeInput> {
        Ok(PurgeInput {
            older_than_ms: fields.number("olderThanMs")?,
            keep_last: fields.number("keepLast")?,
            queue: fields.text("queue")?,
            status: fields.text("status")?,
            name: fields.text("name")?,
            limit: fields.number("limit")?,
        })
    }

    /// The checks, in the API's order: a finite `olderThanMs >= 0`, an integer
    /// `keepLast >= 0` and not both, `limit >= 1`, a terminal `status`.
    /// `queue` and `name` are taken as given (`""` too).
    pub fn validate(self) -> Result<PurgeFilter> {
        if let Some(v) = self.older_than_ms {
            finite_at_least("olderThanMs", v, 0.0)?;
        }
        let keep_last = self
            .keep_last
            .map(|v| non_negative_integer("keepLast", v))
            .transpose()?;
        if keep_last.is_some() && self.older_than_ms.is_some() {
            return Err(Error::Invalid(
                "keepLast and olderThanMs are two rules: give one of them".into(),
            ));
        }
        if let Some(v) = self.limit {
            at_least("limit", v, 1.0)?;
        }
        let status = match self.status {
            None => None,
            Some(text) => match text.parse::<Status>() {
                Ok(status) if status.is_terminal() => Some(status),
                _ => {
                    return Err(Error::Invalid(format!(
                        "status must be terminal, got {text}"
                    )))
                }
            },
        };
        Ok(PurgeFilter {
            // Past "forever" nothing is old enough; capped so the cutoff
            // stays in range (Postgres computes it in bigint).
            older_than_ms: self
                .older_than_ms
                .map_or(0, |v| saturating_i64(v.min(FOREVER_MS))),
            keep_last,
            queue: self.queue,
            status,
            name: self.name,
            limit: self.limit.map_or(DEFAULT_PURGE_LIMIT, saturating_i64),
        })
    }
}

impl SubmitInput {
    /// The options `submit` takes, as `lib/store.js` sends them (`payload`
    /// and `metadata` JSON texts).
    pub const KEYS: [&'static str; 19] = [
        "name",
        "payload",
        "queue",
        "key",
        "conflict",
        "maxAttempts",
        "priority",
        "metadata",
        "parentId",
        "rootId",
        "correlationId",
        "runAtDelayMs",
        "debounceMs",
        "maxDelayMs",
        "group",
        "timeoutMs",
        "retry",
        "unique",
        "deadLetter",
    ];

    /// `KEYS` without the task's name and payload: a `submitMany` item's
    /// `options`.
    pub const OPTION_KEYS: &'static [&'static str] = Self::KEYS.split_at(2).1;

    /// Read through `Options` (the types; the values are `new_task`'s to
    /// check).
    pub fn read(o: &mut Options) -> Result<SubmitInput> {
        let name = o.required_text("name")?;
        let payload = o.text("payload")?;
        SubmitInput::read_options(name, payload, o)
    }

    /// The task's name and payload given apart, its options (`OPTION_KEYS`)
    /// read from `o`.
    pub fn read_options(
        name: String,
        payload: Option<String>,
        o: &mut Options,
    ) -> Result<SubmitInput> {
        Ok(SubmitInput {
            name,
            payload,
            queue: o.text("queue")?,
            key: o.text("key")?,
            conflict: o.text("conflict")?,
            max_attempts: o.number("maxAttempts")?,
            priority: o.number("priority")?,
            metadata: o.text("metadata")?,
            parent_id: o.text("parentId")?,
            root_id: o.text("rootId")?,
            correlation_id: o.text("correlationId")?,
            run_at_delay_ms: o.number("runAtDelayMs")?,
            debounce_ms: o.number("debounceMs")?,
            max_delay_ms: o.number("maxDelayMs")?,
            group: o.text("group")?,
            timeout_ms: o.number("timeoutMs")?,
            retry: RetrySpec::read(o)?,
            unique_for_ms: unique::read(o)?,
            dead_letter: o.text("deadLetter")?,
        })
    }
}

/// A refusal of item `index` of `submitMany`, placed where the caller wrote
/// the value: `items[3].task` for the name, `items[3].options.priority` for an
/// option (every refusal of a submit's option starts with its name), and
/// `items[3]: …` before a refusal that names no field.
pub fn item_error(index: usize, err: Error) -> Error {
    let Error::Invalid(message) = err else {
        return err;
    };
    let field = message.split([' ', ':', '.']).next().unwrap_or("");
    Error::Invalid(if field == "name" {
        format!("items[{index}].task{}", &message["name".len()..])
    } else if SubmitInput::OPTION_KEYS.contains(&field) {
        format!("items[{index}].options.{message}")
    } else {
        format!("items[{index}]: {message}")
    })
}

/// `submit`'s checks and defaults (docs/api.md, "Values and JSON", "Stores"): a
/// task ready to insert.
pub(super) fn new_task(input: SubmitInput) -> Result<WriteOp> {
    name_field("name", &input.name)?;
    if let Some(queue) = &input.queue {
        name_field("queue", queue)?;
    }
    let id = new_task_id();
    let conflict_name = input.conflict.as_deref().unwrap_or("reuse");
    let conflict = Conflict::parse(conflict_name)
        .ok_or_else(|| Error::Invalid(format!("unknown conflict strategy: {conflict_name}")))?;
    let debounce = debounce_of(&DebounceInput {
        debounce_ms: input.debounce_ms,
        max_delay_ms: input.max_delay_ms,
        key: input.key.as_deref(),
        conflict: input.conflict.as_deref(),
        run_at_delay_ms: input.run_at_delay_ms,
    })?;
    if let Some(v) = input.max_attempts {
        finite_at_least("maxAttempts", v, 1.0)?;
    }
    if let Some(v) = input.run_at_delay_ms {
        at_least("runAtDelayMs", v, 0.0)?;
    }
    let metadata = timed_metadata(
        grouped_metadata(input.metadata, input.group)?,
        input.timeout_ms,
    )?;
    let (max_attempts, metadata) =
        retry::submitted(input.retry.as_ref(), input.max_attempts, metadata)?;
    let metadata = unique::unique_metadata(
        metadata,
        input.unique_for_ms,
        input.key.as_deref(),
        input.conflict.as_deref(),
        debounce.is_some(),
    )?;
    let metadata = deadletter::routed_metadata(metadata, input.dead_letter)?;
    let delay_ms = match debounce {
        Some(window) => window.window_ms,
        None => stored_ms_or("runAtDelayMs", input.run_at_delay_ms, 0)?,
    };
    let task = NewTask {
        root_id: Some(input.root_id.unwrap_or_else(|| id.clone())),
        id,
        name: input.name,
        queue: input.queue.unwrap_or_else(|| DEFAULT_QUEUE.to_string()),
        payload: input.payload.unwrap_or_else(|| "{}".to_string()),
        metadata: metadata.unwrap_or_else(|| "{}".to_string()),
        max_attempts: max_attempts.map_or(DEFAULT_MAX_ATTEMPTS, |v| v as i64),
        priority: input.priority.map_or(Ok(0), priority)?,
        delay_ms,
        parent_id: input.parent_id,
        correlation_id: input.correlation_id,
    };
    Ok(match input.key {
        None => WriteOp::Insert(task),
        Some(key) => WriteOp::InsertKeyed(task, key, debounce.map_or(conflict, Conflict::Debounce)),
    })
}
