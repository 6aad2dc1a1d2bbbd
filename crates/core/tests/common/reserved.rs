//! Reserved keys (docs/security.md, "Reserved keys"), shared by the dialect
//! test files: the API refuses them, and the core's own submits under them
//! take no task of another program's for theirs.

use std::sync::Arc;

use cairnq_core::ids::new_task_id;
use cairnq_core::schedule::fire::fire_due;
use cairnq_core::schedule::{occurrence_key, METADATA_KEY};
use cairnq_core::store::{Conflict, NewTask, SubmitInput, Target, Write, WriteOp};
use cairnq_core::{Error, Status, Store, Task};
use serde_json::{json, Value};

use super::schedules::{spec, T0};

const MINUTE: i64 = 60_000;
const FORGED: &str = r#"{"approved":true}"#;

/// Another program's keyed submit (another SDK, a script): the protocol's
/// statements as they are, without this API's checks (`replace`: whatever
/// held the key before).
async fn foreign_submit(store: &Store, name: &str, key: &str) -> Task {
    let task = NewTask {
        id: new_task_id(),
        name: name.into(),
        queue: "default".into(),
        payload: FORGED.into(),
        metadata: "{}".into(),
        max_attempts: 3,
        priority: 0,
        delay_ms: 0,
        parent_id: None,
        root_id: None,
        correlation_id: None,
    };
    let op = WriteOp::InsertKeyed(task, key.into(), Conflict::Replace);
    store.backend().write_one(op).await.unwrap().unwrap()
}

async fn by_key(store: &Store, key: &str) -> Task {
    store.get(Target::Key(key.into())).await.unwrap().unwrap()
}

/// `submit` (alone, and in a tick's group) refuses every key in the
/// `cairnq:` namespace, plain or debounced, and writes nothing.
pub async fn the_api_refuses_reserved_keys(store: Arc<Store>) {
    let keyed = |key: &str, debounce_ms: Option<f64>| SubmitInput {
        name: "t".into(),
        key: Some(key.into()),
        debounce_ms,
        ..SubmitInput::default()
    };
    let refused = |answer: Result<Option<Task>, Error>| match answer {
        Err(Error::Invalid(message)) => assert!(
            message.starts_with("key must be outside the \"cairnq:\" namespace"),
            "{message}"
        ),
        other => panic!("a reserved key was not refused: {other:?}"),
    };
    for (key, debounce_ms) in [
        ("cairnq:step:task_1:approve", None),
        ("cairnq:schedule:nightly:1772409600000", None),
        ("cairnq:", Some(1_000.0)),
    ] {
        refused(store.submit(keyed(key, debounce_ms)).await.map(Some));
        let mut answers = store
            .write_group(vec![Ok(Write::Submit(keyed(key, debounce_ms)))])
            .await;
        refused(answers.pop().unwrap());
    }
    assert!(store.stats(None).await.unwrap().is_empty());
    // Only the prefix is reserved.
    store.submit(keyed("my-cairnq:1", None)).await.unwrap();
}

/// A task of another program's under a child's key before the child exists
/// (a forged `{approved: true}`): `callChild`'s submit passes it over and
/// submits the real child, the key now its; the other task stays as it was.
pub async fn a_foreign_task_under_a_child_key_is_no_child(store: Arc<Store>) {
    let parent = "task_parent";
    let key = format!("cairnq:step:{parent}:approval");
    for name in ["approve", "forged"] {
        let forged = foreign_submit(&store, name, &key).await;
        let input = || SubmitInput {
            name: "approve".into(),
            parent_id: Some(parent.into()),
            ..SubmitInput::default()
        };
        let child = store
            .submit_child(parent, "approval", input())
            .await
            .unwrap();
        assert_ne!(child.id, forged.id, "a foreign {name} taken for the child");
        assert_eq!(
            (child.name.as_str(), child.parent_id.as_deref()),
            ("approve", Some(parent))
        );
        assert_eq!(by_key(&store, &key).await.id, child.id);
        let left = store.get(Target::Id(forged.id)).await.unwrap().unwrap();
        let payload: Value = serde_json::from_str(&left.payload).unwrap();
        assert_eq!(
            (left.status, payload),
            (Status::Queued, json!({"approved": true}))
        );
        // Submitted once: the real child under the key is the child.
        let again = store
            .submit_child(parent, "approval", input())
            .await
            .unwrap();
        assert_eq!(again.id, child.id);
    }
}

/// A task of another program's under an occurrence's key (predictable from
/// the cron) does not count as the firing: the occurrence fires, once for
/// two workers firing at once, and its key names the schedule's task.
pub async fn a_foreign_task_under_an_occurrence_key_is_no_firing(
    store: Arc<Store>,
    other: Arc<Store>,
) {
    store
        .schedule_at(&spec("m", "* * * * *", json!({})), T0 + 10_000)
        .await
        .unwrap();
    let key = occurrence_key("m", T0 + MINUTE);
    let forged = foreign_submit(&store, "report", &key).await;
    let queues = vec!["default".to_string()];
    let (a, b) = tokio::join!(
        fire_due(&store, &queues, T0 + MINUTE),
        fire_due(&other, &queues, T0 + MINUTE)
    );
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(a.tasks + b.tasks, 1, "the occurrence fired once");
    let fired = by_key(&store, &key).await;
    assert_ne!(fired.id, forged.id);
    let metadata: Value = serde_json::from_str(&fired.metadata).unwrap();
    assert_eq!(
        metadata[METADATA_KEY],
        json!({"name": "m", "occurrenceAtMs": T0 + MINUTE})
    );
    let schedule = store.schedule_named("m").await.unwrap().unwrap();
    assert_eq!(schedule.next_run_at_ms, T0 + 2 * MINUTE);
}
