//! A worker's calls from claim to end (docs/api.md, "Dispatch and
//! settlement"): the context each task gets, the slots and charges a call
//! waits for, its start, and what its end writes.

use std::sync::Arc;

use super::call::{self, Call, CallOutcome, Ending, Settlement};
use super::context::TaskContext;
use super::ledger::{Charge, PendingCompletion, RunState};
use super::registry::{ClaimSources, Handler};
use super::{timings, WorkerInner};
use crate::task::Task;

impl WorkerInner {
    /// A context of `task` under `handler`'s retry policy (over the worker's).
    pub(super) fn context(&self, task: Task, handler: Option<&Handler>) -> TaskContext {
        let retry = handler.map(|h| &h.retry);
        TaskContext::new(
            self.store.clone(),
            task,
            self.id.clone(),
            self.settings.lease_ms,
            retry
                .and_then(|r| r.backoff)
                .unwrap_or(self.settings.backoff),
        )
        .capped_at(retry.and_then(|r| r.attempts))
        .with_backoff_function(retry.is_some_and(|r| r.function))
        .dead_letter_to(handler.and_then(|h| h.dead_letter.as_deref()))
    }

    /// Takes the claimed calls (docs/api.md, "Dispatch and settlement"): a call
    /// without a handler fails at once; the others wait in order for a slot,
    /// where each is charged its slot, bytes, name and resource until its
    /// handler ends.
    pub(super) fn dispatch(
        self: &Arc<Self>,
        run: &Arc<RunState>,
        claim_sources: &ClaimSources,
        calls: Vec<Vec<Task>>,
    ) {
        let listener = Arc::downgrade(&run.aborted);
        for tasks in calls {
            self.quiet.dispatched(tasks.len());
            let bytes = if self.settings.max_in_flight_bytes.is_some() {
                tasks.iter().map(|t| payload_bytes(&t.payload)).sum()
            } else {
                0
            };
            let name = tasks[0].name.clone();
            let handler = claim_sources.handlers.get(&name);
            let charge = Charge {
                bytes,
                name: handler.and_then(|h| h.concurrency).map(|_| name.clone()),
                resource: handler.and_then(|h| h.resource.clone()),
                timer: None,
                started: None,
            };
            let batch = handler.is_some_and(|h| h.batch.is_some());
            let rate_limited = handler.is_some_and(|h| h.rate_limited());
            let time_limit = handler
                .and_then(|h| h.timeout.as_ref())
                .or(self.settings.max_run.as_ref());
            let make = |id| {
                let contexts = tasks
                    .into_iter()
                    .enumerate()
                    .map(|(index, task)| {
                        Arc::new(
                            self.context(task, handler)
                                .in_call(listener.clone(), id, index, batch)
                                .rate_limited(rate_limited),
                        )
                    })
                    .collect();
                Call::new(id, name, batch, contexts, time_limit)
            };
            if handler.is_none() {
                let call = run.admit(charge, make);
                self.end_call(run, call.id, Ending::NoHandler);
            } else {
                run.hold(charge, make);
            }
        }
        self.start_held(run);
    }

    /// Starts the held calls that fit in the free slots.
    pub(super) fn start_held(self: &Arc<Self>, run: &Arc<RunState>) {
        let calls = self.admit_held(run);
        if calls.is_empty() {
            return;
        }
        if let Err(err) = run.invoker.start(&calls) {
            for call in calls {
                let broken = CallOutcome::Broken(err.clone());
                self.end_call(run, call.id, Ending::Handler(broken));
            }
        }
    }

    /// Charges the held calls that fit in the free slots and arms the
    /// timers of their time limits; the caller starts them.
    pub(super) fn admit_held(self: &Arc<Self>, run: &Arc<RunState>) -> Vec<Arc<Call>> {
        let calls = run.admit_held(false);
        if !calls.is_empty() {
            let now = self.store.clock().now_ms();
            let mut timings = self.timings();
            for call in &calls {
                timings::started(&mut timings, call, now);
            }
        }
        for call in &calls {
            let Some(limit) = call.time_limit.clone() else {
                continue;
            };
            let (shared, weak_run, id) = (self.clone(), Arc::downgrade(run), call.id);
            let timer = run.runtime.spawn(async move {
                tokio::time::sleep(limit.limit).await;
                if let Some(run) = weak_run.upgrade() {
                    shared.end_call(&run, id, Ending::TimedOut(limit));
                }
            });
            run.set_timer(call.id, timer.abort_handle());
        }
        calls
    }

    /// The shutdown deadline passed: every call in flight is abandoned and
    /// every call still held (never started) is charged and ended with it;
    /// their tasks go back to their queues.
    pub(super) fn shut_down(&self, run: &Arc<RunState>) {
        run.admit_held(true);
        for call_id in run.running_ids() {
            self.end_call(run, call_id, Ending::Shutdown);
        }
    }

    /// A call's handler has ended (or was abandoned): refund its charges,
    /// then queue its completions for the next poll and write its failures.
    pub(super) fn end_call(&self, run: &Arc<RunState>, call_id: u64, ending: Ending) {
        let Some((call, took)) = run.release(call_id, &ending) else {
            return;
        };
        self.quiet.ended();
        if let (Some(took), false) = (took, matches!(ending, Ending::NoHandler)) {
            timings::ran(&mut self.timings(), &call.name, took);
        }
        let writes = call::settlements(&call, ending, &self.reporter);
        call.expect_writes(writes.len());
        if writes.is_empty() {
            run.forget(&call);
        }
        for (context, settlement) in writes {
            match settlement {
                Settlement::Complete(result) => {
                    context.begin_settling();
                    run.completions
                        .lock()
                        .expect("completions")
                        .push(PendingCompletion {
                            call: call.clone(),
                            context,
                            result,
                        });
                }
                // A failure or a hand-back, written in the background.
                leftover => {
                    let (run, call, reporter) = (run.clone(), call.clone(), self.reporter.clone());
                    run.runtime.clone().spawn(async move {
                        let written = match leftover {
                            Settlement::Fail {
                                envelope,
                                retryable,
                                delay_ms,
                            } => context.fail_leftover(envelope, retryable, delay_ms).await,
                            _ => context.hand_back().await,
                        };
                        if let Err(err) = written {
                            reporter.execute(err, context.task_id());
                        }
                        run.write_done(&call);
                    });
                }
            }
        }
        run.changed.notify_one();
    }
}

/// A payload's charge against `maxInFlightBytes`: the UTF-8 length of its
/// compact JSON (what `JSON.stringify(payload)` gives), whatever spacing or
/// escaping the writer stored it with (Python escapes non-ASCII, jsonb spaces).
pub(super) fn payload_bytes(stored: &str) -> u64 {
    serde_json::from_str::<serde_json::Value>(stored)
        .map(|value| value.to_string().len() as u64)
        .unwrap_or(stored.len() as u64)
}
