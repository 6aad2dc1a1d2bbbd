//! Manual fetch and settle (docs/api.md, "Manual fetch"): a script takes
//! tasks with `client.fetch`, holds their lease itself (no heartbeat runs
//! for it), and finishes them with `complete`, `fail` or `extendLease`,
//! in this process or another. The statements are the worker's own; what
//! this adds is its input and, when the ownership check refuses a write,
//! the reason told apart: another worker holds the task, the caller's
//! lease ran out, or the task is no longer running.

use crate::error::{Error, Result};
use crate::ids::new_worker_id;
use crate::input::{integer_at_least_one, name_field, stored_ms, Options};
use crate::store::{ClaimRequest, HeldTask, Outcome, Target, DEFAULT_LEASE_MS, DEFAULT_QUEUE};
use crate::task::{Status, Task};
use crate::Store;

/// `client.fetch`'s input, checked, defaults applied.
#[derive(Clone, Debug, PartialEq)]
pub struct FetchInput {
    pub queue: String,
    pub names: Option<Vec<String>>,
    pub count: i64,
    pub lease_ms: i64,
    pub worker_id: String,
}

impl FetchInput {
    /// `client.fetch`'s options as JS sends them (`input::Options`): `queue`
    /// "default", `count` 1, `leaseMs` 30 000 (the claim's), `workerId` a
    /// fresh `worker_` id.
    pub fn read(options: &str) -> Result<FetchInput> {
        let mut fields = Options::parse(
            "fetch options",
            options,
            &["queue", "names", "count", "leaseMs", "workerId"],
        )?;
        let queue = fields
            .text("queue")?
            .unwrap_or_else(|| DEFAULT_QUEUE.into());
        name_field("queue", &queue)?;
        let count = match fields.number("count")? {
            Some(v) => integer_at_least_one("count", v)?,
            None => 1,
        };
        let lease_ms = lease_of(fields.number("leaseMs")?)?;
        let names = fields.texts("names")?;
        let worker_id = fields.text("workerId")?.unwrap_or_else(new_worker_id);
        name_field("workerId", &worker_id)?;
        Ok(FetchInput {
            queue,
            names,
            count,
            lease_ms,
            worker_id,
        })
    }
}

/// `leaseMs` of `fetch` and `extendLease`: an integer >= 1 (a lease of 0
/// would be expired when taken) and a stored duration; 30 000 when absent.
pub fn lease_of(v: Option<f64>) -> Result<i64> {
    match v {
        Some(v) => {
            integer_at_least_one("leaseMs", v)?;
            stored_ms("leaseMs", v)
        }
        None => Ok(DEFAULT_LEASE_MS),
    }
}

/// How a fetched task is settled or kept.
#[derive(Clone, Debug)]
pub enum Settle {
    Finish(Outcome),
    ExtendLease(i64),
}

/// Claim up to `count` due tasks of the queue for the caller's worker id:
/// one claim transaction, lease recovery first, as a worker's claim.
pub async fn fetch(store: &Store, input: FetchInput) -> Result<Vec<Task>> {
    let request = ClaimRequest {
        queues: vec![input.queue],
        worker_id: input.worker_id,
        lease_ms: input.lease_ms,
        names: input.names,
    };
    store.claim(request, input.count).await
}

/// The write `how` on a task `held` names; a refusal of the ownership check
/// is explained from the row as it is now (`refusal`). Nothing is written
/// when refused.
pub async fn settle(store: &Store, held: HeldTask, how: Settle) -> Result<Task> {
    let written = match how {
        Settle::Finish(outcome) => store.finish(held.clone(), outcome).await,
        Settle::ExtendLease(lease_ms) => store.heartbeat(held.clone(), lease_ms).await,
    };
    match written {
        Err(Error::LostLease { .. }) => {
            let row = store.get(Target::Id(held.task_id.clone())).await?;
            Err(refusal(&held, row.as_ref(), store.clock().now_ms()))
        }
        other => other,
    }
}

/// Why the ownership check refused a write of `held` to the row now read
/// back, at `now`: the row is running under another worker's id
/// (`NotOwner`, whether or not that lease is live), under the caller's with
/// the lease run out (`LeaseExpired`), or it is not running, or gone
/// (`NotRunning`). A row running under the caller's id with a live lease
/// means the lease was renewed between the refusal and the read: that is
/// the refusal's own race, reported as `LostLease`.
pub fn refusal(held: &HeldTask, row: Option<&Task>, now: i64) -> Error {
    let Some(row) = row else {
        return Error::NotRunning {
            task_id: held.task_id.clone(),
            status: None,
        };
    };
    if row.status != Status::Running {
        return Error::NotRunning {
            task_id: held.task_id.clone(),
            status: Some(row.status.as_str().into()),
        };
    }
    match row.worker_id.as_deref() {
        Some(owner) if owner != held.worker_id => Error::NotOwner {
            task_id: held.task_id.clone(),
            worker_id: held.worker_id.clone(),
            owner: owner.into(),
        },
        _ if row.lease_until_ms.is_none_or(|until| until <= now) => Error::LeaseExpired {
            task_id: held.task_id.clone(),
            worker_id: held.worker_id.clone(),
        },
        _ => Error::LostLease {
            task_id: held.task_id.clone(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held() -> HeldTask {
        HeldTask {
            task_id: "task_1".into(),
            worker_id: "script_a".into(),
        }
    }

    fn row(status: &str, worker: &str, lease_until_ms: i64) -> Task {
        Task::from_json(&format!(
            r#"{{"id":"task_1","name":"n","queue":"q","status":"{status}","attempt":1,
                "max_attempts":3,"worker_id":"{worker}","lease_until_ms":{lease_until_ms}}}"#
        ))
        .expect("a sample task")
    }

    fn running(worker: &str, lease_until_ms: i64) -> Task {
        row("running", worker, lease_until_ms)
    }

    #[test]
    fn another_workers_live_lease_is_not_owner() {
        let err = refusal(&held(), Some(&running("worker_b", 2_000)), 1_000);
        assert_eq!(err.class_name(), "NotOwner");
        assert_eq!(
            err.to_string(),
            "task task_1 is held by worker worker_b, not script_a"
        );
    }

    #[test]
    fn the_callers_lease_run_out_is_lease_expired() {
        for now in [2_000, 2_001] {
            let err = refusal(&held(), Some(&running("script_a", 2_000)), now);
            assert_eq!(err.class_name(), "LeaseExpired", "at {now}");
        }
        let err = refusal(&held(), Some(&running("script_a", 2_000)), 1_999);
        assert_eq!(err.class_name(), "LostLease", "a lease renewed meanwhile");
    }

    #[test]
    fn a_row_not_running_or_gone_is_not_running() {
        let finished = row("succeeded", "script_a", 2_000);
        let err = refusal(&held(), Some(&finished), 1_000);
        assert_eq!(err.to_string(), "task task_1 is succeeded, not running");
        assert_eq!(refusal(&held(), None, 1_000).to_string(), "no task task_1");
    }

    #[test]
    fn fetch_options_default_and_refuse_by_name() {
        let input = FetchInput::read("{}").unwrap();
        assert_eq!(
            (input.queue.as_str(), input.count, input.lease_ms),
            ("default", 1, 30_000)
        );
        assert!(input.worker_id.starts_with("worker_"));
        let refused = |json: &str| FetchInput::read(json).unwrap_err().to_string();
        assert_eq!(
            refused(r#"{"count":0}"#),
            "count must be an integer >= 1, got 0"
        );
        assert_eq!(
            refused(r#"{"count":1.5}"#),
            "count must be an integer >= 1, got 1.5"
        );
        assert!(refused(r#"{"queue":""}"#).starts_with("queue "));
        assert_eq!(
            refused(r#"{"leaseMs":0}"#),
            "leaseMs must be an integer >= 1, got 0"
        );
        assert!(refused(r#"{"leaseMs":1e16}"#).starts_with("leaseMs must be a finite number"));
        assert!(refused(r#"{"limit":2}"#).starts_with("unknown key \"limit\" in fetch options"));
    }
}
