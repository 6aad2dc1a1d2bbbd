//! Debounced submit on a real store (docs/protocol.md, "Debounced submit").

use std::sync::Arc;
use std::time::Duration;

use cairnq_core::followups::window::HELD_BACK_DELAY_MS;
use cairnq_core::steps::rows::{NewStep, StepKind, Wake};
use cairnq_core::store::{ClaimRequest, HeldTask, ListInput, Outcome, SubmitInput, Target};
use cairnq_core::{Status, Store};

fn debounced(payload: u32, window: f64, max_delay: Option<f64>) -> SubmitInput {
    SubmitInput {
        name: "save".into(),
        key: Some("save:doc-1".into()),
        payload: Some(format!(r#"{{"v":{payload}}}"#)),
        debounce_ms: Some(window),
        max_delay_ms: max_delay,
        ..SubmitInput::default()
    }
}

fn payload_of(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap()
}

/// While the key's task is queued and has never started, a debounced submit
/// updates it in place: the last payload, a start one window after the latest
/// submit, capped at the burst's first submit plus `maxDelayMs`. Once
/// claimed, the next submit makes one follow-up, held back until the running
/// task ends, and the key points at it.
pub async fn a_burst_makes_one_task_until_it_starts(store: Arc<Store>) {
    let first = store
        .submit(debounced(1, 1_000.0, Some(1_500.0)))
        .await
        .unwrap();
    assert_eq!(first.status, Status::Queued);
    assert_eq!(first.run_at_ms - first.created_at_ms, 1_000);

    let second = store
        .submit(debounced(2, 1_000.0, Some(1_500.0)))
        .await
        .unwrap();
    assert_eq!(second.id, first.id);
    assert_eq!(payload_of(&second.payload), payload_of(r#"{"v":2}"#));
    assert!(second.run_at_ms >= first.run_at_ms);
    assert!(second.run_at_ms - second.updated_at_ms <= 1_000);
    assert_eq!(second.created_at_ms, first.created_at_ms);

    tokio::time::sleep(Duration::from_millis(700)).await;
    let capped = store
        .submit(debounced(3, 1_000.0, Some(1_500.0)))
        .await
        .unwrap();
    assert_eq!(capped.id, first.id);
    assert_eq!(capped.run_at_ms, first.created_at_ms + 1_500);
    let read = store
        .get(Target::Id(first.id.clone()))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(payload_of(&read.payload), payload_of(r#"{"v":3}"#));

    // A plain keyed submit still reuses the queued task untouched.
    let plain = SubmitInput {
        debounce_ms: None,
        max_delay_ms: None,
        ..debounced(9, 1.0, None)
    };
    let reused = store.submit(plain).await.unwrap();
    assert_eq!(
        (reused.id.as_str(), reused.run_at_ms),
        (first.id.as_str(), capped.run_at_ms)
    );
    assert_eq!(payload_of(&reused.payload), payload_of(r#"{"v":3}"#));

    tokio::time::sleep(Duration::from_millis(900)).await;
    let claimed = store.claim(claim_request(), 10).await.unwrap();
    assert_eq!(claimed.len(), 1);
    assert_eq!(claimed[0].id, first.id);

    // While it runs, a submit makes one follow-up, held back (queued, its
    // start far ahead), and the key points at it; the running task is left
    // alone.
    let next = store.submit(debounced(4, 1_000.0, None)).await.unwrap();
    assert_ne!(next.id, first.id);
    assert_eq!(next.status, Status::Queued);
    assert_eq!(next.run_at_ms - next.created_at_ms, HELD_BACK_DELAY_MS);
    // Another merges into the follow-up: one running, one waiting.
    let merged = store.submit(debounced(5, 1_000.0, None)).await.unwrap();
    assert_eq!(
        (merged.id.as_str(), merged.run_at_ms),
        (next.id.as_str(), next.run_at_ms)
    );
    assert_eq!(payload_of(&merged.payload), payload_of(r#"{"v":5}"#));
    let keyed = store
        .get(Target::Key("save:doc-1".into()))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(keyed.id, next.id);
    let running = store
        .get(Target::Id(first.id.clone()))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(running.status, Status::Running);
    assert_eq!(payload_of(&running.payload), payload_of(r#"{"v":3}"#));
    assert_eq!(store.list(ListInput::default()).await.unwrap().len(), 2);

    // Released only once the running task has ended: then due one window
    // after its latest submit (or at once, if that has passed).
    assert_eq!(store.backend().release_followups().await.unwrap(), 0);
    let owned = HeldTask {
        task_id: first.id.clone(),
        worker_id: "w1".into(),
    };
    store
        .finish(owned, Outcome::Complete { result: None })
        .await
        .unwrap();
    assert_eq!(store.backend().release_followups().await.unwrap(), 1);
    assert_eq!(store.backend().release_followups().await.unwrap(), 0);
    let released = store
        .get(Target::Id(next.id.clone()))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(released.status, Status::Queued);
    assert!(
        released.run_at_ms >= merged.updated_at_ms + 1_000,
        "{released:?}"
    );
    assert!(
        released.run_at_ms <= cairnq_core::ids::now_ms() + 1_000,
        "{released:?}"
    );
    // An ordinary queued task again: the next submit merges as before.
    let again = store.submit(debounced(6, 1_000.0, None)).await.unwrap();
    assert_eq!(again.id, next.id);
    assert!(again.run_at_ms - again.updated_at_ms <= 1_000);
}

fn claim_request() -> ClaimRequest {
    ClaimRequest {
        queues: vec!["default".into()],
        worker_id: "w1".into(),
        lease_ms: 30_000,
        names: None,
    }
}

/// A task that has started is never merged into, even when it is queued
/// again: one waiting out a retry's backoff keeps its payload and its start,
/// and so does one a suspension (`ctx.sleep`) sent back to the queue; each
/// gets a follow-up instead.
pub async fn a_started_task_is_never_merged_into(store: Arc<Store>) {
    for suspended in [false, true] {
        let key = format!("started:{suspended}");
        let submit = |v: u32| SubmitInput {
            key: Some(key.clone()),
            ..debounced(v, 1.0, None)
        };
        let first = store.submit(submit(1)).await.unwrap();
        tokio::time::sleep(Duration::from_millis(5)).await;
        let claimed = store.claim(claim_request(), 10).await.unwrap();
        assert_eq!(claimed.len(), 1);
        let owned = HeldTask {
            task_id: first.id.clone(),
            worker_id: "w1".into(),
        };
        if suspended {
            let steps = store.backend();
            steps.install_steps().await.unwrap();
            let nap = NewStep {
                step_id: "nap".into(),
                kind: StepKind::Sleep,
                result: None,
                wake: Some(Wake::After(60_000)),
                child_id: None,
            };
            steps
                .suspend(owned, Some(nap), Wake::After(60_000))
                .await
                .unwrap();
        } else {
            let failure = Outcome::Fail {
                error: r#"{"type":"E","code":"handler_error","message":"m","retryable":true,"details":{}}"#.into(),
                retryable: true,
                delay_ms: 60_000,
                dead_letter: Default::default(),
            };
            store.finish(owned, failure).await.unwrap();
        }
        let waiting = store
            .get(Target::Id(first.id.clone()))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(waiting.status, Status::Queued);
        assert_eq!(waiting.attempt, if suspended { 0 } else { 1 });

        let follow_up = store.submit(submit(2)).await.unwrap();
        assert_ne!(follow_up.id, first.id, "suspended: {suspended}");
        assert_eq!(
            follow_up.run_at_ms - follow_up.created_at_ms,
            HELD_BACK_DELAY_MS
        );
        let after = store
            .get(Target::Id(first.id.clone()))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(payload_of(&after.payload), payload_of(r#"{"v":1}"#));
        assert_eq!(after.run_at_ms, waiting.run_at_ms);
        // Still in flight: nothing to release.
        assert_eq!(store.backend().release_followups().await.unwrap(), 0);
    }
}

/// Each refusal names its field and writes nothing.
pub async fn bad_debounce_input_writes_nothing(store: Arc<Store>) {
    let keyless = SubmitInput {
        key: None,
        ..debounced(1, 100.0, None)
    };
    let replace = SubmitInput {
        conflict: Some("replace".into()),
        ..debounced(1, 100.0, None)
    };
    let delayed = SubmitInput {
        run_at_delay_ms: Some(5.0),
        ..debounced(1, 100.0, None)
    };
    let lone_max = SubmitInput {
        debounce_ms: None,
        ..debounced(1, 100.0, Some(200.0))
    };
    for (input, field) in [
        (keyless, "debounceMs"),
        (debounced(1, 0.0, None), "debounceMs"),
        (debounced(1, f64::NAN, None), "debounceMs"),
        (debounced(1, f64::INFINITY, None), "debounceMs"),
        (debounced(1, 100.0, Some(-1.0)), "maxDelayMs"),
        (debounced(1, 100.0, Some(50.0)), "maxDelayMs"),
        (lone_max, "maxDelayMs"),
        (replace, "conflict"),
        (delayed, "runAtDelayMs"),
    ] {
        let err = store.submit(input).await.unwrap_err();
        assert!(matches!(err, cairnq_core::Error::Invalid(_)), "{err:?}");
        assert!(err.to_string().starts_with(field), "{err}");
    }
    assert!(store.list(ListInput::default()).await.unwrap().is_empty());
    assert!(store
        .get(Target::Key("save:doc-1".into()))
        .await
        .unwrap()
        .is_none());
}
