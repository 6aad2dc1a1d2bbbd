//! The worker loop's own checks: dispatch without a registration, resource
//! declarations, payload charges.

use super::dispatch::payload_bytes;
use super::*;
use crate::store::SubmitInput;

#[test]
fn payload_bytes_follow_compact_json() {
    assert_eq!(
        payload_bytes(r#"{"a": "\u00e9"}"#),
        r#"{"a":"é"}"#.len() as u64
    );
    assert_eq!(payload_bytes("[1, 2]"), 5);
}

#[test]
fn registrations_check_resources_against_the_options() {
    let store = Store::sqlite(":memory:", None);
    let worker = Worker::new(
        store,
        vec!["default".into()],
        WorkerOptions {
            resources: vec![("gpu".into(), 1.0)],
            ..Default::default()
        },
    )
    .unwrap();
    assert!(worker.id().starts_with("worker_"));
    let on_gpu = Registration {
        resource: Some("gpu".into()),
        ..Default::default()
    };
    assert!(worker.register("a", on_gpu).is_ok());
    let on_tpu = Registration {
        resource: Some("tpu".into()),
        ..Default::default()
    };
    assert_eq!(
        worker.register("b", on_tpu).unwrap_err().to_string(),
        "task \"b\" declares resource \"tpu\", which is not in WorkerOptions.resources; declared: gpu"
    );
}

struct NeverCalled;

#[async_trait::async_trait]
impl Invoker for NeverCalled {
    fn start(&self, _calls: &[Arc<Call>]) -> std::result::Result<(), crate::Error> {
        unreachable!("a task without a registration reaches no handler")
    }
}

#[tokio::test]
async fn a_claimed_task_without_a_registration_fails_for_good() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("q.db").to_string_lossy().into_owned();
    let store = Store::sqlite(&path, None);
    let worker = Worker::new(store.clone(), vec!["default".into()], Default::default()).unwrap();
    store
        .submit(SubmitInput {
            name: "ghost".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let request = ClaimRequest {
        queues: vec!["default".into()],
        worker_id: worker.id().into(),
        lease_ms: 30_000,
        names: None,
    };
    let claimed = store.claim(request, 1).await.unwrap();
    let id = claimed[0].id.clone();

    let run = Arc::new(RunState::new(Arc::new(NeverCalled), 1));
    let claim_sources = worker.shared.registry().claim_sources();
    worker.shared.dispatch(&run, &claim_sources, vec![claimed]);
    // The slot is free at once; the failure is written in the background.
    assert_eq!(run.load(), (0, 0, 0));
    while !run.finished() {
        tokio::time::timeout(Duration::from_secs(10), run.changed.notified())
            .await
            .expect("the failure is written");
    }
    let failed = store
        .get(crate::store::Target::Id(id))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(failed.status, crate::task::Status::Failed);
    assert_eq!(
        failed.error.as_deref(),
        Some(
            r#"{"type":"NoHandler","code":"no_handler","message":"no handler registered for ghost","retryable":false,"details":{}}"#
        )
    );
}
