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
use super::recurrence::Recurrence;
use super::spec::{CatchUp, Overlap, CATCH_UP_CAP, MISFIRE_GRACE_MS};
use super::{occurrence_key, schedule_task};
use crate::error::{Error, Result};
use crate::schedule::rows::{ScheduleRow, SqlArg, SCHEDULES_TABLE};
use crate::store::bad_rows::{report, BadRow};
use crate::store::{Store, SubmitInput, Write};

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
    pub overlap: Overlap,
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
    let recurrence = Recurrence::of(&row.cron, &row.tz, row.every_ms).map_err(|err| {
        let zone_ok = Occurrences::parse("* * * * *", &row.tz).is_ok();
        bad(if zone_ok { "cron" } else { "tz" }, err.to_string())
    })?;
    if serde_json::from_str::<serde::de::IgnoredAny>(&row.payload).is_err() {
        return Err(bad("payload", "is not JSON text".into()));
    }
    let pending = row.next_run_at_ms;
    // Nothing past the end fires, however late the firing.
    let until = row.end_at_ms.map_or(now, |end| end.min(now));
    let latest = || {
        recurrence
            .last_at_or_before(pending, until)
            .filter(|&at| at >= pending)
    };
    let (mut fire, capped) = match CatchUp::parse(&row.catch_up).unwrap_or(CatchUp::Latest) {
        CatchUp::All => recurrence.latest_in(pending, pending, until, CATCH_UP_CAP),
        CatchUp::Latest => (latest().into_iter().collect(), false),
        CatchUp::None => (
            latest()
                .filter(|&at| now - at <= MISFIRE_GRACE_MS)
                .into_iter()
                .collect(),
            false,
        ),
    };
    if let Some(limit) = row.run_limit {
        fire.truncate((limit - row.fired_count).max(0) as usize);
    }
    Ok(Firing {
        occurrences: fire,
        capped,
        next_run_at_ms: recurrence
            .next_after(pending, now)
            .map_err(|err| bad("cron", err.to_string()))?,
        overlap: Overlap::parse(&row.overlap).unwrap_or(Overlap::Allow),
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
    /// Occurrences of `overlap: "skip"` schedules this call skipped.
    pub skipped: usize,
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

/// The `overlap: "skip"` firings decided first, each in one statement
/// (`skip`: a task of its schedule still queued or running skips them all);
/// then each firing's occurrences submitted (one write group), and the
/// pending occurrences of those whose submits all ended moved on (one
/// statement). A crash anywhere leaves a firing's occurrence pending, and
/// the next worker decides it again: its own task found by its key, never
/// taken for a running one.
async fn fire(
    store: &Store,
    firings: Vec<(ScheduleRow, Firing)>,
    now: i64,
    fired: &mut Fired,
) -> Result<()> {
    let mut firing_now = Vec::with_capacity(firings.len());
    for (row, mut firing) in firings {
        let mut passed_over = 0;
        if firing.overlap == Overlap::Skip && !firing.occurrences.is_empty() {
            // One task at most: the latest; the others it stands for are
            // skipped, as it would make them.
            let latest = firing.occurrences.pop().expect("not empty");
            passed_over = firing.occurrences.len();
            match skip(store, &row, &firing, latest, passed_over + 1, now).await? {
                SkipDecision::Skipped => {
                    fired.skipped += passed_over + 1;
                    fired.advanced += 1;
                    continue;
                }
                SkipDecision::DecidedElsewhere => continue,
                SkipDecision::Fire => {}
            }
            firing.occurrences = vec![latest];
            firing.capped = false;
        }
        firing_now.push((row, firing, passed_over));
    }
    let mut writes = Vec::new();
    for (row, firing, _) in &firing_now {
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
    for (row, firing, passed_over) in firing_now {
        let mut written = true;
        let mut made = 0;
        for answer in answers.by_ref().take(firing.occurrences.len()) {
            match answer {
                Ok(_) => {
                    fired.tasks += 1;
                    made += 1;
                }
                Err(Error::AlreadyExists { .. }) => made += 1,
                Err(_) => written = false,
            }
        }
        if written {
            fired.skipped += passed_over;
            advances.push(json!({
                "name": row.name,
                "expected": row.next_run_at_ms,
                "next": firing.next_run_at_ms,
                "last": firing.occurrences.last(),
                "fired": made,
                "skipped": passed_over,
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

/// What `skip` found for an `overlap: "skip"` firing.
enum SkipDecision {
    /// A task of the schedule other than the occurrence's own is queued or
    /// running: the pending occurrence moved on, the skips counted.
    Skipped,
    /// No such task, and the occurrence is still pending: fire it.
    Fire,
    /// Another worker moved the pending occurrence on first (it skipped or
    /// fired it): nothing to do here.
    DecidedElsewhere,
}

/// Decide `row`'s firing in one statement (`count` skips counted when it
/// skips); when it answers no row, one read tells an occurrence still
/// pending from one another worker decided meanwhile.
async fn skip(
    store: &Store,
    row: &ScheduleRow,
    firing: &Firing,
    latest: i64,
    count: usize,
    now: i64,
) -> Result<SkipDecision> {
    let moved = store
        .backend()
        .schedule_write(
            |s| s.skip,
            vec![
                SqlArg::Text(row.name.clone()),
                SqlArg::Int(row.next_run_at_ms),
                SqlArg::Int(firing.next_run_at_ms),
                SqlArg::Int(count as i64),
                SqlArg::Int(now),
                SqlArg::Text(row.queue.clone()),
                SqlArg::Text(row.task_name.clone()),
                SqlArg::Int(latest),
            ],
        )
        .await?;
    if !moved.is_empty() {
        return Ok(SkipDecision::Skipped);
    }
    let pending = store
        .schedule_named(&row.name)
        .await?
        .is_some_and(|current| current.next_run_at_ms == row.next_run_at_ms);
    Ok(if pending {
        SkipDecision::Fire
    } else {
        SkipDecision::DecidedElsewhere
    })
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
    let mut origin = json!({ "name": row.name, "occurrenceAtMs": at });
    if capped {
        origin["earlierOccurrencesSkipped"] = Value::Bool(true);
    }
    schedule_task(row, origin, Some(occurrence_key(&row.name, at)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schedule::finished;

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
            overlap: "allow".into(),
            every_ms: None,
            start_at_ms: None,
            end_at_ms: None,
            run_limit: None,
            fired_count: 0,
            skipped_count: 0,
            last_skipped_at_ms: None,
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

    /// Nothing past the end fires, however late it is found; the schedule
    /// is finished once its pending occurrence passed the end.
    #[test]
    fn the_end_bounds_every_policy() {
        let now = 5 * MINUTE + 30_000;
        for policy in ["latest", "all"] {
            let mut ending = row("* * * * *", policy, MINUTE);
            ending.end_at_ms = Some(3 * MINUTE);
            let firing = plan(&ending, now).unwrap();
            assert_eq!(firing.occurrences.last(), Some(&(3 * MINUTE)), "{policy}");
            assert!(firing.occurrences.iter().all(|&at| at <= 3 * MINUTE));
            ending.next_run_at_ms = firing.next_run_at_ms;
            assert!(finished(&ending), "{policy}");
        }
    }

    /// A limit caps what one firing makes by what is left of it.
    #[test]
    fn a_limit_caps_the_occurrences_left() {
        let mut limited = row("* * * * *", "all", MINUTE);
        limited.run_limit = Some(5);
        limited.fired_count = 3;
        let firing = plan(&limited, 5 * MINUTE + 30_000).unwrap();
        assert_eq!(firing.occurrences, vec![MINUTE, 2 * MINUTE]);
        assert!(!finished(&limited));
        limited.fired_count = 5;
        assert!(finished(&limited));
        assert!(plan(&limited, 6 * MINUTE).unwrap().occurrences.is_empty());
    }

    /// An interval schedule fires whole periods after its pending occurrence.
    #[test]
    fn an_interval_fires_by_its_period() {
        let mut every = row("", "all", 10_000);
        every.every_ms = Some(7_000);
        let firing = plan(&every, 32_000).unwrap();
        assert_eq!(firing.occurrences, vec![10_000, 17_000, 24_000, 31_000]);
        assert_eq!(firing.next_run_at_ms, 38_000);
        every.catch_up = "latest".into();
        assert_eq!(plan(&every, 32_000).unwrap().occurrences, vec![31_000]);
        every.catch_up = "none".into();
        assert_eq!(plan(&every, 32_000).unwrap().occurrences, vec![31_000]);
        // Found later than the grace after its latest occurrence: none.
        every.every_ms = Some(20_000);
        assert!(plan(&every, 50_000 + MISFIRE_GRACE_MS + 1)
            .unwrap()
            .occurrences
            .is_empty());
    }
}
