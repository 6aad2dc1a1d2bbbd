//! Restart from a step shared by the dialect test files (docs/api.md,
//! "Restart from a step"): a real `Worker` runs steps a, b, c; the restart
//! from b runs b and c again and replays a.

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

use cairnq_core::store::{SubmitInput, Target};
use cairnq_core::{Error, Status, Store};

use super::steps::{finished, handler, json, returns, row, run, step, submit};

/// How often each of the steps a, b, c ran its work.
#[derive(Default)]
struct Work([AtomicUsize; 3]);

impl Work {
    fn ran(&self) -> [usize; 3] {
        [0, 1, 2].map(|i| self.0[i].load(SeqCst))
    }
}

pub async fn a_restart_reruns_the_step_and_those_after_it(store: Arc<Store>) {
    let work = Arc::new(Work::default());
    let counted = work.clone();
    let abc = handler(move |ctx| {
        let work = counted.clone();
        async move {
            let mut results = Vec::new();
            for (i, id) in ["a", "b", "c"].into_iter().enumerate() {
                let ran = work.0[i].fetch_add(0, SeqCst);
                let stored = step(&ctx, id, || {
                    work.0[i].fetch_add(1, SeqCst);
                    Some((ran + 1).to_string())
                })
                .await?;
                results.push(stored.unwrap());
                // Apart in time, so the steps' stored order is their run order.
                tokio::time::sleep(Duration::from_millis(3)).await;
            }
            returns(&format!("[{}]", results.join(",")))
        }
    });
    let worker = run(&store, vec![("abc", abc)], &[], 1.0);
    let task = submit(&store, "abc", "{}").await;
    let done = finished(&store, &task.id).await;
    assert_eq!(done.status, Status::Succeeded);
    assert_eq!(json(done.result.as_deref()), serde_json::json!([1, 1, 1]));

    let restarted = store
        .restart_from_step(Target::Id(task.id.clone()), "b", false)
        .await
        .unwrap()
        .expect("the task is there");
    assert_eq!(
        (restarted.status, restarted.result.as_deref()),
        (Status::Queued, None)
    );
    let again = finished(&store, &task.id).await;
    worker.stop().await;
    assert_eq!(again.status, Status::Succeeded);
    assert_eq!(work.ran(), [1, 2, 2], "a replayed, b and c ran again");
    assert_eq!(json(again.result.as_deref()), serde_json::json!([1, 2, 2]));
    assert_eq!(store.load_steps(&task.id).await.unwrap().len(), 3);
}

pub async fn a_restart_is_refused_and_changes_nothing(store: Arc<Store>) {
    let refused = |result: Result<Option<cairnq_core::Task>, Error>| match result {
        Err(Error::Invalid(message)) => message,
        other => panic!("expected a refusal, got {other:?}"),
    };
    assert!(store
        .restart_from_step(Target::Id("task_nobody".into()), "b", false)
        .await
        .unwrap()
        .is_none());
    // A task not finished is refused, whatever steps it has.
    let waiting = submit(&store, "nobody_runs_this", "{}").await;
    assert_eq!(
        refused(
            store
                .restart_from_step(Target::Id(waiting.id.clone()), "b", false)
                .await
        ),
        format!(
            "fromStep: task {} is queued; only a failed, canceled or succeeded task restarts from a step",
            waiting.id
        )
    );

    let one = handler(|ctx| async move {
        step(&ctx, "only", || Some("1".into())).await?;
        returns("1")
    });
    let worker = run(&store, vec![("one", one)], &[], 1.0);
    let task = store
        .submit(SubmitInput {
            name: "one".into(),
            key: Some("restart-me".into()),
            ..SubmitInput::default()
        })
        .await
        .unwrap();
    let done = finished(&store, &task.id).await;
    worker.stop().await;
    assert_eq!(
        refused(
            store
                .restart_from_step(Target::Key("restart-me".into()), "zz", false)
                .await
        ),
        format!("fromStep: task {} has no stored step \"zz\"", task.id)
    );
    assert_eq!(
        refused(
            store
                .restart_from_step(Target::Id(task.id.clone()), "", false)
                .await
        ),
        "fromStep must be a non-empty string, got \"\""
    );
    let after = row(&store, &task.id).await;
    assert_eq!(
        (after.status, after.updated_at_ms),
        (done.status, done.updated_at_ms)
    );
    assert_eq!(store.load_steps(&task.id).await.unwrap().len(), 1);

    let by_key = store
        .restart_from_step(Target::Key("restart-me".into()), "only", true)
        .await
        .unwrap()
        .expect("the key's task");
    assert_eq!((by_key.id, by_key.attempt), (task.id.clone(), 0));
    assert!(store.load_steps(&task.id).await.unwrap().is_empty());
}
