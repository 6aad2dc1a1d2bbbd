//! Schedule checks shared by the dialect test files, driven by an injected
//! clock (`schedule_at`, `fire_due(…, now)`): a five-minute gap costs no
//! five minutes.

use std::sync::Arc;

use cairnq_core::schedule::fire::fire_due;
use cairnq_core::schedule::{occurrence_key, METADATA_KEY};
use cairnq_core::store::{ListInput, SubmitInput, Target, Write};
use cairnq_core::{Error, Store, Task};
use serde_json::{json, Value};

const MINUTE: i64 = 60_000;
/// 2026-03-02T00:00:00Z: a whole minute, so minute occurrences are `T0 + n * MINUTE`.
pub const T0: i64 = 1_772_409_600_000;

fn queues() -> Vec<String> {
    vec!["default".into()]
}

pub fn spec(name: &str, cron: &str, extra: Value) -> String {
    let mut spec = json!({ "name": name, "task": "report", "cron": cron });
    if let Value::Object(extra) = extra {
        spec.as_object_mut().unwrap().extend(extra);
    }
    spec.to_string()
}

async fn tasks_of(store: &Store, schedule: &str) -> Vec<(i64, Task)> {
    let listed = store
        .list(ListInput {
            name: Some("report".into()),
            limit: Some(1000.0),
            ..ListInput::default()
        })
        .await
        .unwrap();
    let mut mine: Vec<(i64, Task)> = listed
        .into_iter()
        .filter_map(|task| {
            let metadata: Value = serde_json::from_str(&task.metadata).unwrap();
            let origin = metadata.get(METADATA_KEY)?;
            (origin["name"] == schedule).then(|| (origin["occurrenceAtMs"].as_i64().unwrap(), task))
        })
        .collect();
    mine.sort_by_key(|(at, _)| *at);
    mine
}

async fn occurrences_of(store: &Store, schedule: &str) -> Vec<i64> {
    tasks_of(store, schedule)
        .await
        .into_iter()
        .map(|(at, _)| at)
        .collect()
}

/// No table until the first `schedule()`; reads and changes of a database
/// without one answer "none" and create nothing.
pub async fn the_table_appears_on_first_use(store: Arc<Store>) {
    store.connect().await.unwrap();
    assert!(!store.backend().schedules_installed().await.unwrap());
    assert!(store.schedules().await.unwrap().is_empty());
    assert!(store.pause_schedule("x", T0).await.unwrap().is_none());
    assert!(store.resume_schedule("x", T0).await.unwrap().is_none());
    assert!(store.unschedule("x").await.unwrap().is_none());
    assert!(!store.backend().schedules_installed().await.unwrap());
    let row = store
        .schedule_at(
            &spec("nightly", "0 2 * * *", json!({"tz": "Europe/Berlin"})),
            T0,
        )
        .await
        .unwrap();
    assert!(store.backend().schedules_installed().await.unwrap());
    // 2026-03-02 02:00 in Berlin (CET) is 01:00Z.
    assert_eq!(row.next_run_at_ms, T0 + 60 * MINUTE);
    assert_eq!(
        (row.queue.as_str(), row.catch_up.as_str()),
        ("default", "latest")
    );
    assert_eq!((row.max_attempts, row.priority, row.paused), (3, 0, false));
    assert_eq!(store.schedules().await.unwrap(), vec![row]);
}

/// Each refusal names its field, and nothing is written: not even the table.
pub async fn bad_input_is_refused_and_writes_nothing(store: Arc<Store>) {
    store.connect().await.unwrap();
    let refusals = [
        (
            json!({"name": "", "task": "t", "cron": "* * * * *"}),
            "name must be a non-empty string",
        ),
        (
            json!({"name": 5, "task": "t", "cron": "* * * * *"}),
            "name must be a string, got 5",
        ),
        (
            json!({"name": "n", "task": 7, "cron": "* * * * *"}),
            "task must be a string, got 7",
        ),
        (
            json!({"name": "n", "cron": "* * * * *"}),
            "task must be a string, got undefined",
        ),
        (
            json!({"name": "n", "task": "t", "cron": "not cron"}),
            "cron \"not cron\" is not valid",
        ),
        (
            json!({"name": "n", "task": "t"}),
            "cron or every must be given, exactly one, got neither",
        ),
        (
            json!({"name": "n", "task": "t", "cron": "* * * * *", "every": 1000}),
            "cron or every must be given, exactly one, got both",
        ),
        (
            json!({"name": "n", "task": "t", "every": 0}),
            "every must be an integer >= 1, got 0",
        ),
        (
            json!({"name": "n", "task": "t", "every": -5}),
            "every must be an integer >= 1, got -5",
        ),
        (
            json!({"name": "n", "task": "t", "every": 1.5}),
            "every must be an integer >= 1, got 1.5",
        ),
        (
            json!({"name": "n", "task": "t", "every": "5m"}),
            "every must be a number, got \"5m\"",
        ),
        (
            json!({"name": "n", "task": "t", "cron": "* * * * *", "overlap": "queue"}),
            "overlap must be \"allow\" or \"skip\", got \"queue\"",
        ),
        (
            json!({"name": "n", "task": "t", "cron": "* * * * *", "overlap": false}),
            "overlap must be a string, got false",
        ),
        (
            json!({"name": "n", "task": "t", "cron": "* * * * *", "startAt": T0, "endAt": T0}),
            "endAt must be after startAt, got endAt 1772409600000 and startAt 1772409600000",
        ),
        (
            json!({"name": "n", "task": "t", "cron": "* * * * *", "startAt": T0, "endAt": T0 - 1}),
            "endAt must be after startAt",
        ),
        (
            json!({"name": "n", "task": "t", "cron": "* * * * *", "startAt": {"cairnq.nonFinite": "NaN"}}),
            "startAt must be a valid Date or epoch milliseconds (an integer >= 0), got NaN",
        ),
        (
            json!({"name": "n", "task": "t", "cron": "* * * * *", "endAt": -1}),
            "endAt must be a valid Date or epoch milliseconds (an integer >= 0), got -1",
        ),
        (
            json!({"name": "n", "task": "t", "cron": "* * * * *", "limit": 0}),
            "limit must be an integer >= 1, got 0",
        ),
        (
            json!({"name": "n", "task": "t", "cron": "* * * * *", "limit": 2.5}),
            "limit must be an integer >= 1, got 2.5",
        ),
        (
            json!({"name": "n", "task": "t", "cron": "* * * * *", "tz": "Nowhere/City"}),
            "tz must be an IANA time zone name, got \"Nowhere/City\"",
        ),
        (
            json!({"name": "n", "task": "t", "cron": "* * * * *", "catchUp": "some"}),
            "catchUp must be \"none\", \"latest\" or \"all\", got \"some\"",
        ),
        (
            json!({"name": "n", "task": "t", "cron": "* * * * *", "maxAttempts": 0}),
            "maxAttempts must be >= 1, got 0",
        ),
        (
            json!({"name": "n", "task": "t", "cron": "* * * * *", "metadata": "[1]"}),
            "metadata must be a plain object",
        ),
        // Numbers JSON cannot carry, as JS sends them (`encodeOptions`).
        (
            json!({"name": "n", "task": "t", "cron": "* * * * *", "priority": {"cairnq.nonFinite": "NaN"}}),
            "priority must be a number from -2147483648 to 2147483647, got NaN",
        ),
        (
            json!({"name": "n", "task": "t", "cron": "* * * * *", "priority": 2147483648_i64}),
            "priority must be a number from -2147483648 to 2147483647, got 2147483648",
        ),
        (
            json!({"name": "n", "task": "t", "cron": "* * * * *", "priority": {"cairnq.nonFinite": "-Infinity"}}),
            "priority must be a number from -2147483648 to 2147483647, got -Infinity",
        ),
        (
            json!({"name": "n", "task": "t", "cron": "* * * * *", "maxAttempts": {"cairnq.nonFinite": "NaN"}}),
            "maxAttempts must be >= 1, got NaN",
        ),
        (
            json!({"name": "n", "task": "t", "cron": "* * * * *", "maxAttempts": {"cairnq.nonFinite": "Infinity"}}),
            "maxAttempts must be >= 1, got Infinity",
        ),
        (
            json!({"name": "n", "task": "t", "cron": "* * * * *", "group": {"cairnq.nonFinite": "NaN"}}),
            "group must be a string, got NaN",
        ),
        (
            json!({"name": "n", "task": "t", "cron": "* * * * *", "group": ""}),
            "group must be a non-empty string, got \"\"",
        ),
        (
            json!({"name": "n", "task": "t", "cron": "* * * * *", "catchup": "none"}),
            "unknown key \"catchup\" in schedule options (known: name, task, cron, every, tz, payload, queue, priority, maxAttempts, metadata, catchUp, group, overlap, startAt, endAt, limit)",
        ),
        (
            json!({"name": "n", "task": "t", "every": 1000, "repeat": 3}),
            "unknown key \"repeat\" in schedule options",
        ),
        (
            json!({"name": "n", "task": "t", "cron": "@midnight"}),
            "cron \"@midnight\" is not valid: the nickname @midnight is not supported",
        ),
        (
            json!({"name": "n", "task": "t", "cron": "@every 5m"}),
            "cron \"@every 5m\" is not valid: the nickname @every is not supported",
        ),
    ];
    for (input, expected) in refusals {
        match store.schedule_at(&input.to_string(), T0).await {
            Err(Error::Invalid(message)) => {
                assert!(message.starts_with(expected), "{message:?} for {input}")
            }
            other => panic!("{input} was not refused: {other:?}"),
        }
    }
    assert!(!store.backend().schedules_installed().await.unwrap());
}

/// Firing, firing again, two stores firing at once, upsert, pause, resume,
/// unschedule: one task per occurrence throughout.
pub async fn each_occurrence_fires_once(store: Arc<Store>, other: Arc<Store>) {
    let payload = json!({"kind": "daily"}).to_string();
    let every_minute = spec(
        "m",
        "* * * * *",
        json!({"payload": payload, "metadata": "{\"team\":\"ops\"}", "priority": 4, "maxAttempts": 2}),
    );
    let row = store.schedule_at(&every_minute, T0 + 10_000).await.unwrap();
    assert_eq!(row.next_run_at_ms, T0 + MINUTE);
    // Nothing is due before its time.
    let early = fire_due(&store, &queues(), T0 + 59_999).await.unwrap();
    assert_eq!((early.tasks, early.next_due_ms), (0, Some(T0 + MINUTE)));
    // Two stores (two workers) fire the same occurrence at once: one task.
    let default = queues();
    let (a, b) = tokio::join!(
        fire_due(&store, &default, T0 + MINUTE),
        fire_due(&other, &default, T0 + MINUTE)
    );
    assert_eq!(a.unwrap().tasks + b.unwrap().tasks, 1);
    assert_eq!(
        fire_due(&store, &queues(), T0 + MINUTE)
            .await
            .unwrap()
            .tasks,
        0
    );
    let fired = tasks_of(&store, "m").await;
    assert_eq!(fired.len(), 1);
    let (at, task) = &fired[0];
    assert_eq!(*at, T0 + MINUTE);
    assert_eq!((task.priority, task.max_attempts), (4, 2));
    let metadata: Value = serde_json::from_str(&task.metadata).unwrap();
    assert_eq!(metadata["team"], "ops");
    assert_eq!(
        metadata[METADATA_KEY],
        json!({"name": "m", "occurrenceAtMs": T0 + MINUTE})
    );
    let by_key = store
        .get(Target::Key(occurrence_key("m", T0 + MINUTE)))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(by_key.id, task.id);
    let schedule = store.schedule_named("m").await.unwrap().unwrap();
    assert_eq!(schedule.last_run_at_ms, Some(T0 + MINUTE));
    assert_eq!(schedule.next_run_at_ms, T0 + 2 * MINUTE);

    // A worker that read the schedule before the others moved it on (its
    // pending occurrence is still the old one) finds the key taken.
    store.backend().schedule_write(|s| s.advance, vec![
        cairnq_core::schedule::rows::SqlArg::Text(json!([{"name": "m", "expected": T0 + 2 * MINUTE, "next": T0 + MINUTE, "last": null}]).to_string()),
        cairnq_core::schedule::rows::SqlArg::Int(T0),
    ]).await.unwrap();
    let stale = fire_due(&store, &queues(), T0 + MINUTE + 500)
        .await
        .unwrap();
    assert_eq!((stale.tasks, stale.advanced), (0, 1));
    assert_eq!(occurrences_of(&store, "m").await, vec![T0 + MINUTE]);

    // Upsert with the same cron keeps the pending occurrence; the new
    // payload goes with the next task.
    let changed = spec("m", "* * * * *", json!({"payload": "{\"kind\":\"new\"}"}));
    let updated = store.schedule_at(&changed, T0 + 90_000).await.unwrap();
    assert_eq!(updated.next_run_at_ms, T0 + 2 * MINUTE);
    assert_eq!(updated.created_at_ms, row.created_at_ms);
    assert_eq!(updated.last_run_at_ms, Some(T0 + MINUTE));
    fire_due(&store, &queues(), T0 + 2 * MINUTE).await.unwrap();
    let fired = tasks_of(&store, "m").await;
    assert_eq!(fired.len(), 2);
    let payload: Value = serde_json::from_str(&fired[1].1.payload).unwrap();
    assert_eq!(payload, json!({"kind": "new"}));
    // Upsert with another cron moves it, and never back onto a fired one.
    let hourly = spec("m", "0 * * * *", json!({}));
    let moved = store
        .schedule_at(&hourly, T0 + 2 * MINUTE + 1)
        .await
        .unwrap();
    assert_eq!(moved.next_run_at_ms, T0 + 60 * MINUTE);
    let every_minute = spec("m", "* * * * *", json!({}));
    let back = store
        .schedule_at(&every_minute, T0 + 2 * MINUTE + 2)
        .await
        .unwrap();
    assert_eq!(back.next_run_at_ms, T0 + 3 * MINUTE);

    // Paused: nothing fires; resumed: it starts from its next occurrence.
    let paused = store
        .pause_schedule("m", T0 + 150_000)
        .await
        .unwrap()
        .unwrap();
    assert!(paused.paused);
    let while_paused = fire_due(&store, &queues(), T0 + 5 * MINUTE).await.unwrap();
    assert_eq!((while_paused.tasks, while_paused.next_due_ms), (0, None));
    let resumed = store
        .resume_schedule("m", T0 + 5 * MINUTE + 1)
        .await
        .unwrap()
        .unwrap();
    assert!(!resumed.paused);
    assert_eq!(resumed.next_run_at_ms, T0 + 6 * MINUTE);
    fire_due(&store, &queues(), T0 + 6 * MINUTE).await.unwrap();
    assert_eq!(
        occurrences_of(&store, "m").await,
        vec![T0 + MINUTE, T0 + 2 * MINUTE, T0 + 6 * MINUTE]
    );
    // Another queue's worker does not fire it.
    let elsewhere = fire_due(&store, &["other".to_string()], T0 + 7 * MINUTE)
        .await
        .unwrap();
    assert_eq!((elsewhere.tasks, elsewhere.next_due_ms), (0, None));

    // Unscheduled: gone, its tasks stay.
    let removed = store.unschedule("m").await.unwrap().unwrap();
    assert_eq!(removed.name, "m");
    assert!(store.unschedule("m").await.unwrap().is_none());
    assert_eq!(
        fire_due(&store, &queues(), T0 + 10 * MINUTE)
            .await
            .unwrap()
            .tasks,
        0
    );
    assert!(store.schedules().await.unwrap().is_empty());
    assert_eq!(occurrences_of(&store, "m").await.len(), 3);
}

/// Five minutes and a half without a worker, then one fires at once.
pub async fn catch_up_follows_the_policy(store: Arc<Store>) {
    for policy in ["none", "latest", "all"] {
        let every_minute = spec(policy, "* * * * *", json!({"catchUp": policy}));
        store.schedule_at(&every_minute, T0 + 1_000).await.unwrap();
    }
    let every_second = spec("seconds", "* * * * * *", json!({"catchUp": "all"}));
    store.schedule_at(&every_second, T0).await.unwrap();
    let now = T0 + 5 * MINUTE + 30_000;
    fire_due(&store, &queues(), now).await.unwrap();
    assert!(occurrences_of(&store, "none").await.is_empty());
    assert_eq!(
        occurrences_of(&store, "latest").await,
        vec![T0 + 5 * MINUTE]
    );
    assert_eq!(
        occurrences_of(&store, "all").await,
        (1..=5).map(|m| T0 + m * MINUTE).collect::<Vec<_>>()
    );
    let seconds = tasks_of(&store, "seconds").await;
    assert_eq!(seconds.len(), 100);
    assert_eq!(seconds[0].0, now - 99_000);
    let first: Value = serde_json::from_str(&seconds[0].1.metadata).unwrap();
    assert_eq!(first[METADATA_KEY]["earlierOccurrencesSkipped"], true);
    for name in ["none", "latest", "all"] {
        let row = store.schedule_named(name).await.unwrap().unwrap();
        assert_eq!(row.next_run_at_ms, T0 + 6 * MINUTE, "{name}");
    }
}

/// The schedule that must still fire past a batch of rows nobody can fire;
/// the dialect test then writes, as another program would, 1000 schedules
/// of `UNFIRABLE_CRON` on its queue, due at `T0`, before it.
pub async fn a_healthy_schedule_among_unfirable_ones(store: &Store) {
    store
        .schedule_at(&spec("healthy", "* * * * *", json!({})), T0 + 10_000)
        .await
        .unwrap();
}

pub const UNFIRABLE_CRON: &str = "not a cron";

/// The 1000 unfirable rows stay pending (reported, passed over) and the
/// healthy schedule fires on time; the next due time is the healthy one's.
pub async fn the_healthy_schedule_fires(store: &Store) {
    let fired = fire_due(store, &queues(), T0 + MINUTE).await.unwrap();
    assert_eq!((fired.tasks, fired.advanced), (1, 1));
    assert_eq!(fired.next_due_ms, Some(T0 + 2 * MINUTE));
    assert_eq!(occurrences_of(store, "healthy").await, vec![T0 + MINUTE]);
    let listed = store.schedules().await.unwrap();
    assert_eq!(listed.len(), 1001, "unfirable rows are still listed");
    assert!(listed
        .iter()
        .filter(|row| row.name != "healthy")
        .all(|row| row.next_run_at_ms == T0));
}

/// A schedule's group joins its metadata, and so every fired task's.
pub async fn a_group_goes_with_each_task(store: Arc<Store>) {
    let grouped = spec(
        "g",
        "* * * * *",
        json!({"group": "customer:7", "metadata": "{\"team\":\"ops\"}"}),
    );
    let row = store.schedule_at(&grouped, T0).await.unwrap();
    let metadata: Value = serde_json::from_str(&row.metadata).unwrap();
    assert_eq!(
        metadata,
        json!({"team": "ops", "cairnq.group": "customer:7"})
    );
    fire_due(&store, &queues(), T0 + MINUTE).await.unwrap();
    let fired = tasks_of(&store, "g").await;
    let metadata: Value = serde_json::from_str(&fired[0].1.metadata).unwrap();
    assert_eq!(metadata["cairnq.group"], "customer:7");
}

/// The DST rule (docs/api.md, "Schedules") as the firing applies it, its
/// clock stepped a minute at a time through New York's changes of 2026:
/// each wall time of a list runs once, a real-time step in each pass.
pub async fn dst_changes_fire_each_wall_time_once(store: Arc<Store>) {
    /// 2026-11-01T04:00Z (00:00 EDT) and 2026-03-08T05:00Z (00:00 EST).
    const FALL_BACK_DAY: i64 = 1_793_505_600_000;
    const SPRING_FORWARD_DAY: i64 = 1_772_946_000_000;
    let rows: [(&str, &str, i64, &[i64]); 4] = [
        // 01:00 and 01:30 EDT only, not again in EST.
        ("list", "0,30 1 * * *", FALL_BACK_DAY, &[60, 90]),
        ("step", "*/30 1 * * *", FALL_BACK_DAY, &[60, 90, 120, 150]),
        // Both skipped: once, at 03:00 EDT (07:00Z).
        ("skipped", "15,45 2 * * *", SPRING_FORWARD_DAY, &[120]),
        ("skipped-step", "*/15 2 * * *", SPRING_FORWARD_DAY, &[]),
    ];
    for (name, cron, day, minutes) in rows {
        let zoned = spec(
            name,
            cron,
            json!({"tz": "America/New_York", "catchUp": "all"}),
        );
        store.schedule_at(&zoned, day).await.unwrap();
        for minute in 1..=5 * 60 {
            fire_due(&store, &queues(), day + minute * MINUTE)
                .await
                .unwrap();
        }
        let expected: Vec<i64> = minutes.iter().map(|m| day + m * MINUTE).collect();
        assert_eq!(occurrences_of(&store, name).await, expected, "{cron}");
        store.unschedule(name).await.unwrap();
    }
}

/// The occurrence's task as a firing submits it: what a worker that crashed
/// before moving the pending occurrence on left behind.
async fn fired_without_advance(store: &Store, schedule: &str, at: i64) {
    let metadata = json!({ METADATA_KEY: { "name": schedule, "occurrenceAtMs": at } });
    let task = SubmitInput {
        name: "report".into(),
        key: Some(occurrence_key(schedule, at)),
        metadata: Some(metadata.to_string()),
        ..SubmitInput::default()
    };
    let mut answers = store.write_group(vec![Ok(Write::OwnSubmit(task))]).await;
    answers.pop().unwrap().unwrap();
}

async fn cancel_all(store: &Store, schedule: &str) {
    for (_, task) in tasks_of(store, schedule).await {
        store.cancel(Target::Id(task.id)).await.unwrap();
    }
}

/// `overlap: "skip"`: an occurrence whose schedule has a task queued or
/// running makes none and is counted, its pending occurrence moved on once;
/// a trigger's task counts as running; a crash between an occurrence's
/// submit and its advance is no skip.
pub async fn overlap_skip_fires_nothing_while_a_task_is_live(store: Arc<Store>, other: Arc<Store>) {
    let skipping = spec("s", "* * * * *", json!({"overlap": "skip"}));
    let row = store.schedule_at(&skipping, T0).await.unwrap();
    assert_eq!((row.overlap.as_str(), row.skipped_count), ("skip", 0));
    fire_due(&store, &queues(), T0 + MINUTE).await.unwrap();
    assert_eq!(occurrences_of(&store, "s").await, vec![T0 + MINUTE]);
    // Its task still queued: the next occurrence, fired by two workers at
    // once, is skipped once and moved on once.
    let default = queues();
    let (a, b) = tokio::join!(
        fire_due(&store, &default, T0 + 2 * MINUTE),
        fire_due(&other, &default, T0 + 2 * MINUTE)
    );
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!((a.tasks + b.tasks, a.skipped + b.skipped), (0, 1));
    let row = store.schedule_named("s").await.unwrap().unwrap();
    assert_eq!(row.next_run_at_ms, T0 + 3 * MINUTE);
    assert_eq!((row.fired_count, row.skipped_count), (1, 1));
    assert_eq!(row.last_skipped_at_ms, Some(T0 + 2 * MINUTE));
    assert_eq!(row.last_run_at_ms, Some(T0 + MINUTE));
    // Nothing live: it fires. A trigger's task is live too.
    cancel_all(&store, "s").await;
    store
        .trigger_schedule("s", T0 + 2 * MINUTE + 1)
        .await
        .unwrap();
    let skipped = fire_due(&store, &queues(), T0 + 3 * MINUTE).await.unwrap();
    assert_eq!((skipped.tasks, skipped.skipped), (0, 1));
    cancel_all(&store, "s").await;
    let fired = fire_due(&store, &queues(), T0 + 4 * MINUTE).await.unwrap();
    assert_eq!((fired.tasks, fired.skipped), (1, 0));
    cancel_all(&store, "s").await;
    // A worker submitted the next occurrence's task and died before moving
    // the schedule on: the next worker takes that task for the firing.
    fired_without_advance(&store, "s", T0 + 5 * MINUTE).await;
    let after_crash = fire_due(&store, &queues(), T0 + 5 * MINUTE).await.unwrap();
    assert_eq!(
        (after_crash.tasks, after_crash.skipped, after_crash.advanced),
        (0, 0, 1)
    );
    let row = store.schedule_named("s").await.unwrap().unwrap();
    assert_eq!(row.next_run_at_ms, T0 + 6 * MINUTE);
    assert_eq!((row.fired_count, row.skipped_count), (3, 2));
    let occurrences = occurrences_of(&store, "s").await;
    assert_eq!(
        occurrences
            .iter()
            .filter(|&&at| at == T0 + 5 * MINUTE)
            .count(),
        1
    );
    // `allow` (the default) fires over a live task.
    store
        .schedule_at(&spec("a", "* * * * *", json!({})), T0)
        .await
        .unwrap();
    fire_due(&store, &queues(), T0 + 6 * MINUTE).await.unwrap();
    fire_due(&store, &queues(), T0 + 7 * MINUTE).await.unwrap();
    assert_eq!(occurrences_of(&store, "a").await.len(), 2);
}

/// `triggerSchedule`: one task now, `triggered` in its origin, the pending
/// occurrence and the counts untouched, paused or not; an unknown name is
/// refused naming it, and writes nothing (not even the table).
pub async fn a_trigger_makes_one_task_and_moves_nothing(store: Arc<Store>) {
    store.connect().await.unwrap();
    let unknown = |err: Error| match err {
        Error::NoSuchSchedule { ref name } => {
            assert_eq!(name, "nope");
            assert_eq!(err.to_string(), "no schedule named \"nope\"");
        }
        other => panic!("{other:?}"),
    };
    unknown(store.trigger_schedule("nope", T0).await.unwrap_err());
    assert!(!store.backend().schedules_installed().await.unwrap());
    let row = store
        .schedule_at(&spec("t", "0 * * * *", json!({"limit": 1})), T0)
        .await
        .unwrap();
    store.pause_schedule("t", T0).await.unwrap();
    let task = store.trigger_schedule("t", T0 + 5_000).await.unwrap();
    let metadata: Value = serde_json::from_str(&task.metadata).unwrap();
    assert_eq!(
        metadata[METADATA_KEY],
        json!({"name": "t", "occurrenceAtMs": T0 + 5_000, "triggered": true})
    );
    assert_eq!(task.name, "report");
    let after = store.schedule_named("t").await.unwrap().unwrap();
    assert_eq!(after.next_run_at_ms, row.next_run_at_ms);
    assert_eq!((after.fired_count, after.last_run_at_ms), (0, None));
    unknown(store.trigger_schedule("nope", T0).await.unwrap_err());
    assert_eq!(tasks_of(&store, "t").await.len(), 1);
}

/// `startAt` holds the first occurrence back; `endAt` and `limit` end the
/// firing, the schedule then finished (never due again).
pub async fn the_window_and_the_limit_bound_the_firing(store: Arc<Store>) {
    let later = spec("later", "* * * * *", json!({"startAt": T0 + 10 * MINUTE}));
    let row = store.schedule_at(&later, T0).await.unwrap();
    assert_eq!(
        (row.next_run_at_ms, row.start_at_ms),
        (T0 + 10 * MINUTE, Some(T0 + 10 * MINUTE))
    );
    let ending = spec(
        "ending",
        "* * * * *",
        json!({"endAt": T0 + 2 * MINUTE + 1, "catchUp": "all"}),
    );
    store.schedule_at(&ending, T0).await.unwrap();
    let limited = spec(
        "limited",
        "* * * * *",
        json!({"limit": 2, "catchUp": "all"}),
    );
    store.schedule_at(&limited, T0).await.unwrap();
    for minute in [1, 5] {
        fire_due(&store, &queues(), T0 + minute * MINUTE + 30_000)
            .await
            .unwrap();
    }
    assert!(occurrences_of(&store, "later").await.is_empty());
    assert_eq!(
        occurrences_of(&store, "ending").await,
        vec![T0 + MINUTE, T0 + 2 * MINUTE]
    );
    assert_eq!(
        occurrences_of(&store, "limited").await,
        vec![T0 + MINUTE, T0 + 2 * MINUTE]
    );
    for name in ["ending", "limited"] {
        let row = store.schedule_named(name).await.unwrap().unwrap();
        assert_eq!(row.fired_count, 2, "{name}");
        assert!(cairnq_core::schedule::finished(&row), "{name}");
    }
    // Finished schedules are never due again; the started one fires.
    let fired = fire_due(&store, &queues(), T0 + 10 * MINUTE).await.unwrap();
    assert_eq!(fired.tasks, 1);
    assert_eq!(fired.next_due_ms, Some(T0 + 11 * MINUTE));
    // An upsert keeps the counts: the limit stays reached.
    let row = store.schedule_at(&limited, T0 + 11 * MINUTE).await.unwrap();
    assert_eq!((row.fired_count, row.run_limit), (2, Some(2)));
}

/// `every`: occurrences a period apart from the first (`startAt`, or a
/// period after `schedule()`), caught up as a cron's are.
pub async fn an_interval_schedule_fires_every_period(store: Arc<Store>) {
    let row = store
        .schedule_at(
            &json!({"name": "i", "task": "report", "every": 90_000}).to_string(),
            T0,
        )
        .await
        .unwrap();
    assert_eq!(
        (row.cron.as_str(), row.every_ms, row.next_run_at_ms),
        ("", Some(90_000), T0 + 90_000)
    );
    fire_due(&store, &queues(), T0 + 90_000).await.unwrap();
    fire_due(&store, &queues(), T0 + 180_000).await.unwrap();
    // Three periods missed: the latest fires, the pending one the next period.
    fire_due(&store, &queues(), T0 + 450_000).await.unwrap();
    assert_eq!(
        occurrences_of(&store, "i").await,
        vec![T0 + 90_000, T0 + 180_000, T0 + 450_000]
    );
    // An upsert with the same period keeps the pending occurrence.
    let again = json!({"name": "i", "task": "report", "every": 90_000}).to_string();
    let kept = store.schedule_at(&again, T0 + 500_000).await.unwrap();
    assert_eq!(kept.next_run_at_ms, T0 + 540_000);
    let started = json!({"name": "j", "task": "report", "every": 60_000, "startAt": T0 + 1_000});
    let row = store.schedule_at(&started.to_string(), T0).await.unwrap();
    assert_eq!(row.next_run_at_ms, T0 + 1_000);
    // Resumed after a pause: the next period after now, counted from the last.
    store.pause_schedule("i", T0 + 500_000).await.unwrap();
    let resumed = store
        .resume_schedule("i", T0 + 700_000)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(resumed.next_run_at_ms, T0 + 720_000);
}
