//! Durable steps (docs/api.md, "Durable steps"): what one run of a task
//! decides about each step it reaches. A run loads the task's stored steps
//! once, at its first step; a step found there is replayed, a step not found
//! runs and is stored (`ctx.step`), or suspends the task (`ctx.sleep`,
//! `ctx.callChild`). The worker's context (`worker::steps`) carries the
//! decisions out through the store.
//!
//! The feature's seam with the dialects lives here too: `backend` (what each
//! dialect's `steps.rs` runs), `rows` (what its statements take and answer),
//! `presence` (whether the table exists; the parents' wake the store's
//! finishing writes owe), `transaction` (a suspension's, a child wait's and
//! a cascade's transaction, decided once over each dialect's
//! `StepTransaction`) and `restart` (a restart from a step's, over its
//! `RestartTransaction`).

pub mod backend;
pub mod presence;
pub mod restart;
pub mod rows;
mod store;
pub mod transaction;
pub mod view;

use std::collections::{HashMap, HashSet};

pub use self::store::CHILD_KEY_PREFIX;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};

use crate::error::{envelope, js_number, Error, Result};
use crate::input::{name_field, stored_ms, Options, FOREVER_MS};
use crate::steps::rows::{ChildState, NewStep, StepKind, StoredStep, Wake};
use crate::store::{Store, SubmitInput};
use crate::task::Status;

/// How long a parent waits on its child before it looks again by itself,
/// when no completion wakes it (a child run by another SDK's worker).
pub const DEFAULT_CHILD_RECHECK_MS: i64 = 30_000;

/// The latest time `sleepUntil` takes: what a JS `Date` can hold.
const LATEST_DATE_MS: f64 = 8.64e15;

/// The steps of one run of a task: those stored before the run (loaded at
/// the first step; a step this run stores is never looked up again in it,
/// ids being unique), the ids it has reached, and the envelopes of the child
/// failures its child steps handed the handler, by step id.
#[derive(Default)]
pub struct StepLog {
    stored: tokio::sync::Mutex<Option<HashMap<String, StoredStep>>>,
    reached: std::sync::Mutex<HashSet<String>>,
    child_failures: std::sync::Mutex<HashMap<String, String>>,
    /// The waits for a signal this run stored as waiting, in the order
    /// started: the run suspends for all of them (`Store::suspend_for_waits`).
    waiting: std::sync::Mutex<Vec<String>>,
}

/// How many waits one run may leave waiting at once: each costs a read when
/// the run suspends, and a handler starting more is most likely looping.
pub const MAX_WAITS_PER_RUN: usize = 100;

impl StepLog {
    /// Room for one more wait left waiting: refused past `MAX_WAITS_PER_RUN`,
    /// checked before the wait stores anything.
    pub fn check_wait_room(&self) -> Result<()> {
        let waiting = self.waiting.lock().expect("waits").len();
        if waiting >= MAX_WAITS_PER_RUN {
            return Err(Error::Invalid(format!(
                "a run may wait for at most {MAX_WAITS_PER_RUN} signals at once"
            )));
        }
        Ok(())
    }

    /// Wait step `id` was stored as waiting by this run.
    pub fn left_waiting(&self, id: &str) {
        self.waiting.lock().expect("waits").push(id.to_string());
    }

    /// The waits this run left waiting, in the order started.
    pub fn waiting(&self) -> Vec<String> {
        self.waiting.lock().expect("waits").clone()
    }

    /// Child step `id` handed its finished child to the handler: a failed or
    /// canceled child is remembered, for the handler that throws it on.
    pub fn handed_child(&self, id: &str, child_id: &str, child: &ChildState) {
        if let Some(envelope) = child_failure(id, child_id, child) {
            self.child_failures
                .lock()
                .expect("child failures")
                .insert(id.to_string(), envelope);
        }
    }

    /// The parent's failure for the child failure step `id` handed over,
    /// which its handler threw on.
    pub fn child_failure(&self, id: &str) -> String {
        let handed = self
            .child_failures
            .lock()
            .expect("child failures")
            .get(id)
            .cloned();
        handed.unwrap_or_else(|| {
            // The shim names only a step that handed a failure over; should
            // one not have, the parent still ends, naming the step.
            envelope(
                CHILD_FAILED,
                "child_failed",
                &format!("the child of step \"{id}\" failed"),
                false,
                json!({ "stepId": id }),
            )
        })
    }

    /// Marks `id` reached in this run: a second step of one run under the
    /// same id is refused (two steps would share one stored result).
    pub fn reach(&self, id: &str) -> Result<()> {
        name_field("step id", id)?;
        if !self
            .reached
            .lock()
            .expect("reached steps")
            .insert(id.to_string())
        {
            return Err(Error::Invalid(format!(
                "step id \"{id}\" is used twice in one run of the task; step ids must be unique within a task"
            )));
        }
        Ok(())
    }

    /// The step stored under `id`, if any (the task's steps are read at the
    /// first call). A step stored by another kind of call is refused: the
    /// handler changed, and replaying it would hand back the wrong thing.
    pub async fn stored(
        &self,
        store: &Store,
        task_id: &str,
        id: &str,
        kind: StepKind,
    ) -> Result<Option<StoredStep>> {
        let mut stored = self.stored.lock().await;
        if stored.is_none() {
            let loaded = store.load_steps(task_id).await?;
            *stored = Some(
                loaded
                    .into_iter()
                    .map(|step| (step.step_id.clone(), step))
                    .collect(),
            );
        }
        let found = stored.as_ref().and_then(|steps| steps.get(id)).cloned();
        match found {
            Some(step) if step.kind != kind => Err(Error::Invalid(format!(
                "step \"{id}\" of task {task_id} was stored by {}, not {}; a step id keeps its kind",
                step.kind.method(),
                kind.method()
            ))),
            found => Ok(found),
        }
    }
}

/// A step row for `id` of `kind`.
pub fn new_step(id: &str, kind: StepKind) -> NewStep {
    NewStep {
        step_id: id.to_string(),
        kind,
        result: None,
        wake: None,
        child_id: None,
    }
}

/// `ms` of `ctx.sleep` and `ctx.retryAfter`: a stored duration (docs/api.md,
/// "Values and JSON") that is not negative.
pub fn delay_ms(v: f64) -> Result<i64> {
    let ms = stored_ms("ms", v)?;
    if ms < 0 {
        return Err(Error::Invalid(format!(
            "ms must be >= 0, got {}",
            js_number(v)
        )));
    }
    Ok(ms)
}

/// What a sleep asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SleepFor {
    /// `ctx.sleep(id, ms)`.
    Ms(i64),
    /// `ctx.sleepUntil(id, date)`, epoch milliseconds.
    Until(i64),
}

impl SleepFor {
    /// `ctx.sleep`'s `ms`: a stored duration (docs/api.md, "Values and
    /// JSON") that is not negative.
    pub fn ms(v: f64) -> Result<SleepFor> {
        delay_ms(v).map(SleepFor::Ms)
    }

    /// `ctx.sleepUntil`'s time: a valid `Date`, or epoch milliseconds one can hold.
    pub fn until(v: f64) -> Result<SleepFor> {
        if v.is_finite() && v.abs() <= LATEST_DATE_MS {
            Ok(SleepFor::Until(v as i64))
        } else {
            Err(Error::Invalid(format!(
                "date must be a valid Date or epoch milliseconds, got {}",
                js_number(v)
            )))
        }
    }
}

/// What a sleep does now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SleepPlan {
    /// Go on: the sleep is over (or took no time).
    Resume,
    /// Suspend until `wake`, storing `record` first (a sleep reached the
    /// first time).
    Suspend { record: Option<NewStep>, wake: Wake },
}

/// A sleep is served once the task has been claimed at or after its wake
/// time: `claimed_at` is the run's claim, stamped by the clock that stamped
/// the wake time (docs/protocol.md, "Clocks"). A run that started earlier
/// (a retry of a canceled sleeper, a wake meant for a child's parent)
/// sleeps on until the stored time; `now` only decides whether a sleep not
/// stored yet takes any time at all.
pub fn plan_sleep(
    id: &str,
    stored: Option<&StoredStep>,
    wanted: SleepFor,
    claimed_at: i64,
    now: i64,
) -> SleepPlan {
    if let Some(step) = stored {
        return match step.wake_at_ms {
            Some(at) if at > claimed_at => SleepPlan::Suspend {
                record: None,
                wake: Wake::At(at),
            },
            _ => SleepPlan::Resume,
        };
    }
    let wake = match wanted {
        SleepFor::Ms(ms) if ms > 0 => Wake::After(ms),
        SleepFor::Until(at) if at > now => Wake::At(at),
        _ => return SleepPlan::Resume,
    };
    SleepPlan::Suspend {
        record: Some(NewStep {
            wake: Some(wake),
            ..new_step(id, StepKind::Sleep)
        }),
        wake,
    }
}

/// `ctx.callChild`'s options as JS sends them (`input::Options`): the
/// child's submit and `pollMs`, read as `child_recheck_ms`.
pub fn child_call(options: &str) -> Result<(SubmitInput, i64)> {
    let known: Vec<&str> = SubmitInput::KEYS
        .iter()
        .copied()
        .chain(["pollMs"])
        .collect();
    let mut fields = Options::parse("callChild options", options, &known)?;
    let recheck_ms = child_recheck_ms(fields.number("pollMs")?)?;
    Ok((SubmitInput::read(&mut fields)?, recheck_ms))
}

/// `ctx.callChild`'s `pollMs` (default `DEFAULT_CHILD_RECHECK_MS`): how
/// long the parent stays suspended before it reads its child again.
pub fn child_recheck_ms(v: Option<f64>) -> Result<i64> {
    let Some(v) = v else {
        return Ok(DEFAULT_CHILD_RECHECK_MS);
    };
    if v.is_finite() && (1.0..=FOREVER_MS).contains(&v) {
        Ok(v as i64)
    } else {
        Err(Error::Invalid(format!(
            "pollMs must be a finite number of milliseconds >= 1, at most 1e15 (about 31,700 years), got {}",
            js_number(v)
        )))
    }
}

/// What a child step does now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChildPlan {
    /// The child has finished: hand its outcome over.
    Finished { child_id: String, child: ChildState },
    /// The child is stored, not finished: wait for it.
    Wait { child_id: String },
    /// Reached the first time: submit the child, store the step, wait.
    Submit,
}

pub fn plan_child(id: &str, stored: Option<&StoredStep>) -> Result<ChildPlan> {
    let Some(step) = stored else {
        return Ok(ChildPlan::Submit);
    };
    let child_id = step.child_id.clone().unwrap_or_default();
    match &step.child {
        Some(child) if child.status.is_terminal() => Ok(ChildPlan::Finished {
            child_id,
            child: child.clone(),
        }),
        Some(_) => Ok(ChildPlan::Wait { child_id }),
        None => Err(gone(id, &child_id)),
    }
}

/// The `type` of a parent's failure that is its child's.
pub const CHILD_FAILED: &str = "ChildFailed";

/// The parent's own failure when its handler throws on what child step `id`
/// handed over: its child `child_id` failed (the child's envelope in
/// `details.childError`) or was canceled. Never retryable: every later run
/// would replay the same stored outcome. `None` for a child that succeeded.
pub fn child_failure(id: &str, child_id: &str, child: &ChildState) -> Option<String> {
    let (code, ended) = match child.status {
        Status::Failed => {
            let said = child
                .error
                .as_deref()
                .and_then(|error| serde_json::from_str::<Value>(error).ok());
            let message = said
                .as_ref()
                .and_then(|e| e.get("message"))
                .and_then(Value::as_str);
            let ended = message.map_or_else(|| "failed".to_string(), |m| format!("failed: {m}"));
            ("child_failed", ended)
        }
        Status::Canceled => ("child_canceled", "was canceled".to_string()),
        _ => return None,
    };
    let details = ChildFailureDetails {
        child_id,
        step_id: id,
        child_error: child
            .error
            .as_deref()
            .and_then(|error| serde_json::from_str(error).ok()),
    };
    Some(envelope(
        CHILD_FAILED,
        code,
        &format!("child task {child_id} of step \"{id}\" {ended}"),
        false,
        details,
    ))
}

/// A `ChildFailed` envelope's `details`: the child's own envelope as stored.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ChildFailureDetails<'a> {
    child_id: &'a str,
    step_id: &'a str,
    child_error: Option<&'a RawValue>,
}

/// The error of a child step whose child was purged before its parent
/// read how it ended.
pub fn gone(id: &str, child_id: &str) -> Error {
    Error::Invalid(format!(
        "the child {child_id} of step \"{id}\" is gone (purged?) before its parent read how it ended"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sleep_step(wake_at_ms: i64) -> StoredStep {
        StoredStep {
            step_id: "nap".into(),
            kind: StepKind::Sleep,
            result: None,
            wake_at_ms: Some(wake_at_ms),
            child_id: None,
            created_at_ms: 0,
            child: None,
        }
    }

    #[test]
    fn a_sleep_is_served_by_a_claim_at_or_after_its_time() {
        let step = sleep_step(1_000);
        assert_eq!(
            plan_sleep("nap", Some(&step), SleepFor::Ms(5), 1_000, 0),
            SleepPlan::Resume
        );
        assert_eq!(
            plan_sleep("nap", Some(&step), SleepFor::Ms(5), 999, 5_000),
            SleepPlan::Suspend {
                record: None,
                wake: Wake::At(1_000)
            }
        );
    }

    #[test]
    fn a_new_sleep_takes_time_only_when_it_has_some() {
        assert_eq!(
            plan_sleep("nap", None, SleepFor::Ms(0), 0, 10),
            SleepPlan::Resume
        );
        assert_eq!(
            plan_sleep("nap", None, SleepFor::Until(10), 0, 10),
            SleepPlan::Resume
        );
        let SleepPlan::Suspend { record, wake } = plan_sleep("nap", None, SleepFor::Ms(7), 0, 10)
        else {
            panic!("a 7 ms sleep suspends");
        };
        assert_eq!(wake, Wake::After(7));
        let record = record.expect("a new sleep is stored");
        assert_eq!(
            (record.kind, record.wake),
            (StepKind::Sleep, Some(Wake::After(7)))
        );
        assert!(matches!(
            plan_sleep("nap", None, SleepFor::Until(11), 0, 10),
            SleepPlan::Suspend {
                wake: Wake::At(11),
                ..
            }
        ));
    }

    #[test]
    fn sleep_inputs_are_checked() {
        assert_eq!(SleepFor::ms(2.9).unwrap(), SleepFor::Ms(2));
        assert_eq!(
            SleepFor::ms(-1.0).unwrap_err().to_string(),
            "ms must be >= 0, got -1"
        );
        assert_eq!(
            SleepFor::ms(f64::NAN).unwrap_err().to_string(),
            "ms must be a finite number of milliseconds, at most 1e15 (about 31,700 years), got NaN"
        );
        assert_eq!(
            SleepFor::until(f64::NAN).unwrap_err().to_string(),
            "date must be a valid Date or epoch milliseconds, got NaN"
        );
        assert_eq!(child_recheck_ms(None).unwrap(), DEFAULT_CHILD_RECHECK_MS);
        assert_eq!(
            child_recheck_ms(Some(0.0)).unwrap_err().to_string(),
            "pollMs must be a finite number of milliseconds >= 1, at most 1e15 (about 31,700 years), got 0"
        );
    }

    #[test]
    fn step_ids_are_reached_once_per_run() {
        let log = StepLog::default();
        log.reach("a").unwrap();
        assert_eq!(
            log.reach("a").unwrap_err().to_string(),
            "step id \"a\" is used twice in one run of the task; step ids must be unique within a task"
        );
        assert_eq!(
            log.reach("").unwrap_err().to_string(),
            "step id must be a non-empty string, got \"\""
        );
    }

    #[test]
    fn a_child_failure_thrown_on_fails_the_parent_for_good_naming_the_child() {
        let failed = ChildState {
            status: Status::Failed,
            result: None,
            error: Some(r#"{"type":"Declined","code":"handler_error","message":"card declined","retryable":true,"details":{}}"#.into()),
        };
        assert_eq!(
            child_failure("charge", "task_1", &failed).unwrap(),
            r#"{"type":"ChildFailed","code":"child_failed","message":"child task task_1 of step \"charge\" failed: card declined","retryable":false,"details":{"childId":"task_1","stepId":"charge","childError":{"type":"Declined","code":"handler_error","message":"card declined","retryable":true,"details":{}}}}"#
        );
        let canceled = ChildState {
            status: Status::Canceled,
            result: None,
            error: None,
        };
        assert_eq!(
            child_failure("kid", "task_2", &canceled).unwrap(),
            r#"{"type":"ChildFailed","code":"child_canceled","message":"child task task_2 of step \"kid\" was canceled","retryable":false,"details":{"childId":"task_2","stepId":"kid","childError":null}}"#
        );
        let succeeded = ChildState {
            status: Status::Succeeded,
            ..canceled.clone()
        };
        assert_eq!(child_failure("kid", "task_2", &succeeded), None);

        let log = StepLog::default();
        log.handed_child("kid", "task_2", &canceled);
        assert!(log.child_failure("kid").contains("child_canceled"));
    }

    #[test]
    fn a_child_step_follows_its_child() {
        let mut step = StoredStep {
            step_id: "c".into(),
            kind: StepKind::Child,
            result: None,
            wake_at_ms: None,
            child_id: Some("task_1".into()),
            created_at_ms: 0,
            child: Some(ChildState {
                status: Status::Running,
                result: None,
                error: None,
            }),
        };
        assert_eq!(plan_child("c", None).unwrap(), ChildPlan::Submit);
        assert_eq!(
            plan_child("c", Some(&step)).unwrap(),
            ChildPlan::Wait {
                child_id: "task_1".into()
            }
        );
        step.child.as_mut().unwrap().status = Status::Failed;
        assert!(matches!(
            plan_child("c", Some(&step)).unwrap(),
            ChildPlan::Finished { .. }
        ));
        step.child = None;
        assert_eq!(
            plan_child("c", Some(&step)).unwrap_err().to_string(),
            "the child task_1 of step \"c\" is gone (purged?) before its parent read how it ended"
        );
    }
}
