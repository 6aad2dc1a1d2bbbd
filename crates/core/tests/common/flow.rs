//! Flow control on a real store (docs/protocol.md, "Flow control tables"):
//! declarations, rate windows and group slots, driven through claim sessions
//! with flow draws.

use std::any::Any;
use std::sync::Arc;
use std::time::Duration;

use cairnq_core::flow::{Declaration, FlowLimits, RateLimit, Replaced};
use cairnq_core::store::{
    ClaimPlan, ClaimRequest, Draw, HeldTask, ListInput, Outcome, SubmitInput, Target,
};
use cairnq_core::worker::{Registration, Worker};
use cairnq_core::{Status, Store, Task};

/// A session of one flow draw.
pub struct FlowDraw {
    draw: Option<Draw>,
    pub rows: Vec<Task>,
    pub retry_in_ms: Option<i64>,
}

impl ClaimPlan for FlowDraw {
    fn next_draw(&mut self) -> Option<Draw> {
        self.draw.take()
    }
    fn accept(&mut self, rows: Vec<Task>) {
        self.rows = rows;
    }
    fn rate_limited(&mut self, retry_in_ms: i64) {
        self.retry_in_ms = Some(retry_in_ms);
    }
    fn into_any(self: Box<Self>) -> Box<dyn Any + Send> {
        self
    }
}

pub fn request(worker: &str, lease_ms: i64) -> ClaimRequest {
    ClaimRequest {
        queues: vec!["default".into()],
        worker_id: worker.into(),
        lease_ms,
        names: None,
    }
}

/// One flow draw of `name` for up to `limit` tasks: the rows claimed, and
/// when the name's window opens if it was full.
pub async fn draw_with(
    store: &Store,
    request: ClaimRequest,
    name: &str,
    limit: i64,
) -> (Vec<Task>, Option<i64>) {
    let plan = FlowDraw {
        draw: Some(Draw {
            names: Some(vec![name.into()]),
            limit,
            flow: true,
        }),
        rows: Vec::new(),
        retry_in_ms: None,
    };
    match store.claim_session(request, plan).await.unwrap() {
        Some(plan) => (plan.rows, plan.retry_in_ms),
        None => (Vec::new(), None),
    }
}

pub async fn draw(store: &Store, name: &str, limit: i64) -> (Vec<Task>, Option<i64>) {
    draw_with(store, request("w", 30_000), name, limit).await
}

pub fn rate(max: i64, per_ms: i64, per_group: bool) -> FlowLimits {
    FlowLimits {
        rate: Some(RateLimit {
            max,
            per_ms,
            per_group,
        }),
        rate_key: None,
        group_concurrency: None,
    }
}

/// `rate` drawing from the budget of `key`.
pub fn keyed(key: &str, max: i64, per_ms: i64, per_group: bool) -> FlowLimits {
    FlowLimits {
        rate_key: Some(key.into()),
        ..rate(max, per_ms, per_group)
    }
}

pub fn group_concurrency(n: i64) -> FlowLimits {
    FlowLimits {
        rate: None,
        rate_key: None,
        group_concurrency: Some(n),
    }
}

pub async fn declare(store: &Store, worker: &str, name: &str, limits: FlowLimits) {
    let declaration = Declaration {
        name: name.into(),
        limits,
    };
    store
        .backend()
        .declare_flow(worker.into(), vec![declaration])
        .await
        .unwrap();
}

pub async fn submit(store: &Store, name: &str, group: Option<&str>) -> Task {
    store
        .submit(SubmitInput {
            name: name.into(),
            group: group.map(Into::into),
            ..SubmitInput::default()
        })
        .await
        .unwrap()
}

fn group_of(task: &Task) -> Option<String> {
    let metadata: serde_json::Value = serde_json::from_str(&task.metadata).unwrap();
    metadata["cairnq.group"].as_str().map(Into::into)
}

fn groups(tasks: &[Task]) -> Vec<Option<String>> {
    let mut groups: Vec<_> = tasks.iter().map(group_of).collect();
    groups.sort();
    groups
}

async fn complete(store: &Store, task: &Task, worker: &str) {
    let owned = HeldTask {
        task_id: task.id.clone(),
        worker_id: worker.into(),
    };
    store
        .finish(owned, Outcome::Complete { result: None })
        .await
        .unwrap();
}

/// The latest declaration wins; declaring what the table already holds is
/// no change; each replacement names the declaration it replaced.
pub async fn the_latest_declaration_wins(store: Arc<Store>) {
    let backend = store.backend();
    let declare = |worker: &str, limits: FlowLimits| {
        let declaration = Declaration {
            name: "summarize".into(),
            limits,
        };
        backend.declare_flow(worker.into(), vec![declaration])
    };
    assert!(declare("worker_a", rate(10, 1_000, false))
        .await
        .unwrap()
        .is_empty());
    assert!(declare("worker_b", rate(10, 1_000, false))
        .await
        .unwrap()
        .is_empty());
    let replaced = declare("worker_b", rate(20, 1_000, false)).await.unwrap();
    assert_eq!(replaced.len(), 1);
    assert_eq!(replaced[0].previous_by(), "worker_a");
    let Replaced::Name { previous, .. } = &replaced[0] else {
        panic!("{replaced:?}")
    };
    assert_eq!(previous.limits, rate(10, 1_000, false));
    let notice = replaced[0].notice();
    assert!(
        notice.starts_with("task \"summarize\": this worker declares rateLimit { max: 20, perMs: 1000 }, replacing rateLimit { max: 10, perMs: 1000 } declared by worker_a at "),
        "{notice}"
    );
    // Every declaring worker enforces what the table holds: 20 now.
    for _ in 0..25 {
        submit(&store, "summarize", None).await;
    }
    let (claimed, _) = draw(&store, "summarize", 100).await;
    assert_eq!(claimed.len(), 20);
}

/// At most `max` starts in any window; a full window says when it opens and
/// the queued tasks stay queued (no attempt used) until then.
pub async fn a_rate_limit_caps_the_starts_in_any_window(store: Arc<Store>) {
    declare(&store, "w", "embed", rate(3, 600, false)).await;
    for _ in 0..8 {
        submit(&store, "embed", None).await;
    }
    let (first, retry) = draw(&store, "embed", 2).await;
    assert_eq!((first.len(), retry), (2, None));
    let (second, _) = draw(&store, "embed", 10).await;
    assert_eq!(second.len(), 1);
    let (none, retry) = draw(&store, "embed", 10).await;
    assert!(none.is_empty());
    let retry = retry.expect("a full window says when it opens");
    assert!((1..=600).contains(&retry), "{retry}");
    let queued = store
        .list(ListInput {
            status: Some("queued".into()),
            ..ListInput::default()
        })
        .await
        .unwrap();
    assert_eq!(queued.len(), 5);
    assert!(queued.iter().all(|t| t.attempt == 0));
    tokio::time::sleep(Duration::from_millis(retry as u64 + 20)).await;
    let (third, _) = draw(&store, "embed", 10).await;
    assert!(!third.is_empty() && third.len() <= 3, "{}", third.len());
    // No window of 600 ms holds more than 3 claims.
    let mut starts: Vec<i64> = first
        .iter()
        .chain(&second)
        .chain(&third)
        .map(|t| t.updated_at_ms)
        .collect();
    starts.sort_unstable();
    for (i, start) in starts.iter().enumerate() {
        let inside = starts[i..].iter().filter(|s| **s < start + 600).count();
        assert!(inside <= 3, "{starts:?}");
    }
    // Other names flow meanwhile.
    submit(&store, "other", None).await;
    let plain = store.claim(request("w", 30_000), 10).await.unwrap();
    assert!(plain.iter().any(|t| t.name == "other"));
}

/// A group at its concurrency is skipped, the tasks behind it claimed, and its
/// slot comes back when the running task ends: completed, failed for a retry,
/// canceled, or its lease expired with nobody to renew it.
pub async fn a_busy_group_is_skipped_until_its_slot_comes_back(store: Arc<Store>) {
    declare(&store, "w", "export", group_concurrency(1)).await;
    for group in ["a", "a", "a", "a", "b", "b"] {
        submit(&store, "export", Some(group)).await;
    }
    submit(&store, "export", None).await;
    submit(&store, "export", Some("c")).await;
    let (first, _) = draw(&store, "export", 10).await;
    assert_eq!(
        groups(&first),
        [None, Some("a".into()), Some("b".into()), Some("c".into())]
    );
    assert!(draw(&store, "export", 10).await.0.is_empty());

    let held = |group: &str| {
        first
            .iter()
            .find(|t| group_of(t).as_deref() == Some(group))
            .unwrap()
            .clone()
    };
    // Completed: a's slot comes back.
    complete(&store, &held("a"), "w").await;
    let (next, _) = draw(&store, "export", 10).await;
    assert_eq!(groups(&next), [Some("a".into())]);
    // Failed for a retry: b's slot comes back, and b has one more queued.
    let owned = HeldTask {
        task_id: held("b").id,
        worker_id: "w".into(),
    };
    let failed = store
        .finish(
            owned,
            Outcome::Fail {
                error: r#"{"type":"E","code":"x","message":"m","retryable":true,"details":{}}"#
                    .into(),
                retryable: true,
                delay_ms: 0,
                dead_letter: Default::default(),
            },
        )
        .await
        .unwrap();
    assert_eq!(failed.status, Status::Queued);
    let (retried, _) = draw(&store, "export", 10).await;
    assert_eq!(groups(&retried), [Some("b".into())]);
    // Canceled while running: the slot stays taken until the handler ends.
    let running_a = &next[0];
    store
        .cancel(Target::Id(running_a.id.clone()))
        .await
        .unwrap();
    assert!(draw(&store, "export", 10).await.0.is_empty());
    complete(&store, running_a, "w").await;
    assert_eq!(
        store
            .get(Target::Id(running_a.id.clone()))
            .await
            .unwrap()
            .unwrap()
            .status,
        Status::Canceled
    );
    // A lease that expires (a crashed worker) frees the slot too.
    let (short, _) = draw_with(&store, request("crashed", 1_000), "export", 10).await;
    assert_eq!(groups(&short), [Some("a".into())]);
    assert!(draw(&store, "export", 10).await.0.is_empty());
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    let (recovered, _) = draw(&store, "export", 10).await;
    assert_eq!(groups(&recovered), [Some("a".into())]);
}

/// Groups are served in turns: among the due tasks a draw reads (at least
/// the first 16), every group's first before any group's second, so a group
/// with a backlog does not take every slot from one submitted later; and a
/// draw reads past any number of tasks of full groups to the first with room.
pub async fn groups_take_turns_and_a_backlog_blocks_no_one(store: Arc<Store>) {
    declare(&store, "w", "export", group_concurrency(5)).await;
    for _ in 0..10 {
        submit(&store, "export", Some("big")).await;
    }
    submit(&store, "export", Some("late")).await;
    submit(&store, "export", None).await;
    let (first, _) = draw(&store, "export", 4).await;
    assert_eq!(
        groups(&first),
        [
            None,
            Some("big".into()),
            Some("big".into()),
            Some("late".into())
        ]
    );
    // "big" has 3 slots left; "late" and the ungrouped have nothing queued.
    let (second, _) = draw(&store, "export", 10).await;
    assert_eq!(groups(&second), vec![Some("big".to_string()); 3]);
    // Behind 205 queued tasks of the full group, a new group is claimed.
    for _ in 0..200 {
        submit(&store, "export", Some("big")).await;
    }
    submit(&store, "export", Some("behind")).await;
    let (third, _) = draw(&store, "export", 10).await;
    assert_eq!(groups(&third), [Some("behind".into())]);
    assert!(draw(&store, "export", 10).await.0.is_empty());
}

/// A per-group rate: each group has its own window; tasks without a group
/// share one.
pub async fn a_per_group_rate_holds_each_group(store: Arc<Store>) {
    declare(&store, "w", "fetch", rate(2, 60_000, true)).await;
    for group in [Some("a"), Some("a"), Some("a"), Some("b"), None, None, None] {
        submit(&store, "fetch", group).await;
    }
    let (first, retry) = draw(&store, "fetch", 10).await;
    assert_eq!(retry, None);
    assert_eq!(
        groups(&first),
        [
            None,
            None,
            Some("a".into()),
            Some("a".into()),
            Some("b".into())
        ]
    );
    for task in &first {
        complete(&store, task, "w").await;
    }
    // Finishing does not give a start back.
    assert!(draw(&store, "fetch", 10).await.0.is_empty());
    submit(&store, "fetch", Some("c")).await;
    assert_eq!(
        groups(&draw(&store, "fetch", 10).await.0),
        [Some("c".into())]
    );
}

/// A flow draw of a name nobody declared limits for claims the head.
pub async fn an_undeclared_name_claims_the_head(store: Arc<Store>) {
    declare(&store, "w", "limited", rate(1, 1_000, false)).await;
    let submitted = [
        submit(&store, "free", Some("a")).await,
        submit(&store, "free", Some("a")).await,
    ];
    let (claimed, retry) = draw(&store, "free", 10).await;
    assert_eq!(retry, None);
    let mut ids: Vec<_> = claimed.iter().map(|t| t.id.clone()).collect();
    ids.sort();
    let mut expected: Vec<_> = submitted.iter().map(|t| t.id.clone()).collect();
    expected.sort();
    assert_eq!(ids, expected);
}

/// Bad flow options and groups are refused naming the field; nothing is
/// written (the caller checks that no flow table exists either).
pub async fn bad_input_is_refused_and_nothing_is_written(store: Arc<Store>) {
    let worker = Worker::new(store.clone(), vec!["default".into()], Default::default()).unwrap();
    for (options, message) in [
        (
            r#"{"rateLimit":{"max":0,"perMs":1000}}"#,
            "rateLimit.max must be an integer >= 1, got 0",
        ),
        (
            r#"{"rateLimit":{"max":5,"perMs":0}}"#,
            "rateLimit.perMs must be >= 1, got 0",
        ),
        (
            r#"{"rateLimit":{"max":5,"perMs":10,"burst":2}}"#,
            "unknown key \"burst\" in rateLimit (known: key, max, perMs, perGroup)",
        ),
        (
            r#"{"rateLimit":{"key":"","max":5,"perMs":10}}"#,
            "rateLimit.key must be a non-empty string, got \"\"",
        ),
        (
            r#"{"rateLimit":{"key":["k"],"max":5,"perMs":10}}"#,
            "rateLimit.key must be a string, got an array",
        ),
        (
            r#"{"groupConcurrency":1.5}"#,
            "groupConcurrency must be an integer >= 1, got 1.5",
        ),
    ] {
        let refusal = Registration::read(options)
            .and_then(|registration| worker.register("t", registration))
            .unwrap_err();
        assert_eq!(refusal.to_string(), message);
    }
    let refused = store
        .submit(SubmitInput {
            name: "t".into(),
            group: Some(String::new()),
            ..SubmitInput::default()
        })
        .await
        .unwrap_err();
    assert_eq!(
        refused.to_string(),
        "group must be a non-empty string, got \"\""
    );
    let refused = store
        .submit(SubmitInput {
            name: "t".into(),
            group: Some("g".into()),
            metadata: Some("[1]".into()),
            ..SubmitInput::default()
        })
        .await
        .unwrap_err();
    assert_eq!(
        refused.to_string(),
        "group needs metadata to be an object, got [1]"
    );
    // Two names of one worker sharing a key declare the same rate.
    let shared = |max: i64| {
        Registration::read(&format!(
            r#"{{"rateLimit":{{"key":"openai","max":{max},"perMs":1000}}}}"#
        ))
        .unwrap()
    };
    worker.register("chat", shared(10)).unwrap();
    assert_eq!(
        worker.register("embed", shared(20)).unwrap_err().to_string(),
        "task \"embed\" declares rateLimit key \"openai\" as { max: 20, perMs: 1000 }, but task \"chat\" of this worker declares it as { max: 10, perMs: 1000 }: the names sharing a key declare the same max, perMs and perGroup"
    );
    worker.register("embed", shared(10)).unwrap();
    // A name's own registration replaced with another rate is no conflict
    // while no other name shares the key.
    worker.register("chat", shared(10)).unwrap();
    assert!(store.list(ListInput::default()).await.unwrap().is_empty());
    // A submit with a group writes no table of ours.
    let grouped = submit(&store, "t", Some("g")).await;
    assert_eq!(group_of(&grouped).as_deref(), Some("g"));
}

/// Every name declaring a key draws from one budget: what one started the
/// others cannot; a task name spelled like the key keeps a budget of its own.
pub async fn names_sharing_a_key_draw_from_one_budget(store: Arc<Store>) {
    declare(&store, "w", "chat", keyed("openai", 3, 600, false)).await;
    declare(&store, "w", "embed", keyed("openai", 3, 600, false)).await;
    declare(&store, "w", "openai", rate(2, 600, false)).await;
    for name in ["chat", "embed", "openai"] {
        for _ in 0..4 {
            submit(&store, name, None).await;
        }
    }
    let (chat, retry) = draw(&store, "chat", 2).await;
    assert_eq!((chat.len(), retry), (2, None));
    let (embed, _) = draw(&store, "embed", 10).await;
    assert_eq!(embed.len(), 1);
    let (none, retry) = draw(&store, "embed", 10).await;
    assert!(none.is_empty());
    let retry = retry.expect("a full shared window says when it opens");
    assert!((1..=600).contains(&retry), "{retry}");
    let (none, retry) = draw(&store, "chat", 10).await;
    assert!(none.is_empty() && retry.is_some());
    // The name "openai" counts only its own starts.
    let (own, _) = draw(&store, "openai", 10).await;
    assert_eq!(own.len(), 2);
    tokio::time::sleep(Duration::from_millis(retry.unwrap() as u64 + 20)).await;
    let (later, _) = draw(&store, "embed", 10).await;
    assert!(!later.is_empty() && later.len() <= 3, "{}", later.len());
}

/// A key declared with another rate is replaced, the latest winning for
/// every name of the key, and the replacement names both rates.
pub async fn a_key_declared_otherwise_is_replaced_and_reported(store: Arc<Store>) {
    let backend = store.backend();
    let declare = |worker: &str, name: &str, limits: FlowLimits| {
        let declaration = Declaration {
            name: name.into(),
            limits,
        };
        backend.declare_flow(worker.into(), vec![declaration])
    };
    assert!(
        declare("worker_a", "chat", keyed("openai", 2, 1_000, false))
            .await
            .unwrap()
            .is_empty()
    );
    let replaced = declare("worker_b", "embed", keyed("openai", 4, 1_000, false))
        .await
        .unwrap();
    assert_eq!(replaced.len(), 1, "{replaced:?}");
    assert_eq!(replaced[0].previous_by(), "worker_a");
    let notice = replaced[0].notice();
    assert!(
        notice.starts_with("rateLimit key \"openai\": this worker declares { max: 4, perMs: 1000 } (task \"embed\"), replacing { max: 2, perMs: 1000 } declared by worker_a at "),
        "{notice}"
    );
    // "chat" draws by the key's latest rate: 4.
    for _ in 0..6 {
        submit(&store, "chat", None).await;
    }
    let (claimed, _) = draw(&store, "chat", 10).await;
    assert_eq!(claimed.len(), 4);
}

/// `push_back` fills the budget of the task's name until `ms` from now:
/// no name drawing from it starts before, the task itself waits as long
/// with its attempt given back; under a per-group rate only its group waits.
pub async fn a_push_back_holds_the_whole_budget(store: Arc<Store>) {
    declare(&store, "w", "chat", keyed("openai", 50, 1_000, false)).await;
    declare(&store, "w", "embed", keyed("openai", 50, 1_000, false)).await;
    let pushed = submit(&store, "chat", None).await;
    for _ in 0..3 {
        submit(&store, "embed", None).await;
    }
    let (claimed, _) = draw(&store, "chat", 1).await;
    assert_eq!(claimed[0].id, pushed.id);
    let owned = HeldTask {
        task_id: pushed.id.clone(),
        worker_id: "w".into(),
    };
    let before = cairnq_core::ids::now_ms();
    store.backend().push_back(owned, 700).await.unwrap();
    let row = store
        .get(Target::Id(pushed.id.clone()))
        .await
        .unwrap()
        .unwrap();
    assert_eq!((row.status, row.attempt), (Status::Queued, 0));
    assert!(row.run_at_ms >= before + 700, "{}", row.run_at_ms - before);
    let (none, retry) = draw(&store, "embed", 10).await;
    assert!(none.is_empty());
    let retry = retry.expect("the filled window says when it opens");
    assert!((1..=700).contains(&retry), "{retry}");
    // Draws until the window opens start nothing; after it, all.
    let mut started = Vec::new();
    while started.len() < 4 {
        let (rows, retry) = draw(&store, "embed", 10).await;
        let (more, _) = draw(&store, "chat", 10).await;
        started.extend(rows.into_iter().chain(more));
        tokio::time::sleep(Duration::from_millis(
            retry.unwrap_or(20).clamp(1, 50) as u64
        ))
        .await;
    }
    for task in &started {
        assert!(
            task.updated_at_ms >= before + 700,
            "{} started {} ms after the push-back",
            task.name,
            task.updated_at_ms - before
        );
    }

    // Per group: the pushed task's group waits, the others do not.
    declare(&store, "w", "fetch", keyed("hosts", 5, 1_000, true)).await;
    let a = submit(&store, "fetch", Some("a")).await;
    let (claimed, _) = draw(&store, "fetch", 1).await;
    assert_eq!(claimed[0].id, a.id);
    let owned = HeldTask {
        task_id: a.id.clone(),
        worker_id: "w".into(),
    };
    store.backend().push_back(owned, 5_000).await.unwrap();
    submit(&store, "fetch", Some("a")).await;
    let b = submit(&store, "fetch", Some("b")).await;
    let (claimed, _) = draw(&store, "fetch", 10).await;
    assert_eq!(groups(&claimed), [Some("b".to_string())]);
    assert_eq!(claimed[0].id, b.id);
}
