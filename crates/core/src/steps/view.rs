//! A task's steps as `client.steps(id)`, the dashboard and `cairnq get` show
//! them (docs/api.md, "Durable steps"): each stored step, what the task, when
//! it is queued, is sleeping or waiting for, and its signals no wait has
//! consumed yet (docs/api.md, "Signals").

use serde::Serialize;

use crate::error::Result;
use crate::signals::rows::{PendingSignal, SignalSummaries};
use crate::steps::rows::{StepKind, StepSummary};
use crate::store::{Store, Target};
use crate::task::{Status, Task};

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct StepView<'a> {
    id: &'a str,
    kind: &'static str,
    stored_at_ms: i64,
    /// Bytes of the stored result.
    size: i64,
    wake_at_ms: Option<i64>,
    child_id: Option<&'a str>,
    child_status: Option<&'static str>,
}

/// What a queued task's last suspension waits for.
#[derive(Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
enum Suspension<'a> {
    /// A sleep: the task runs again at `until_ms`.
    #[serde(rename_all = "camelCase")]
    Sleep { step: &'a str, until_ms: i64 },
    /// A child not finished yet: the task runs again when it finishes, or at
    /// `recheck_at_ms` to read it.
    #[serde(rename_all = "camelCase")]
    Child {
        step: &'a str,
        child_id: &'a str,
        child_status: Option<&'static str>,
        recheck_at_ms: i64,
    },
    /// A wait for a signal: the task runs again when one of `name` is
    /// sent, or at `timeout_at_ms`.
    #[serde(rename_all = "camelCase")]
    Signal {
        step: &'a str,
        name: &'a str,
        timeout_at_ms: i64,
    },
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PendingView<'a> {
    name: &'a str,
    /// Bytes of the payload.
    size: i64,
    sent_at_ms: i64,
}

#[derive(Serialize)]
struct StepsView<'a> {
    steps: Vec<StepView<'a>>,
    suspended: Option<Suspension<'a>>,
    signals: Vec<PendingView<'a>>,
}

/// A queued task is sleeping when a sleep step's wake time is its due time
/// (a suspension sets the one to the other), and waiting when a child step's
/// child has not finished.
fn suspension<'a>(
    task: &Task,
    steps: &'a [StepSummary],
    signals: &'a SignalSummaries,
) -> Option<Suspension<'a>> {
    if task.status != Status::Queued {
        return None;
    }
    if let Some(wait) = signals.waits.last() {
        return Some(Suspension::Signal {
            step: &wait.step_id,
            name: &wait.name,
            timeout_at_ms: wait.timeout_at_ms,
        });
    }
    let sleeping = steps
        .iter()
        .rev()
        .find(|step| step.kind == StepKind::Sleep && step.wake_at_ms == Some(task.run_at_ms));
    if let Some(step) = sleeping {
        return Some(Suspension::Sleep {
            step: &step.step_id,
            until_ms: task.run_at_ms,
        });
    }
    steps
        .iter()
        .rev()
        .find(|step| {
            step.kind == StepKind::Child && step.child_status.is_some_and(|s| !s.is_terminal())
        })
        .map(|step| Suspension::Child {
            step: &step.step_id,
            child_id: step.child_id.as_deref().unwrap_or_default(),
            child_status: step.child_status.map(Status::as_str),
            recheck_at_ms: task.run_at_ms,
        })
}

/// `{steps: [{id, kind, storedAtMs, size, wakeAtMs, childId, childStatus}],
/// suspended: null | {kind: "sleep", step, untilMs} | {kind: "child", step,
/// childId, childStatus, recheckAtMs} | {kind: "signal", step, name,
/// timeoutAtMs}, signals: [{name, size, sentAtMs}]}`; `task` is the task's
/// row (`None`: no such task, so nothing is suspended).
pub fn steps_to_json(
    task: Option<&Task>,
    steps: &[StepSummary],
    signals: &SignalSummaries,
) -> String {
    let view = StepsView {
        steps: steps
            .iter()
            .map(|step| StepView {
                id: &step.step_id,
                kind: step.kind.as_str(),
                stored_at_ms: step.created_at_ms,
                size: step.size,
                wake_at_ms: step.wake_at_ms,
                child_id: step.child_id.as_deref(),
                child_status: step.child_status.map(Status::as_str),
            })
            .collect(),
        suspended: task.and_then(|task| suspension(task, steps, signals)),
        signals: signals.pending.iter().map(pending_view).collect(),
    };
    serde_json::to_string(&view).expect("a steps view encodes")
}

fn pending_view(signal: &PendingSignal) -> PendingView<'_> {
    PendingView {
        name: &signal.name,
        size: signal.size,
        sent_at_ms: signal.sent_at_ms,
    }
}

/// `client.steps(id)`: the task's steps and what it waits for, as JSON
/// (`steps_to_json`); no steps on a database without the table. The steps
/// are read whether or not the task is there: a purge takes them with it.
pub async fn steps_of(store: &Store, task_id: &str) -> Result<String> {
    let task = store.get(Target::Id(task_id.to_string())).await?;
    let steps = store.step_summaries(task_id).await?;
    let signals = store.signal_summaries(task_id).await?;
    Ok(steps_to_json(task.as_ref(), &steps, &signals))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(id: &str, kind: StepKind) -> StepSummary {
        StepSummary {
            step_id: id.into(),
            kind,
            size: 0,
            wake_at_ms: None,
            child_id: None,
            created_at_ms: 1,
            child_status: None,
        }
    }

    #[test]
    fn a_queued_task_shows_what_it_waits_for() {
        let none = SignalSummaries::default();
        let mut task = crate::task::tests::sample();
        task.status = Status::Queued;
        task.run_at_ms = 50;
        let sleep = StepSummary {
            wake_at_ms: Some(50),
            ..summary("nap", StepKind::Sleep)
        };
        let text = steps_to_json(Some(&task), &[summary("a", StepKind::Step), sleep], &none);
        let view: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            view["suspended"],
            serde_json::json!({"kind": "sleep", "step": "nap", "untilMs": 50})
        );
        assert_eq!(view["steps"][0]["id"], "a");
        assert_eq!(view["steps"][1]["wakeAtMs"], 50);

        let child = StepSummary {
            child_id: Some("task_c".into()),
            child_status: Some(Status::Running),
            ..summary("kid", StepKind::Child)
        };
        let view: serde_json::Value =
            serde_json::from_str(&steps_to_json(Some(&task), &[child], &none)).unwrap();
        assert_eq!(
            view["suspended"],
            serde_json::json!({"kind": "child", "step": "kid", "childId": "task_c", "childStatus": "running", "recheckAtMs": 50})
        );
        let signals = SignalSummaries {
            waits: vec![crate::signals::rows::WaitSummary {
                step_id: "ok".into(),
                name: "approval".into(),
                timeout_at_ms: 50,
                created_at_ms: 1,
            }],
            pending: vec![PendingSignal {
                name: "note".into(),
                size: 2,
                sent_at_ms: 3,
            }],
        };
        let view: serde_json::Value =
            serde_json::from_str(&steps_to_json(Some(&task), &[], &signals)).unwrap();
        assert_eq!(
            view,
            serde_json::json!({"steps": [], "suspended": {"kind": "signal", "step": "ok", "name": "approval", "timeoutAtMs": 50}, "signals": [{"name": "note", "size": 2, "sentAtMs": 3}]})
        );
        task.status = Status::Running;
        let view: serde_json::Value =
            serde_json::from_str(&steps_to_json(Some(&task), &[], &none)).unwrap();
        assert_eq!(
            view,
            serde_json::json!({"steps": [], "suspended": null, "signals": []})
        );
    }
}
