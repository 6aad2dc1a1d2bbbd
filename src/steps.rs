//! Durable steps (docs/api.md, "Durable steps"): `NativeContext`'s step
//! methods and `NativeStore.steps`. Every decision is the core's
//! (`cairnq_core::steps`, `TaskContext::begin_step` and the rest); a step
//! that suspended the task answers `suspended`, and JS stops the handler.

use cairnq_core::signals::{new_signal, wait_options};
use cairnq_core::steps::{view, SleepFor};
use cairnq_core::store::Target;
use cairnq_core::worker::{ChildCall, RetryAfter, StepStart, WaitAnswer};
use napi::Result;
use napi_derive::napi;

use crate::errors::IntoJs;
use crate::store::NativeStore;
use crate::worker::NativeContext;

/// How `ctx.step` goes on: `suspended` (the run is over), a stored result to
/// replay (`replay`, its JSON in `json`, absent for none), or run `fn`.
#[napi(object)]
pub struct StepBegin {
    pub suspended: bool,
    pub replay: bool,
    pub json: Option<String>,
}

/// How `ctx.callChild` ends: `suspended` (the run is over), or the child's
/// id and final status with `json`, its result (succeeded) or its error
/// envelope (failed).
#[napi(object)]
pub struct ChildAnswer {
    pub suspended: bool,
    pub child_id: Option<String>,
    pub status: Option<String>,
    pub json: Option<String>,
}

/// How `ctx.waitForSignal` answers: `suspended` (the run is over),
/// `waiting` (stored as waiting: JS ends the run with `suspendForWaits` once
/// the handler has nothing else under way), or the consumed signal's payload
/// JSON in `json` (absent: none, or timed out).
#[napi(object)]
pub struct SignalAnswer {
    pub suspended: bool,
    pub waiting: bool,
    pub json: Option<String>,
}

#[napi]
impl NativeContext {
    /// True once a step sent the task back to the queue.
    #[napi(getter)]
    pub fn suspended(&self) -> bool {
        self.inner.suspended()
    }

    #[napi]
    pub async fn begin_step(&self, id: String) -> Result<StepBegin> {
        let begun = self.inner.begin_step(&id).await.js()?;
        Ok(match begun {
            None => StepBegin {
                suspended: true,
                replay: false,
                json: None,
            },
            Some(StepStart::Replay(json)) => StepBegin {
                suspended: false,
                replay: true,
                json,
            },
            Some(StepStart::Run) => StepBegin {
                suspended: false,
                replay: false,
                json: None,
            },
        })
    }

    /// Stores the step's result JSON; true when the run is suspended instead.
    #[napi]
    pub async fn commit_step(&self, id: String, json: Option<String>) -> Result<bool> {
        let committed = self.inner.commit_step(&id, json).await.js()?;
        Ok(committed.is_none())
    }

    /// `ctx.sleep(id, ms)`; true when the task went back to the queue.
    #[napi]
    pub async fn sleep(&self, id: String, ms: f64) -> Result<bool> {
        let wanted = SleepFor::ms(ms).js()?;
        let slept = self.inner.sleep(&id, wanted).await.js()?;
        Ok(slept.is_none())
    }

    /// `ctx.retryAfter(ms, options)`: the task back in its queue, its
    /// attempt given back (with `limit`, its rate-limit budget's window
    /// filled too); the call ends as a suspended one.
    #[napi]
    pub async fn retry_after(&self, ms: f64, options_json: String) -> Result<()> {
        let options = RetryAfter::read(&options_json).js()?;
        self.inner.retry_after(ms, options).await.js().map(|_| ())
    }

    /// `ctx.sleepUntil(id, date)` with the date as epoch milliseconds.
    #[napi]
    pub async fn sleep_until(&self, id: String, at_ms: f64) -> Result<bool> {
        let wanted = SleepFor::until(at_ms).js()?;
        let slept = self.inner.sleep(&id, wanted).await.js()?;
        Ok(slept.is_none())
    }

    /// `ctx.waitForSignal(id, name, options)`: `options` holds `timeoutMs`.
    #[napi]
    pub async fn wait_for_signal(
        &self,
        id: String,
        name: String,
        options_json: String,
    ) -> Result<SignalAnswer> {
        let timeout = wait_options(&options_json).js()?;
        let waited = self.inner.wait_for_signal(&id, &name, timeout).await.js()?;
        let (suspended, waiting, json) = match waited {
            WaitAnswer::Over => (true, false, None),
            WaitAnswer::Waiting => (false, true, None),
            WaitAnswer::Answered(json) => (false, false, json),
        };
        Ok(SignalAnswer {
            suspended,
            waiting,
            json,
        })
    }

    /// The end of a run left with waits only: true when the task went back
    /// to the queue for them (`TaskContext::suspend_for_waits`).
    #[napi]
    pub async fn suspend_for_waits(&self) -> Result<bool> {
        self.inner.suspend_for_waits().await.js()
    }

    /// `ctx.callChild`: `options` are the child's submit options and
    /// `pollMs`, the longest wait before the parent reads its child again.
    #[napi]
    pub async fn call_child(&self, id: String, options_json: String) -> Result<ChildAnswer> {
        let (input, recheck_ms) = cairnq_core::steps::child_call(&options_json).js()?;
        let called = self.inner.call_child(&id, input, recheck_ms).await.js()?;
        Ok(match called {
            None => ChildAnswer {
                suspended: true,
                child_id: None,
                status: None,
                json: None,
            },
            Some(ChildCall { child_id, child }) => ChildAnswer {
                suspended: false,
                child_id: Some(child_id),
                status: Some(child.status.as_str().into()),
                json: match child.status {
                    cairnq_core::Status::Failed => child.error,
                    _ => child.result,
                },
            },
        })
    }
}

#[napi]
impl NativeStore {
    /// A task's steps and what it is sleeping or waiting for, as JSON
    /// (`cairnq_core::steps::view`).
    #[napi]
    pub async fn steps(&self, task_id: String) -> Result<String> {
        view::steps_of(&self.inner, &task_id).await.js()
    }

    /// `signal` (`by_key` false) / `signalByKey`: true stored, false the
    /// task has finished, null no such task.
    #[napi]
    pub async fn signal(
        &self,
        target: String,
        by_key: bool,
        name: String,
        payload: Option<String>,
    ) -> Result<Option<bool>> {
        let signal = new_signal(&name, payload).js()?;
        let target = if by_key {
            Target::Key(target)
        } else {
            Target::Id(target)
        };
        self.inner.signal(target, signal).await.js()
    }

    /// `retry` / `retryByKey` (`by_key`) with `fromStep`: the task requeued
    /// with its steps from `from_step` on dropped, as row JSON; null for no
    /// such task.
    #[napi]
    pub async fn restart_from_step(
        &self,
        target: String,
        by_key: bool,
        from_step: String,
        reset_attempt: bool,
    ) -> Result<Option<String>> {
        let target = if by_key {
            Target::Key(target)
        } else {
            Target::Id(target)
        };
        self.inner
            .restart_from_step(target, &from_step, reset_attempt)
            .await
            .map(|task| task.map(crate::store::row))
            .js()
    }
}
