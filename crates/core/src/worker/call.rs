//! One handler call (docs/api.md, "Dispatch and settlement"): how it ended, and
//! what the worker writes for the tasks its handler left unsettled.

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;

use super::context::TaskContext;
use super::report::Reporter;
use crate::error::Error;
use crate::retry::function_delay_ms;
use crate::task::JsonWriter;
use crate::timeouts::{AbortReason, TimeLimit};

/// About what one task's handler JSON takes with a small payload: a buffer's first guess.
const HANDLER_JSON_BYTES: usize = 256;

/// The tasks of one call, all of the same name.
pub struct Call {
    /// Unique within a worker; how the bindings answer for the call.
    pub id: u64,
    pub name: String,
    /// Array delivery `fn(contexts)` (the registration has `batch`), rather
    /// than `fn(context, payload)`.
    pub batch: bool,
    pub contexts: Vec<Arc<TaskContext>>,
    /// How long the handler may run (docs/api.md, "Time limits and aborts").
    pub(crate) time_limit: Option<TimeLimit>,
    /// Settlement writes of the ended call not answered yet.
    writes: AtomicUsize,
}

/// Calls as the bindings hand them to JS in one text:
/// `[{"id", "name", "batch", "tasks": [what each handler reads of its task]}, …]`
/// (`Task::write_handler_json`, with the queue wait as the calls start, the
/// attempts the task gets under its registration, and whether JS calls its
/// backoff function); `now` on the store's clock.
pub fn calls_to_json(calls: &[Arc<Call>], now: i64) -> String {
    let rows: usize = calls.iter().map(|call| call.contexts.len()).sum();
    let mut out = JsonWriter::with_capacity(rows * HANDLER_JSON_BYTES + calls.len() * 64 + 2);
    out.array(calls, |out, call| {
        out.open();
        out.int_field("id", Some(call.id as i64));
        out.string_field("name", Some(&call.name));
        out.bool_field("batch", call.batch);
        out.key("tasks");
        out.array(&call.contexts, |out, context| {
            context.task().write_handler_json(
                out,
                now,
                context.max_attempts(),
                context.backoff_function(),
            )
        });
        out.close();
    });
    out.finish()
}

impl Call {
    pub(crate) fn new(
        id: u64,
        name: String,
        batch: bool,
        contexts: Vec<Arc<TaskContext>>,
        configured: Option<&TimeLimit>,
    ) -> Call {
        let time_limit = TimeLimit::of_call(contexts.iter().map(|c| c.task()), configured);
        Call {
            id,
            name,
            batch,
            contexts,
            time_limit,
            writes: AtomicUsize::new(0),
        }
    }

    pub fn first_task_id(&self) -> &str {
        self.contexts[0].task_id()
    }

    pub(crate) fn expect_writes(&self, count: usize) {
        self.writes.store(count, SeqCst);
    }

    /// One settlement write answered; true when it was the last.
    pub(crate) fn write_done(&self) -> bool {
        self.writes.fetch_sub(1, SeqCst) == 1
    }
}

/// How a handler call ended, as the JS shim reports it.
#[derive(Clone, Debug)]
pub enum CallOutcome {
    /// The handler returned; one result per context, in call order (the shim
    /// has mapped a single value or a batch's id → result map onto tasks).
    /// Missing trailing entries count as null results.
    Returned(Vec<TaskResult>),
    /// The handler threw; the thrown value is already classified (docs/api.md,
    /// "Errors"). `backoff_ms`: per context, what the registration's backoff
    /// function returned, where JS called it.
    Threw {
        envelope_json: String,
        retryable: bool,
        backoff_ms: Vec<Option<f64>>,
    },
    /// The handler threw the failure `ctx.callChild` step `step_id` threw
    /// (its child failed or was canceled): the task fails for good, naming
    /// the child (`steps::child_failure`), as replaying it would fail again.
    ChildFailed { step_id: String },
    /// The handler threw `LostLease`: leftovers are left to lease expiry.
    LostLease,
    /// A step sent the task back to the queue (docs/api.md, "Durable
    /// steps"): the run is over and its context settled; nothing to write.
    Suspended,
    /// The handler could not be run or its answer not received (the JS side
    /// is going away). Reported as an execute error; leftovers are left to
    /// lease expiry.
    Broken(Error),
}

/// One task's share of a returned value.
#[derive(Clone, Debug)]
pub enum TaskResult {
    /// Encoded JSON; `None` stores SQL NULL (`undefined`/`null`).
    Value(Option<String>),
    /// The value could not be encoded; the message is the encoder's.
    Unserializable(String),
}

/// Why a call ended.
pub(crate) enum Ending {
    Handler(CallOutcome),
    /// The call's time limit passed first: the handler is abandoned.
    TimedOut(TimeLimit),
    /// `stop({ timeoutMs })`'s deadline passed first: the handler is
    /// abandoned, its tasks handed back to their queue.
    Shutdown,
    /// No registration for the name (docs/api.md, "Dispatch and settlement"):
    /// failed for good.
    NoHandler,
}

/// What the worker writes for one leftover task.
pub(crate) enum Settlement {
    Complete(Option<String>),
    Fail {
        envelope: String,
        retryable: bool,
        /// The retry's delay from the registration's backoff function, if
        /// called and its value a delay (else the backoff's).
        delay_ms: Option<i64>,
    },
    /// Back to its queue, due now, its attempt given back.
    HandBack,
}

fn envelope(kind: &str, code: &str, message: &str, retryable: bool) -> String {
    crate::error::envelope(kind, code, message, retryable, serde_json::json!({}))
}

/// The writes an ended call needs: one per context its handler left
/// unsettled. An outcome that leaves the tasks to lease expiry needs none.
pub(crate) fn settlements(
    call: &Call,
    ending: Ending,
    reporter: &Reporter,
) -> Vec<(Arc<TaskContext>, Settlement)> {
    let each: Vec<Settlement> = match ending {
        Ending::Handler(CallOutcome::Returned(mut results)) => {
            results.resize(call.contexts.len(), TaskResult::Value(None));
            results
                .into_iter()
                .map(|result| match result {
                    TaskResult::Value(json) => Settlement::Complete(json),
                    TaskResult::Unserializable(detail) => Settlement::Fail {
                        envelope: envelope(
                            "SerializationError",
                            "unserializable_result",
                            &format!("handler result is not JSON-serializable: {detail}"),
                            false,
                        ),
                        retryable: false,
                        delay_ms: None,
                    },
                })
                .collect()
        }
        Ending::Handler(CallOutcome::Threw {
            envelope_json,
            retryable,
            mut backoff_ms,
        }) => {
            backoff_ms.resize(call.contexts.len(), None);
            call.contexts
                .iter()
                .zip(backoff_ms)
                .map(|(context, backoff_ms)| Settlement::Fail {
                    envelope: envelope_json.clone(),
                    retryable,
                    // A bad value: the worker's backoff instead, the value reported.
                    delay_ms: backoff_ms.and_then(|v| {
                        function_delay_ms(v)
                            .map_err(|err| reporter.execute(err, context.task_id()))
                            .ok()
                    }),
                })
                .collect()
        }
        Ending::Handler(CallOutcome::ChildFailed { step_id }) => call
            .contexts
            .iter()
            .map(|context| Settlement::Fail {
                envelope: context.step_log().child_failure(&step_id),
                retryable: false,
                delay_ms: None,
            })
            .collect(),
        Ending::Handler(CallOutcome::LostLease | CallOutcome::Suspended) => return Vec::new(),
        Ending::Handler(CallOutcome::Broken(err)) => {
            reporter.execute(err, call.first_task_id());
            return Vec::new();
        }
        Ending::TimedOut(limit) => {
            // The handler is abandoned: its own writes are refused from now on.
            for context in &call.contexts {
                context.abort(AbortReason::TimedOut);
            }
            let message = limit.exceeded(&call.name);
            let timeout = envelope("HandlerTimeout", "handler_timeout", &message, true);
            call.contexts
                .iter()
                .map(|_| Settlement::Fail {
                    envelope: timeout.clone(),
                    retryable: true,
                    delay_ms: None,
                })
                .collect()
        }
        Ending::Shutdown => {
            for context in &call.contexts {
                context.abort(AbortReason::Shutdown);
            }
            call.contexts.iter().map(|_| Settlement::HandBack).collect()
        }
        Ending::NoHandler => {
            let message = format!("no handler registered for {}", call.name);
            let failure = envelope("NoHandler", "no_handler", &message, false);
            call.contexts
                .iter()
                .map(|_| Settlement::Fail {
                    envelope: failure.clone(),
                    retryable: false,
                    delay_ms: None,
                })
                .collect()
        }
    };
    call.contexts
        .iter()
        .zip(each)
        .filter(|(context, _)| !context.settled())
        .map(|(context, settlement)| (context.clone(), settlement))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_cross_as_one_json_text() {
        let store = crate::store::Store::sqlite(":memory:", None);
        let context = |id: &str| {
            let task = crate::task::Task {
                id: id.into(),
                ..crate::task::tests::sample()
            };
            let backoff = crate::backoff::Backoff::default();
            Arc::new(TaskContext::new(
                store.clone(),
                task,
                "w".into(),
                30_000,
                backoff,
            ))
        };
        let calls = [
            Arc::new(Call::new(
                7,
                "a\"b".into(),
                true,
                vec![context("t1"), context("t2")],
                None,
            )),
            Arc::new(Call::new(8, "c".into(), false, vec![context("t3")], None)),
        ];
        let value: serde_json::Value =
            serde_json::from_str(&calls_to_json(&calls, crate::ids::now_ms())).unwrap();
        let summary: Vec<_> = value
            .as_array()
            .unwrap()
            .iter()
            .map(|call| {
                let ids: Vec<_> = call["tasks"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|t| t["id"].clone())
                    .collect();
                (
                    call["id"].clone(),
                    call["name"].clone(),
                    call["batch"].clone(),
                    ids,
                )
            })
            .collect();
        assert_eq!(
            summary,
            vec![
                (
                    7.into(),
                    "a\"b".into(),
                    true.into(),
                    vec!["t1".into(), "t2".into()]
                ),
                (8.into(), "c".into(), false.into(), vec!["t3".into()]),
            ]
        );
        let payload: serde_json::Value =
            serde_json::from_str(&crate::task::tests::sample().payload).unwrap();
        assert_eq!(
            value[0]["tasks"][0]["payload"], payload,
            "rows embed their JSON as stored"
        );
        let waited = value[1]["tasks"][0]["queue_wait_ms"].as_i64().unwrap();
        let due = crate::task::tests::sample().run_at_ms;
        let now = crate::ids::now_ms();
        assert!((now - due - 1000..=now - due).contains(&waited));
    }

    #[test]
    fn envelopes_keep_protocol_key_order() {
        assert_eq!(
            envelope(
                "NoHandler",
                "no_handler",
                "no handler registered for x",
                false
            ),
            r#"{"type":"NoHandler","code":"no_handler","message":"no handler registered for x","retryable":false,"details":{}}"#
        );
    }
}
