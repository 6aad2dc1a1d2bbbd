//! Checks shared by the dialect test files, and `shared_suite!`, which makes
//! each of them a test of the dialect file that invokes it.

use std::sync::Arc;

/// The shared suite, called once per driver: every check of this module that
/// needs no more than a store becomes one test of the invoking dialect file,
/// named `shared::<module>::<check>` after the check it runs. `db` makes the
/// test's database (it may `return`, skipping the test, when the dialect's
/// server is not configured) and `store` opens a store on it (a function
/// taking `&db`; two stores on one database where a check needs two). `test`
/// is the test attribute, `threaded` the one for the checks that run a
/// worker. A new check that needs only a store is listed here once and runs
/// on both dialects; checks that also look at the dialect's own tables
/// (ledger rows, the flow tables) stay in the dialect files, beside their
/// extra reads.
macro_rules! shared_suite {
    (test: #[$test:meta], threaded: #[$threaded:meta], db: $db:expr, store: $store:path $(,)?) => {
        /// The shared checks of `common`, one test each (`shared_suite!`).
        mod shared {
            use crate::common as checks;
            shared_suite!(@one #[$test] $db, $store;
                complete_batch_follows_complete,
                a_claim_answers_each_task_as_stored,
                claims_follow_priority_then_due_time,
                stored_delays_are_bounded,
                submit_many_is_all_or_nothing,
                a_write_group_answers_each_write_as_stored,
                purge_count_counts_what_purge_deletes,
                summaries_leave_the_bodies_unread);

            mod fetch {
                use crate::common::fetch as checks;
                shared_suite!(@one #[$test] $db, $store;
                    a_fetched_task_is_extended_and_completed,
                    a_wrong_worker_is_not_owner_and_a_second_complete_not_running,
                    an_expired_lease_says_so_and_writes_nothing);
            }

            mod debounce {
                use crate::common::debounce as checks;
                shared_suite!(@one #[$test] $db, $store;
                    a_burst_makes_one_task_until_it_starts,
                    a_started_task_is_never_merged_into,
                    bad_debounce_input_writes_nothing);
            }

            mod schedules {
                use crate::common::schedules as checks;
                shared_suite!(@one #[$test] $db, $store;
                    bad_input_is_refused_and_writes_nothing,
                    catch_up_follows_the_policy,
                    a_group_goes_with_each_task,
                    dst_changes_fire_each_wall_time_once,
                    a_trigger_makes_one_task_and_moves_nothing,
                    the_window_and_the_limit_bound_the_firing,
                    an_interval_schedule_fires_every_period);
                shared_suite!(@two #[$test] $db, $store;
                    each_occurrence_fires_once,
                    overlap_skip_fires_nothing_while_a_task_is_live);
            }

            mod reserved {
                use crate::common::reserved as checks;
                shared_suite!(@one #[$test] $db, $store;
                    the_api_refuses_reserved_keys,
                    a_foreign_task_under_a_child_key_is_no_child);
                shared_suite!(@two #[$test] $db, $store;
                    a_foreign_task_under_an_occurrence_key_is_no_firing);
            }

            mod steps {
                use crate::common::steps as checks;
                shared_suite!(@one #[$threaded] $db, $store;
                    steps_replay_after_a_failure,
                    a_sleep_frees_its_slot_and_uses_no_attempt,
                    a_parent_waits_for_its_child_without_a_slot,
                    a_parent_rechecks_a_child_nobody_wakes_it_for,
                    a_waiting_parent_is_canceled,
                    misuse_is_refused,
                    a_lost_lease_stores_nothing,
                    the_table_appears_on_first_use_and_goes_with_purged_tasks);
            }

            mod step_restart {
                use crate::common::step_restart as checks;
                shared_suite!(@one #[$threaded] $db, $store;
                    a_restart_reruns_the_step_and_those_after_it,
                    a_restart_is_refused_and_changes_nothing);
            }

            mod signals {
                use crate::common::signals as checks;
                shared_suite!(@one #[$threaded] $db, $store;
                    buffered_signals_are_consumed_in_order,
                    a_signal_wakes_a_waiting_task,
                    a_timed_out_wait_replays_its_null,
                    a_race_of_two_waits_wakes_on_either,
                    a_signal_sent_while_the_run_runs_is_not_lost,
                    bad_signal_input_writes_nothing);
            }

            mod pauses {
                use crate::common::pauses as checks;
                shared_suite!(@one #[$test] $db, $store;
                    pauses_are_idempotent_and_checked);
                shared_suite!(@two #[$threaded] $db, $store;
                    a_paused_queue_is_not_claimed_until_resumed);
            }

            mod bulk {
                use crate::common::bulk as checks;
                shared_suite!(@one #[$test] $db, $store;
                    retry_many_retries_one_page_at_a_time,
                    retry_many_filters_by_completion_time,
                    cancel_many_cancels_queued_and_flags_running,
                    bad_bulk_filters_are_refused);
            }

            mod keep_last {
                use crate::common::keep_last as checks;
                shared_suite!(@one #[$test] $db, $store;
                    keep_last_purges_all_but_the_newest,
                    bad_keep_last_is_refused,
                    a_sweeper_keeps_the_last_of_each_rule);
            }

            mod events {
                use crate::common::events as checks;
                shared_suite!(@one #[$test] $db, $store;
                    every_transition_is_an_event_in_order,
                    a_subscription_filters_and_resumes_after_its_position,
                    a_sweep_past_a_position_is_a_gap,
                    bad_options_create_nothing);
            }

            mod retry {
                use crate::common::retry as checks;
                shared_suite!(@one #[$test] $db, $store;
                    a_submitted_policy_is_stored_and_followed);
            }

            mod dead_letters {
                use crate::common::dead_letters as checks;
                shared_suite!(@one #[$test] $db, $store;
                    a_failure_for_good_submits_one_letter,
                    a_cancel_or_a_plain_task_writes_no_letter,
                    store_fail_and_lease_recovery_dead_letter_too,
                    a_bad_dead_letter_queue_writes_nothing);
            }

            mod unique {
                use crate::common::unique as checks;
                shared_suite!(@one #[$test] $db, $store;
                    a_finished_task_holds_its_key_for_its_window,
                    an_ended_window_frees_the_key,
                    bad_windows_write_nothing);
            }

            mod timeouts {
                use crate::common::timeouts as checks;
                shared_suite!(@one #[$test] $db, $store;
                    a_submitted_timeout_is_kept_in_the_metadata,
                    the_cancel_watch_reads_requested_cancels);
            }

            mod flow {
                use crate::common::flow as checks;
                shared_suite!(@one #[$test] $db, $store;
                    a_rate_limit_caps_the_starts_in_any_window,
                    a_busy_group_is_skipped_until_its_slot_comes_back,
                    groups_take_turns_and_a_backlog_blocks_no_one,
                    a_per_group_rate_holds_each_group,
                    an_undeclared_name_claims_the_head,
                    names_sharing_a_key_draw_from_one_budget,
                    a_key_declared_otherwise_is_replaced_and_reported,
                    a_push_back_holds_the_whole_budget);
            }
        }
    };
    (@one #[$attr:meta] $db:expr, $store:path; $($check:ident),+ $(,)?) => {
        $(
            #[$attr]
            async fn $check() {
                let db = $db;
                let store = $store(&db);
                checks::$check(store.clone()).await;
                store.close().await.unwrap();
            }
        )+
    };
    (@two #[$attr:meta] $db:expr, $store:path; $($check:ident),+ $(,)?) => {
        $(
            #[$attr]
            async fn $check() {
                let db = $db;
                let (store, other) = ($store(&db), $store(&db));
                checks::$check(store.clone(), other.clone()).await;
                store.close().await.unwrap();
                other.close().await.unwrap();
            }
        )+
    };
}

use cairnq_core::store::{
    ClaimRequest, HeldTask, ListInput, PurgeInput, SubmitInput, Target, Write,
};
use cairnq_core::wire::read_items;
use cairnq_core::{Status, Store};

/// `complete_batch`: owned tasks finish (cancel wins and keeps the old result),
/// a task another worker holds is not touched and is absent from the answer.
/// A batch whose every task finishes and one with a task that does not take
/// different paths on SQLite (`complete_many`): both are here.
pub async fn complete_batch_follows_complete(store: Arc<Store>) {
    for name in ["a", "b", "c", "d"] {
        let input = SubmitInput {
            name: name.into(),
            ..SubmitInput::default()
        };
        store.submit(input).await.unwrap();
    }
    let claim = |worker: &str| ClaimRequest {
        queues: vec!["default".into()],
        worker_id: worker.into(),
        lease_ms: 30_000,
        names: None,
    };
    let mine = store.claim(claim("w1"), 3).await.unwrap();
    let theirs = store.claim(claim("w2"), 1).await.unwrap();
    assert_eq!((mine.len(), theirs.len()), (3, 1));
    store.cancel(Target::Id(mine[1].id.clone())).await.unwrap();
    let every_one_finishes = vec![
        (mine[0].id.clone(), Some(r#"{"n":1}"#.to_string())),
        (mine[2].id.clone(), None),
    ];
    let mut done = store
        .complete_batch("w1".into(), every_one_finishes)
        .await
        .unwrap();
    done.sort();
    let mut expected = vec![mine[0].id.clone(), mine[2].id.clone()];
    expected.sort();
    assert_eq!(done, expected);
    let one_is_foreign = vec![
        (mine[1].id.clone(), Some(r#"{"n":2}"#.to_string())),
        (theirs[0].id.clone(), Some("3".to_string())),
    ];
    let done = store
        .complete_batch("w1".into(), one_is_foreign)
        .await
        .unwrap();
    assert_eq!(done, [mine[1].id.clone()]);

    let read = |id: &str| {
        let store = store.clone();
        let id = id.to_string();
        async move { store.get(Target::Id(id)).await.unwrap().unwrap() }
    };
    let first = read(&mine[0].id).await;
    assert_eq!(first.status, Status::Succeeded);
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(first.result.as_deref().unwrap()).unwrap()["n"],
        1
    );
    assert_eq!(first.progress, Some(1.0));
    assert_eq!(first.lease_until_ms, None);
    let canceled = read(&mine[1].id).await;
    assert_eq!((canceled.status, canceled.result), (Status::Canceled, None));
    let empty = read(&mine[2].id).await;
    assert_eq!((empty.status, empty.result), (Status::Succeeded, None));
    let foreign = read(&theirs[0].id).await;
    assert_eq!(
        (foreign.status, foreign.worker_id.as_deref()),
        (Status::Running, Some("w2"))
    );
    // The foreign worker still owns its task.
    let owned = HeldTask {
        task_id: theirs[0].id.clone(),
        worker_id: "w2".into(),
    };
    store.heartbeat(owned, 30_000).await.unwrap();
}

/// A claim answers each task exactly as it stored it, a recovered one (its
/// second attempt) included: SQLite builds the answer from the rows its draw
/// read (`Task::claimed`) rather than reading them back.
pub async fn a_claim_answers_each_task_as_stored(store: Arc<Store>) {
    for (name, priority) in [("a", 0.0), ("b", 5.0), ("c", 0.0)] {
        let input = SubmitInput {
            name: name.into(),
            priority: Some(priority),
            metadata: Some(r#"{"k":"v"}"#.into()),
            ..SubmitInput::default()
        };
        store.submit(input).await.unwrap();
    }
    let claim = |lease_ms: i64| ClaimRequest {
        queues: vec!["default".into()],
        worker_id: "w1".into(),
        lease_ms,
        names: None,
    };
    // A lease already over: the next claim recovers the task, then takes it again.
    let first = store.claim(claim(1), 1).await.unwrap();
    assert_eq!(first.len(), 1);
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    let claimed = store.claim(claim(30_000), 3).await.unwrap();
    assert_eq!(claimed.len(), 3);
    for task in &claimed {
        let stored = store
            .get(Target::Id(task.id.clone()))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(task, &stored);
        assert_eq!(task.status, Status::Running);
    }
    let again = claimed.iter().find(|t| t.id == first[0].id).unwrap();
    assert_eq!(again.attempt, 2);
}

/// docs/protocol.md, "Claim": claims take `priority DESC, run_at_ms, id`. A
/// task not yet due is never claimed; once due, a delayed task competes by the
/// time it became due, so it does not jump ahead of work queued meanwhile,
/// while a higher priority still goes first. Every draw shape is exercised.
pub async fn claims_follow_priority_then_due_time(store: Arc<Store>) {
    let submit = |name: &str, delay_ms: f64, priority: f64| {
        let store = store.clone();
        let input = SubmitInput {
            name: name.into(),
            run_at_delay_ms: Some(delay_ms),
            priority: Some(priority),
            ..SubmitInput::default()
        };
        async move { store.submit(input).await.unwrap() }
    };
    let claim_one = |names: Option<&[&str]>, queues: &[&str]| {
        let store = store.clone();
        let request = ClaimRequest {
            queues: queues.iter().map(|q| q.to_string()).collect(),
            worker_id: "w1".into(),
            lease_ms: 30_000,
            names: names.map(|n| n.iter().map(|n| n.to_string()).collect()),
        };
        async move {
            let rows = store.claim(request, 1).await.unwrap();
            rows.into_iter().map(|t| t.name).collect::<Vec<_>>()
        }
    };
    let default = &["default"][..];
    let lists = &["default", "elsewhere"][..];
    for names in [None, Some(&["late", "meanwhile", "urgent"][..])] {
        for queues in [default, lists] {
            let late = submit("late", 300.0, 0.0).await;
            assert_eq!(
                claim_one(names, queues).await,
                Vec::<String>::new(),
                "not due yet"
            );
            let meanwhile = submit("meanwhile", 0.0, 0.0).await;
            assert!(meanwhile.run_at_ms < late.run_at_ms);
            // Wait until `late` is due by the store's clock.
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
            while cairnq_core::ids::now_ms() <= late.run_at_ms + 5 {
                assert!(
                    std::time::Instant::now() < deadline,
                    "the clock never passed run_at_ms"
                );
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            }
            submit("urgent", 0.0, 1.0).await;
            assert_eq!(claim_one(names, queues).await, ["urgent"]);
            assert_eq!(claim_one(names, queues).await, ["meanwhile"]);
            assert_eq!(claim_one(names, queues).await, ["late"]);
        }
    }
    for name in ["late", "meanwhile"] {
        let one = &[name][..];
        let late = submit(name, 300.0, 0.0).await;
        assert!(
            claim_one(Some(one), default).await.is_empty(),
            "{name} not due yet"
        );
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while cairnq_core::ids::now_ms() <= late.run_at_ms + 5 {
            assert!(
                std::time::Instant::now() < deadline,
                "the clock never passed run_at_ms"
            );
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        assert_eq!(claim_one(Some(one), lists).await, [name]);
    }
}
pub mod bulk;
pub mod dead_letters;
pub mod debounce;
pub mod events;
pub mod fetch;
pub mod flow;
pub mod keep_last;
pub mod pauses;
pub mod reserved;
pub mod retry;
pub mod schedules;
pub mod signals;
pub mod step_restart;
pub mod steps;
pub mod timeouts;
pub mod unique;

/// A delay a stored time cannot hold is refused naming `runAtDelayMs`, and
/// writes nothing; the largest one allowed is stored exactly.
pub async fn stored_delays_are_bounded(store: Arc<Store>) {
    let submit = |delay: f64| SubmitInput {
        name: "job".into(),
        run_at_delay_ms: Some(delay),
        ..SubmitInput::default()
    };
    for (delay, shown) in [
        (f64::INFINITY, "Infinity"),
        (1e300, "1e+300"),
        (1e15 + 1.0, "1000000000000001"),
    ] {
        let err = store.submit(submit(delay)).await.unwrap_err();
        assert!(matches!(err, cairnq_core::Error::Invalid(_)), "{err:?}");
        assert_eq!(
            err.to_string(),
            format!("runAtDelayMs must be a finite number of milliseconds, at most 1e15 (about 31,700 years), got {shown}")
        );
    }
    assert!(store.list(ListInput::default()).await.unwrap().is_empty());
    let far = store.submit(submit(1e15)).await.unwrap();
    assert_eq!(far.run_at_ms - far.created_at_ms, 1_000_000_000_000_000);
    let read = store
        .get(Target::Id(far.id.clone()))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(read.run_at_ms, far.run_at_ms);
}

/// One tick's writes (`write_group`): plain submits, which Postgres inserts
/// with one statement, among a keyed submit, a cancel and a refused submit;
/// each answers on its own, in order, with the row as stored.
pub async fn a_write_group_answers_each_write_as_stored(store: Arc<Store>) {
    let submit = |name: &str, priority: f64, key: Option<&str>| {
        Ok(Write::Submit(SubmitInput {
            name: name.into(),
            payload: Some(format!(r#"{{"name":"{name}"}}"#)),
            priority: Some(priority),
            key: key.map(str::to_string),
            run_at_delay_ms: Some(if name == "later" { 60_000.0 } else { 0.0 }),
            ..SubmitInput::default()
        }))
    };
    let refused = Ok(Write::Submit(SubmitInput {
        name: "refused".into(),
        max_attempts: Some(0.0),
        ..SubmitInput::default()
    }));
    let writes = vec![
        submit("a", 0.0, None),
        submit("later", 5.0, None),
        Ok(Write::Cancel(Target::Id("no-such-task".into()), false)),
        refused,
        submit("keyed", 0.0, Some("group-key")),
        submit("b", 1.0, None),
        submit("c", 2.0, None),
    ];
    let answers = store.write_group(writes).await;
    assert_eq!(answers.len(), 7);
    assert!(matches!(answers[2], Ok(None)), "{:?}", answers[2]);
    assert_eq!(
        answers[3].as_ref().unwrap_err().to_string(),
        "maxAttempts must be >= 1, got 0"
    );
    for (place, name) in [(0, "a"), (1, "later"), (4, "keyed"), (5, "b"), (6, "c")] {
        let answered = answers[place].as_ref().unwrap().as_ref().unwrap();
        assert_eq!(answered.name, name);
        assert!(answered.payload.contains(name), "{}", answered.payload);
        let stored = store.get(Target::Id(answered.id.clone())).await.unwrap();
        assert_eq!(Some(answered), stored.as_ref(), "{name} answered as stored");
    }
    let later = answers[1].as_ref().unwrap().as_ref().unwrap();
    assert_eq!(later.priority, 5);
    assert!(later.run_at_ms >= later.created_at_ms + 60_000);
    assert_eq!(store.stats(None).await.unwrap()["default"][0], 5);
}

/// `submit_many`: refs in item order, keyed items seeing the ones before
/// them; a bad item refused by its place before anything is written, and a
/// refusal while writing rolling every item back.
pub async fn submit_many_is_all_or_nothing(store: Arc<Store>) {
    let item = |name: &str, key: Option<&str>, conflict: Option<&str>| {
        Ok(SubmitInput {
            name: name.into(),
            key: key.map(str::to_string),
            conflict: conflict.map(str::to_string),
            ..SubmitInput::default()
        })
    };
    let refs = store
        .submit_many(vec![
            item("a", None, None),
            item("b", Some("k"), None),
            item("c", Some("k"), None),
        ])
        .await
        .unwrap();
    assert_eq!(refs.len(), 3);
    assert_eq!(
        refs[2], refs[1],
        "the second item on a key reuses the first's task"
    );
    let stored = |id: &str| store.get(Target::Id(id.to_string()));
    assert_eq!(stored(&refs[0].id).await.unwrap().unwrap().name, "a");

    let items = read_items(r#"[{"task":"d"},{"task":"d","options":{"prio":1}}]"#).unwrap();
    let err = store.submit_many(items).await.unwrap_err();
    assert!(
        err.to_string()
            .starts_with("unknown key \"prio\" in items[1].options (known: queue, "),
        "{err}"
    );
    let items = read_items(r#"[{"task":"d","options":{"priority":"high"}}]"#).unwrap();
    let err = store.submit_many(items).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "items[0].options.priority must be a number, got \"high\""
    );
    let err = store
        .submit_many(vec![item("", None, None)])
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "items[0].task must be a non-empty string, got \"\""
    );
    let err = store
        .submit_many(vec![
            item("e", None, None),
            item("f", Some("k2"), None),
            item("g", Some("k"), Some("reject")),
        ])
        .await
        .unwrap_err();
    assert!(
        matches!(err, cairnq_core::Error::AlreadyExists { .. }),
        "{err:?}"
    );
    let all = store.list(ListInput::default()).await.unwrap();
    assert_eq!(all.len(), 2, "only the first call's two tasks: {all:?}");
    assert!(store.get(Target::Key("k2".into())).await.unwrap().is_none());
}

/// `purge_count` counts what `purge` deletes, filter for filter, up to the limit.
pub async fn purge_count_counts_what_purge_deletes(store: Arc<Store>) {
    for (name, queue) in [("a", "q1"), ("a", "q2"), ("b", "q1")] {
        let input = SubmitInput {
            name: name.into(),
            queue: Some(queue.into()),
            ..SubmitInput::default()
        };
        let task = store.submit(input).await.unwrap();
        let claim = ClaimRequest {
            queues: vec![queue.into()],
            worker_id: "w1".into(),
            lease_ms: 30_000,
            names: None,
        };
        assert_eq!(store.claim(claim, 1).await.unwrap().len(), 1);
        let owned = HeldTask {
            task_id: task.id.clone(),
            worker_id: "w1".into(),
        };
        store
            .finish(
                owned,
                cairnq_core::store::Outcome::Complete { result: None },
            )
            .await
            .unwrap();
    }
    store
        .submit(SubmitInput {
            name: "a".into(),
            ..SubmitInput::default()
        })
        .await
        .unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    let filter = |queue: Option<&str>, name: Option<&str>, limit: Option<f64>| PurgeInput {
        queue: queue.map(str::to_string),
        name: name.map(str::to_string),
        limit,
        ..PurgeInput::default()
    };
    let cases = [
        (filter(None, None, None), 3),
        (filter(None, None, Some(2.0)), 2),
        (filter(Some("q1"), None, None), 2),
        (filter(Some("q1"), Some("a"), None), 1),
        (
            PurgeInput {
                status: Some("failed".into()),
                ..PurgeInput::default()
            },
            0,
        ),
        (
            PurgeInput {
                older_than_ms: Some(3_600_000.0),
                ..PurgeInput::default()
            },
            0,
        ),
    ];
    for (input, expected) in &cases {
        assert_eq!(
            store.purge_count(input.clone()).await.unwrap(),
            *expected,
            "{input:?}"
        );
    }
    assert!(store
        .purge_count(PurgeInput {
            limit: Some(0.0),
            ..PurgeInput::default()
        })
        .await
        .is_err());
    let purged = store.purge(filter(Some("q1"), None, None)).await.unwrap();
    assert_eq!(purged.len(), 2);
    assert_eq!(
        store.purge_count(filter(None, None, None)).await.unwrap(),
        1
    );
}

/// `list` with `bodies: Some(false)` reads every column but the bodies.
pub async fn summaries_leave_the_bodies_unread(store: Arc<Store>) {
    let task = store
        .submit(SubmitInput {
            name: "big".into(),
            payload: Some(format!(r#"{{"blob":"{}"}}"#, "x".repeat(100_000))),
            metadata: Some(r#"{"m":1}"#.into()),
            ..SubmitInput::default()
        })
        .await
        .unwrap();
    let whole = store.list(ListInput::default()).await.unwrap();
    let summaries = store
        .list(ListInput {
            bodies: Some(false),
            name: Some("big".into()),
            ..ListInput::default()
        })
        .await
        .unwrap();
    assert_eq!(whole.len(), 1);
    assert_eq!(summaries.len(), 1);
    let summary = &summaries[0];
    assert_eq!(summary.payload, "{}");
    assert_eq!(summary.metadata, "{}");
    assert_eq!(
        (summary.result.as_deref(), summary.error.as_deref()),
        (None, None)
    );
    let expected = cairnq_core::Task {
        payload: "{}".into(),
        metadata: "{}".into(),
        ..whole[0].clone()
    };
    assert_eq!(summary, &expected);
    assert_eq!(whole[0].id, task.id);
    assert!(whole[0].payload.len() > 100_000);
}

/// The protocol's migration ledger of `dialect` ("sqlite" or "postgres"), in
/// order: `tests/fixtures/migration-ledger.json`, the one list every test pins.
pub fn ledger_names(dialect: &str) -> Vec<String> {
    let fixture: serde_json::Value =
        serde_json::from_str(include_str!("../fixtures/migration-ledger.json"))
            .expect("migration-ledger.json is JSON");
    fixture[dialect]
        .as_array()
        .unwrap_or_else(|| panic!("migration-ledger.json has no {dialect} list"))
        .iter()
        .map(|name| name.as_str().expect("a ledger name").to_string())
        .collect()
}
