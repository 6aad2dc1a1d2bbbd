//! Events shared by the dialect test files (docs/api.md, "Events"): the
//! store's own writes, read back through subscriptions.

use std::sync::Arc;
use std::time::Duration;

use cairnq_core::events::{EventsOptions, Subscription};
use cairnq_core::store::{fail_outcome, ClaimRequest, HeldTask, Outcome, SubmitInput, Target};
use cairnq_core::Store;
use serde_json::Value;

fn claim(worker: &str, lease_ms: i64) -> ClaimRequest {
    ClaimRequest {
        queues: vec!["default".into()],
        worker_id: worker.into(),
        lease_ms,
        names: None,
    }
}

async fn submit(store: &Store, name: &str, delay_ms: Option<f64>) -> String {
    let input = SubmitInput {
        name: name.into(),
        run_at_delay_ms: delay_ms,
        ..SubmitInput::default()
    };
    store.submit(input).await.unwrap().id
}

fn held(id: &str, worker: &str) -> HeldTask {
    HeldTask {
        task_id: id.into(),
        worker_id: worker.into(),
    }
}

async fn subscribe(store: &Arc<Store>, options: &str) -> Subscription {
    Subscription::open(store.clone(), EventsOptions::read(options).unwrap())
        .await
        .unwrap()
}

/// Pages until `count` events came.
async fn take(subscription: &Subscription, count: usize) -> Vec<Value> {
    let mut events = Vec::new();
    while events.len() < count {
        let page = tokio::time::timeout(Duration::from_secs(30), subscription.next_page())
            .await
            .unwrap_or_else(|_| panic!("{count} events in time, got {events:?}"))
            .unwrap()
            .expect("open");
        let page: Vec<Value> = serde_json::from_str(&page).unwrap();
        events.extend(page);
    }
    events
}

fn kinds_of(events: &[Value], task_id: &str) -> Vec<String> {
    events
        .iter()
        .filter(|e| e["taskId"] == task_id)
        .map(|e| e["kind"].as_str().unwrap().to_string())
        .collect()
}

/// Every transition of the store's writes is one event, in the order made,
/// with what it carries: a delayed submit's run time, the claim's attempt
/// and worker, each progress update, a retry's error and next run, the
/// result, a final error, a cancel, a lease lost to recovery.
pub async fn every_transition_is_an_event_in_order(store: Arc<Store>) {
    assert!(!store.backend().events_installed().await.unwrap());
    let subscription = subscribe(&store, "{}").await;
    assert!(store.backend().events_installed().await.unwrap());

    let done = submit(&store, "done", None).await;
    let running = store.claim(claim("w1", 30_000), 1).await.unwrap();
    assert_eq!(running[0].id, done);
    for (step, message) in [(0.25, "a"), (0.25, "a"), (0.5, "b")] {
        store
            .progress(held(&done, "w1"), Some(step), Some(message.into()))
            .await
            .unwrap();
    }
    let result = Outcome::Complete {
        result: Some(r#"{"ok":true}"#.into()),
    };
    store.finish(held(&done, "w1"), result).await.unwrap();

    let flaky = submit(&store, "flaky", None).await;
    store.claim(claim("w2", 30_000), 1).await.unwrap();
    let error = r#"{"message":"boom"}"#.to_string();
    let retry = fail_outcome(error.clone(), true, Some(5.0)).unwrap();
    store.finish(held(&flaky, "w2"), retry).await.unwrap();
    tokio::time::sleep(Duration::from_millis(20)).await;
    store.claim(claim("w2", 1), 1).await.unwrap();
    tokio::time::sleep(Duration::from_millis(20)).await;
    // The claim recovers the expired lease, then takes the task again.
    store.claim(claim("w3", 30_000), 1).await.unwrap();
    let last = fail_outcome(error, false, None).unwrap();
    store.finish(held(&flaky, "w3"), last).await.unwrap();

    let later = submit(&store, "later", Some(60_000.0)).await;
    store.cancel(Target::Id(later.clone())).await.unwrap();

    let events = take(&subscription, 15).await;
    assert_eq!(
        kinds_of(&events, &done),
        [
            "queued",
            "started",
            "progress",
            "progress",
            "progress",
            "succeeded"
        ]
    );
    assert_eq!(
        kinds_of(&events, &flaky),
        [
            "queued",
            "started",
            "retrying",
            "started",
            "lease_lost",
            "started",
            "failed"
        ]
    );
    assert_eq!(kinds_of(&events, &later), ["queued", "canceled"]);
    let of = |id: &str, kind: &str| {
        events
            .iter()
            .find(|e| e["taskId"] == id && e["kind"] == kind)
            .unwrap()
            .clone()
    };
    let started = of(&done, "started");
    assert_eq!(
        (started["attempt"].as_i64(), started["workerId"].as_str()),
        (Some(1), Some("w1"))
    );
    let progress: Vec<_> = events
        .iter()
        .filter(|e| e["kind"] == "progress")
        .map(|e| {
            (
                e["progress"].as_f64().unwrap(),
                e["message"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(progress, [(0.25, "a"), (0.25, "a"), (0.5, "b")]);
    assert_eq!(of(&done, "succeeded")["result"]["ok"], true);
    let retrying = of(&flaky, "retrying");
    assert_eq!(retrying["error"]["message"], "boom");
    assert!(retrying["runAt"].as_i64().unwrap() >= retrying["at"].as_i64().unwrap() + 5);
    assert_eq!(of(&flaky, "failed")["error"]["message"], "boom");
    let queued = of(&later, "queued");
    assert!(queued["runAt"].as_i64().unwrap() >= queued["at"].as_i64().unwrap() + 60_000);
    let positions: Vec<String> = events
        .iter()
        .map(|e| e["position"].as_str().unwrap().to_string())
        .collect();
    let mut unique = positions.clone();
    unique.dedup();
    assert_eq!(unique.len(), positions.len(), "no event twice");
    subscription.close();
    assert_eq!(subscription.next_page().await.unwrap(), None);
    assert_eq!(store.event_counters().delivered(), 15);
    assert_eq!(store.event_counters().listeners(), 0);
}

/// A subscription filters by queue, name and task, and one opened after a
/// position reads on from there: nothing twice, nothing missed.
pub async fn a_subscription_filters_and_resumes_after_its_position(store: Arc<Store>) {
    let everything = subscribe(&store, "{}").await;
    let by_name = subscribe(&store, r#"{"name": "b"}"#).await;
    let by_queue = subscribe(&store, r#"{"queue": "other"}"#).await;
    let a = submit(&store, "a", None).await;
    let b = submit(&store, "b", None).await;
    let by_task = subscribe(&store, &format!(r#"{{"taskId": "{a}", "after": "0"}}"#)).await;
    store.cancel(Target::Id(a.clone())).await.unwrap();
    store.cancel(Target::Id(b.clone())).await.unwrap();

    let first = take(&everything, 2).await;
    let resumed = subscribe(
        &store,
        &format!(
            r#"{{"after": "{}"}}"#,
            first[1]["position"].as_str().unwrap()
        ),
    )
    .await;
    let rest = take(&resumed, 2).await;
    assert_eq!(kinds_of(&rest, &a), ["canceled"]);
    assert_eq!(kinds_of(&rest, &b), ["canceled"]);
    assert_eq!(rest.len(), 2);
    let named = take(&by_name, 2).await;
    assert!(named.iter().all(|e| e["taskId"] == b.as_str()), "{named:?}");
    let tasked = take(&by_task, 2).await;
    assert!(
        tasked.iter().all(|e| e["taskId"] == a.as_str()),
        "{tasked:?}"
    );
    // Nothing on the other queue: the page answer waits.
    let none = tokio::time::timeout(Duration::from_millis(200), by_queue.next_page()).await;
    assert!(none.is_err(), "{none:?}");
    assert_eq!(store.event_counters().listeners(), 5);
}

/// Retention deletes the oldest events; a subscription whose position it
/// passed is told with a gap, then reads on from what was kept.
pub async fn a_sweep_past_a_position_is_a_gap(store: Arc<Store>) {
    let watcher = subscribe(&store, r#"{"after": "0"}"#).await;
    for _ in 0..3 {
        submit(&store, "n", None).await;
    }
    let cutoff_keeps_none = cairnq_core::ids::now_ms() + 60_000;
    store
        .backend()
        .sweep_events(cutoff_keeps_none, 1)
        .await
        .unwrap();
    let events = take(&watcher, 2).await;
    assert_eq!(events[0]["kind"], "gap");
    assert_eq!(events[0]["after"], "0");
    assert_eq!(events[1]["kind"], "queued");
    assert_eq!(events.len(), 2, "only the newest was kept: {events:?}");
}

/// Bad options are refused naming the field, and create nothing.
pub async fn bad_options_create_nothing(store: Arc<Store>) {
    for (options, field) in [
        (r#"{"queue": 1}"#, "queue"),
        (r#"{"name": ["a"]}"#, "name"),
        (r#"{"after": "later"}"#, "after"),
    ] {
        let err = EventsOptions::read(options).unwrap_err().to_string();
        assert!(err.contains(field), "{options}: {err}");
    }
    submit(&store, "a", None).await;
    assert!(!store.backend().events_installed().await.unwrap());
}
