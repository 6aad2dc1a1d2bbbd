//! One handler call (API.md §11.6–§11.9): invoke through the bindings, bound
//! by `maxRunMs`, then settle whatever the handler left unsettled.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde::Serialize;
use tokio::task::JoinSet;

use super::completions::Completions;
use super::context::TaskContext;
use super::Reporter;
use crate::error::Error;

/// Runs handlers on behalf of the worker. The bindings implement it over JS
/// functions; the core never learns what a handler is.
#[async_trait]
pub trait Invoker: Send + Sync + 'static {
    /// Run the handler registered under `call.name` on the call's contexts;
    /// resolve when the handler settles. May be abandoned (dropped) when the
    /// call exceeds `maxRunMs`; a late answer must then be discarded.
    async fn invoke(&self, call: Arc<Call>) -> CallOutcome;

    /// Resolve once the thread that runs handlers has executed a no-op. The
    /// worker pings while calls run; an answer later than one heartbeat
    /// interval is reported as `EventLoopBlocked`. The default answers at once.
    async fn ping(&self) {}

    /// A context of a running call has just lost its lease (once per context):
    /// abort the handler's `signal`. Must not block.
    fn lease_lost(&self, _context: &TaskContext) {}
}

/// The tasks of one call, all of the same name.
pub struct Call {
    pub name: String,
    /// Array delivery `fn(contexts)` (the registration has `batch`), rather
    /// than `fn(context, payload)`.
    pub batch: bool,
    pub contexts: Vec<Arc<TaskContext>>,
}

impl Call {
    pub fn first_task_id(&self) -> &str {
        self.contexts[0].task_id()
    }
}

/// How a handler call ended, as the JS shim reports it.
#[derive(Clone, Debug)]
pub enum CallOutcome {
    /// The handler returned; one result per context, in call order (the shim
    /// has mapped a single value or a batch's id → result map onto tasks).
    /// Missing trailing entries count as null results.
    Returned(Vec<TaskResult>),
    /// The handler threw; the thrown value is already classified (API.md §4.1).
    Threw {
        envelope_json: String,
        retryable: bool,
    },
    /// The handler threw `LostLease`: leftovers are left to lease expiry.
    LostLease,
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

/// What the worker writes for one leftover task.
enum Settlement {
    Complete(Option<String>),
    Fail { envelope: String, retryable: bool },
}

/// The `maxRunMs` ceiling and the number as the user wrote it (for messages).
#[derive(Clone, Debug)]
pub(crate) struct MaxRun {
    pub limit: Duration,
    pub shown: String,
}

/// A stored error envelope, keys in protocol order (PROTOCOL §2.5).
#[derive(Serialize)]
struct Envelope<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    code: &'a str,
    message: &'a str,
    retryable: bool,
    details: NoDetails,
}

#[derive(Serialize)]
struct NoDetails {}

fn envelope(kind: &str, code: &str, message: &str, retryable: bool) -> String {
    serde_json::to_string(&Envelope {
        kind,
        code,
        message,
        retryable,
        details: NoDetails {},
    })
    .expect("an envelope of strings encodes")
}

/// Invoke the handler and settle the leftovers. Never fails: every error is
/// reported through `reporter`.
pub(crate) async fn execute(
    call: Arc<Call>,
    invoker: Arc<dyn Invoker>,
    completions: Completions,
    max_run: Option<MaxRun>,
    reporter: Reporter,
) {
    let invocation = invoker.invoke(call.clone());
    let outcome = match &max_run {
        None => Some(invocation.await),
        Some(max_run) => tokio::time::timeout(max_run.limit, invocation).await.ok(),
    };
    let settlements: Vec<Settlement> = match outcome {
        Some(CallOutcome::Returned(mut results)) => {
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
                    },
                })
                .collect()
        }
        Some(CallOutcome::Threw {
            envelope_json,
            retryable,
        }) => call
            .contexts
            .iter()
            .map(|_| Settlement::Fail {
                envelope: envelope_json.clone(),
                retryable,
            })
            .collect(),
        Some(CallOutcome::LostLease) => return,
        Some(CallOutcome::Broken(err)) => {
            reporter.execute(err, call.first_task_id());
            return;
        }
        None => {
            // maxRunMs won: the handler is abandoned, its writes are refused.
            for context in &call.contexts {
                context.mark_lease_lost();
            }
            let max_run = max_run.expect("only a ceiling times out");
            let message = format!(
                "handler for {} exceeded maxRunMs={}ms; the attempt was abandoned",
                call.name, max_run.shown
            );
            let timeout = envelope("HandlerTimeout", "handler_timeout", &message, true);
            call.contexts
                .iter()
                .map(|_| Settlement::Fail {
                    envelope: timeout.clone(),
                    retryable: true,
                })
                .collect()
        }
    };
    settle_leftovers(&call, settlements, &completions, &reporter).await;
}

/// Writes run concurrently (they share commits); each failure is reported
/// against its own task and does not stop the others.
async fn settle_leftovers(
    call: &Call,
    settlements: Vec<Settlement>,
    completions: &Completions,
    reporter: &Reporter,
) {
    let mut writes = JoinSet::new();
    for (context, settlement) in call.contexts.iter().zip(settlements) {
        if context.settled() {
            continue;
        }
        let (context, reporter, completions) =
            (context.clone(), reporter.clone(), completions.clone());
        writes.spawn(async move {
            let written = match settlement {
                Settlement::Complete(result) => {
                    context.complete_leftover(&completions, result).await
                }
                Settlement::Fail {
                    envelope,
                    retryable,
                } => context.fail_leftover(envelope, retryable).await,
            };
            if let Err(err) = written {
                reporter.execute(err, context.task_id());
            }
        });
    }
    while writes.join_next().await.is_some() {}
}

/// A claimed task whose name has no registration: failed for good, no
/// handler and no heartbeat (API.md §11.9).
pub(crate) async fn fail_no_handler(context: TaskContext, reporter: &Reporter) {
    let message = format!("no handler registered for {}", context.task().name);
    let failure = envelope("NoHandler", "no_handler", &message, false);
    if let Err(err) = context.fail_leftover(failure, false).await {
        reporter.execute(err, context.task_id());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
