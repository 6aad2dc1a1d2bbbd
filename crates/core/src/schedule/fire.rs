//! The firing step (docs/api.md, "Schedules"; docs/protocol.md,
//! "Schedules"): the schedules of a worker's queues whose pending occurrence
//! has come each become tasks, and their pending occurrence moves on.
//!
//! Exactly once, with no leader: an occurrence's task is a keyed submit of
//! the core's own (`Write::OwnSubmit`: `reject`, against a task of this
//! schedule and occurrence only) under the key `occurrence_key(schedule,
//! occurrence)`, so of all the workers that fire it at once the keyed-submit
//! lock lets one insert and refuses the others (`AlreadyExists`, which here
//! means "fired"). A task of another program's under the key is no firing.
//! Only then does the schedule's pending occurrence move, by a compare and
//! set on its old value: a crash between the two leaves it pending, and the
//! next worker's submit finds the key taken and just moves it on.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use super::cron::Occurrences;
use super::spec::{CatchUp, CATCH_UP_CAP, MISFIRE_GRACE_MS};
use super::{occurrence_key, METADATA_KEY};
use crate::error::{Error, Result};
use crate::store::bad_rows::{report, BadRow};
use crate::store::{ScheduleRow, SqlArg, Store, SubmitInput, Write, SCHEDULES_TABLE};

/// Schedules read (and fired) per statement.
pub const FIRE_BATCH: i64 = 1_000;

/// What one schedule's firing does at `now`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Firing {
    /// The occurrences to turn into tasks, ascending.
    pub occurrences: Vec<i64>,
    /// Whether `catchUp: "all"` left earlier occurrences out (the cap).
    pub capped: bool,
    /// The pending occurrence after this firing: the first after `now`.
    pub next_run_at_ms: i64,
}

/// The catch-up policy applied to a schedule whose pending occurrence
/// (`next_run_at_ms`) is at or before `now`; a row this SDK cannot fire (its
/// cron, zone or payload changed by another program) is a `BadRow`.
pub fn plan(row: &ScheduleRow, now: i64) -> std::result::Result<Firing, BadRow> {
    let bad = |column, why: String| BadRow {
        table: SCHEDULES_TABLE,
        key: row.name.clone(),
        column,
        why,
    };
    let occurrences = Occurrences::parse(&row.cron, &row.tz).map_err(|err| {
        let zone_ok = Occurrences::parse("* * * * *", &row.tz).is_ok();
        bad(if zone_ok { "cron" } else { "tz" }, err.to_string())
    })?;
    if serde_json::from_str::<serde::de::IgnoredAny>(&row.payload).is_err() {
        return Err(bad("payload", "is not JSON text".into()));
    }
    let pending = row.next_run_at_ms;
    let latest = || {
        occurrences
            .last_at_or_before(now)
            .filter(|&at| at >= pending)
    };
    let (fire, capped) = match CatchUp::parse(&row.catch_up).unwrap_or(CatchUp::Latest) {
        CatchUp::All => occurrences.latest_in(pending, now, CATCH_UP_CAP),
        CatchUp::Latest => (latest().into_iter().collect(), false),
        CatchUp::None => (
            latest()
                .filter(|&at| now - at <= MISFIRE_GRACE_MS)
                .into_iter()
                .collect(),
            false,
        ),
    };
    Ok(Firing {
        occurrences: fire,
        capped,
        next_run_at_ms: occurrences
            .next_after(now)
            .map_err(|err| bad("cron", err.to_string()))?,
    })
}

/// What `fire_due` did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Fired {
    /// Tasks this call inserted (occurrences other workers fired first are
    /// not counted).
    pub tasks: usize,
    /// Schedules whose pending occurrence this call moved on.
    pub advanced: usize,
    /// The earliest pending occurrence left on these queues, if any.
    pub next_due_ms: Option<i64>,
}

/// Fire every due schedule of `queues` as of `now` (epoch ms; tests pass
/// their own clock), then read the earliest pending occurrence left. The
/// database must have the schedules table (`Backend::schedules_installed`).
/// Rows nobody can fire stay pending, reported once; a batch they filled is
/// read again without them, so they never keep the others from firing.
pub async fn fire_due(store: &Store, queues: &[String], now: i64) -> Result<Fired> {
    let mut fired = Fired::default();
    let mut unfirable = BTreeSet::new();
    loop {
        let due = store
            .backend()
            .schedule_read(
                |s| s.due,
                vec![
                    SqlArg::Texts(queues.to_vec()),
                    SqlArg::Int(now),
                    SqlArg::Int(FIRE_BATCH),
                    SqlArg::Texts(unfirable.iter().cloned().collect()),
                ],
            )
            .await?;
        let full = due.len() as i64 >= FIRE_BATCH;
        let before = unfirable.len();
        let mut firings = Vec::new();
        for row in due {
            match row.and_then(|row| plan(&row, now).map(|firing| (row, firing))) {
                Ok(firing) => firings.push(firing),
                Err(bad) => {
                    report(&bad);
                    unfirable.insert(bad.key);
                }
            }
        }
        fire(store, firings, now, &mut fired).await?;
        if !full || unfirable.len() == before {
            break;
        }
    }
    fired.next_due_ms = next_due_but(store, queues, unfirable.into_iter().collect()).await?;
    Ok(fired)
}

/// Each firing's occurrences submitted (one write group), then the pending
/// occurrences of those whose submits all ended moved on (one statement).
async fn fire(
    store: &Store,
    firings: Vec<(ScheduleRow, Firing)>,
    now: i64,
    fired: &mut Fired,
) -> Result<()> {
    let mut writes = Vec::new();
    for (row, firing) in &firings {
        for (index, &at) in firing.occurrences.iter().enumerate() {
            let capped = firing.capped && index == 0;
            writes.push(Ok(Write::OwnSubmit(occurrence_task(row, at, capped))));
        }
    }
    let mut answers = if writes.is_empty() {
        Vec::new()
    } else {
        store.write_group(writes).await
    }
    .into_iter();
    let mut advances = Vec::new();
    for (row, firing) in firings {
        let mut written = true;
        for answer in answers.by_ref().take(firing.occurrences.len()) {
            match answer {
                Ok(_) => fired.tasks += 1,
                Err(Error::AlreadyExists { .. }) => {}
                Err(_) => written = false,
            }
        }
        if written {
            advances.push(json!({
                "name": row.name,
                "expected": row.next_run_at_ms,
                "next": firing.next_run_at_ms,
                "last": firing.occurrences.last(),
            }));
        }
    }
    if !advances.is_empty() {
        let moved = store
            .backend()
            .schedule_write(
                |s| s.advance,
                vec![
                    SqlArg::Text(Value::Array(advances).to_string()),
                    SqlArg::Int(now),
                ],
            )
            .await?;
        fired.advanced += moved.len();
    }
    Ok(())
}

/// The earliest pending occurrence of a running schedule of `queues`; a
/// row that cannot be read counts as due now (the firing step looks past it).
pub async fn next_due(store: &Store, queues: &[String]) -> Result<Option<i64>> {
    next_due_but(store, queues, Vec::new()).await
}

/// `next_due` of the schedules not named in `unfirable`.
async fn next_due_but(
    store: &Store,
    queues: &[String],
    unfirable: Vec<String>,
) -> Result<Option<i64>> {
    let rows = store
        .backend()
        .schedule_read(
            |s| s.next_due,
            vec![SqlArg::Texts(queues.to_vec()), SqlArg::Texts(unfirable)],
        )
        .await?;
    Ok(rows
        .into_iter()
        .next()
        .map(|row| row.map_or(i64::MIN, |row| row.next_run_at_ms)))
}

/// The keyed submit an occurrence becomes: the schedule's task, payload and
/// options, its metadata plus `METADATA_KEY`.
fn occurrence_task(row: &ScheduleRow, at: i64, capped: bool) -> SubmitInput {
    let mut metadata: serde_json::Map<String, Value> =
        serde_json::from_str(&row.metadata).unwrap_or_default();
    let mut origin = json!({ "name": row.name, "occurrenceAtMs": at });
    if capped {
        origin["earlierOccurrencesSkipped"] = Value::Bool(true);
    }
    metadata.insert(METADATA_KEY.into(), origin);
    SubmitInput {
        name: row.task_name.clone(),
        payload: Some(row.payload.clone()),
        queue: Some(row.queue.clone()),
        key: Some(occurrence_key(&row.name, at)),
        max_attempts: Some(row.max_attempts as f64),
        priority: Some(row.priority as f64),
        metadata: Some(Value::Object(metadata).to_string()),
        ..SubmitInput::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(cron: &str, catch_up: &str, pending: i64) -> ScheduleRow {
        ScheduleRow {
            name: "s".into(),
            task_name: "t".into(),
            cron: cron.into(),
            tz: "UTC".into(),
            queue: "default".into(),
            payload: "{}".into(),
            metadata: "{}".into(),
            priority: 0,
            max_attempts: 3,
            catch_up: catch_up.into(),
            paused: false,
            next_run_at_ms: pending,
            last_run_at_ms: None,
            created_at_ms: 0,
            updated_at_ms: 0,
        }
    }

    const MINUTE: i64 = 60_000;

    /// A worker that finds its occurrence on time fires it under every policy.
    #[test]
    fn an_occurrence_found_on_time_fires_under_every_policy() {
        for policy in ["none", "latest", "all"] {
            let firing = plan(&row("* * * * *", policy, MINUTE), MINUTE + 250).unwrap();
            assert_eq!(firing.occurrences, vec![MINUTE], "{policy}");
            assert_eq!(firing.next_run_at_ms, 2 * MINUTE);
        }
    }

    /// Five minutes and a half without a worker: five occurrences missed.
    #[test]
    fn after_a_gap_each_policy_fires_what_it_says() {
        let now = 5 * MINUTE + 30_000;
        let fired = |policy: &str| plan(&row("* * * * *", policy, MINUTE), now).unwrap();
        assert!(fired("none").occurrences.is_empty());
        assert_eq!(fired("latest").occurrences, vec![5 * MINUTE]);
        assert_eq!(
            fired("all").occurrences,
            (1..=5).map(|m| m * MINUTE).collect::<Vec<_>>()
        );
        for policy in ["none", "latest", "all"] {
            assert_eq!(fired(policy).next_run_at_ms, 6 * MINUTE);
            assert!(!fired(policy).capped);
        }
        // Every second for five minutes is 300 occurrences: "all" keeps the
        // latest hundred and says so.
        let all = plan(&row("* * * * * *", "all", 1_000), 300_000).unwrap();
        assert_eq!(all.occurrences.len(), CATCH_UP_CAP);
        assert_eq!(all.occurrences[0], 201_000);
        assert_eq!(*all.occurrences.last().unwrap(), 300_000);
        assert!(all.capped);
    }
}
