//! A context running durable steps (docs/api.md, "Durable steps"): the
//! decisions of `crate::steps` carried out through the store, behind the
//! context's write gate. Once a step has sent the task back to the queue the
//! run is over: that step and every later one answer `None` (in JS, a promise
//! that never settles), and the bindings end the call.

use super::context::TaskContext;
use crate::error::{Error, Result};
use crate::steps::rows::{ChildState, ChildWait, NewStep, StepKind, StoredStep, Wake};
use crate::steps::{
    delay_ms, gone, new_step, plan_child, plan_sleep, ChildPlan, SleepFor, SleepPlan,
};
use crate::store::SubmitInput;

/// `ctx.retryAfter`'s options (docs/api.md, "Push-back").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RetryAfter {
    /// Every task drawing from the name's rate-limit budget waits too.
    pub limit: bool,
}

impl RetryAfter {
    /// The options object as JS sends it (`input::Options`; unknown keys
    /// refused).
    pub fn read(options: &str) -> Result<RetryAfter> {
        let mut fields =
            crate::input::Options::parse("ctx.retryAfter options", options, &["limit"])?;
        Ok(RetryAfter {
            limit: fields.bool("limit")?.unwrap_or(false),
        })
    }
}

/// How `ctx.step` goes on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StepStart {
    /// Stored by an earlier run: its result's JSON (`None`: no result).
    Replay(Option<String>),
    /// Not stored: run `fn`, then `commit_step`.
    Run,
}

/// A finished child of `ctx.callChild`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChildCall {
    pub child_id: String,
    pub child: ChildState,
}

impl TaskContext {
    /// Whether a step may go on: `false` once the run is suspended; the
    /// write gate's `LostLease` when the lease is lost or the task settled.
    pub(super) fn step_gate(&self) -> Result<bool> {
        if self.suspended() {
            return Ok(false);
        }
        if self.lease_lost() || self.settled() {
            return Err(self.lost());
        }
        Ok(true)
    }

    /// Only a worker's call of one task can be suspended: the worker frees
    /// its slot and the task runs again from the top.
    pub(super) fn may_suspend(&self, method: &str) -> Result<()> {
        if self.position().is_none() {
            return Err(Error::Invalid(format!(
                "{method} suspends the task, which needs a context a Worker made (this one was made with new TaskContext)"
            )));
        }
        if self.is_batch() {
            return Err(Error::Invalid(format!(
                "{method} cannot suspend a task of a batch call: its handler runs for the whole batch"
            )));
        }
        Ok(())
    }

    /// A write of the run failed: a lost lease marks the context (unless a
    /// suspension of this run is what took the task away).
    pub(super) fn step_failed<T>(&self, err: Error) -> Result<Option<T>> {
        if let Error::LostLease { .. } = err {
            if self.suspended() {
                return Ok(None);
            }
            self.mark_lease_lost();
        }
        Err(err)
    }

    async fn stored_step(&self, id: &str, kind: StepKind) -> Result<Option<StoredStep>> {
        self.step_log().reach(id)?;
        self.step_log()
            .stored(self.store(), self.task_id(), id, kind)
            .await
    }

    /// `ctx.step(id, fn)`, before `fn`: replay the stored result, or run it.
    pub async fn begin_step(&self, id: &str) -> Result<Option<StepStart>> {
        if !self.step_gate()? {
            return Ok(None);
        }
        Ok(Some(match self.stored_step(id, StepKind::Step).await? {
            Some(step) => StepStart::Replay(step.result),
            None => StepStart::Run,
        }))
    }

    /// `ctx.step(id, fn)`, after `fn` returned: store its result (one
    /// commit) while the task is still held.
    pub async fn commit_step(&self, id: &str, result: Option<String>) -> Result<Option<()>> {
        if !self.step_gate()? {
            return Ok(None);
        }
        let step = NewStep {
            result,
            ..new_step(id, StepKind::Step)
        };
        match self.store().record_step(self.owned(), step).await {
            Ok(_) => Ok(Some(())),
            Err(err) => self.step_failed(err),
        }
    }

    /// `ctx.sleep` / `ctx.sleepUntil`: `Some(())` when the sleep is over
    /// (or took no time) and the handler goes on; `None` when the task went
    /// back to the queue until it is.
    pub async fn sleep(&self, id: &str, wanted: SleepFor) -> Result<Option<()>> {
        if !self.step_gate()? {
            return Ok(None);
        }
        self.may_suspend("ctx.sleep")?;
        let stored = self.stored_step(id, StepKind::Sleep).await?;
        let claimed_at = self.task().updated_at_ms;
        match plan_sleep(
            id,
            stored.as_ref(),
            wanted,
            claimed_at,
            self.store().clock().now_ms(),
        ) {
            SleepPlan::Resume => Ok(Some(())),
            SleepPlan::Suspend { record, wake } => {
                match self.store().suspend(self.owned(), record, wake).await {
                    Ok(_) => {
                        self.mark_suspended();
                        Ok(None)
                    }
                    Err(err) => self.step_failed(err),
                }
            }
        }
    }

    /// `ctx.retryAfter(ms, { limit })` (docs/api.md, "Push-back"): the run
    /// ends without failing; the task goes back to its queue to start no
    /// sooner than `ms` from now, its attempt given back, no step recorded;
    /// with `limit`, nothing drawing from its name's rate-limit budget starts
    /// before then either. Once the run is suspended, by this or a step, it
    /// does nothing more (`None`).
    pub async fn retry_after(&self, ms: f64, options: RetryAfter) -> Result<Option<()>> {
        let delay = delay_ms(ms)?;
        if options.limit && !self.is_rate_limited() {
            return Err(Error::Invalid(format!(
                "ctx.retryAfter's limit: true needs a rateLimit on task \"{}\"'s registration, which declares none",
                self.task().name
            )));
        }
        if !self.step_gate()? {
            return Ok(None);
        }
        self.may_suspend("ctx.retryAfter")?;
        let suspended = if options.limit {
            self.store().backend().push_back(self.owned(), delay).await
        } else {
            self.store()
                .suspend(self.owned(), None, Wake::After(delay))
                .await
        };
        match suspended {
            Ok(_) => {
                self.mark_suspended();
                Ok(None)
            }
            Err(err) => self.step_failed(err),
        }
    }

    /// A finished child, as child step `id` hands it to the handler.
    fn hand_child(&self, id: &str, child_id: String, child: ChildState) -> ChildCall {
        self.step_log().handed_child(id, &child_id, &child);
        ChildCall { child_id, child }
    }

    /// `ctx.callChild`: the child's outcome once it has finished; `None`
    /// when the task went back to the queue to wait for it (woken by the
    /// child's completion, or after `recheck_ms` at the latest). The child
    /// is submitted the first time only (`Store::submit_child`), with this
    /// task as its parent, on its queue, with its root and correlation
    /// unless `input` sets them.
    pub async fn call_child(
        &self,
        id: &str,
        input: SubmitInput,
        recheck_ms: i64,
    ) -> Result<Option<ChildCall>> {
        if !self.step_gate()? {
            return Ok(None);
        }
        self.may_suspend("ctx.callChild")?;
        let stored = self.stored_step(id, StepKind::Child).await?;
        let (child_id, record) = match plan_child(id, stored.as_ref())? {
            ChildPlan::Finished { child_id, child } => {
                return Ok(Some(self.hand_child(id, child_id, child)))
            }
            ChildPlan::Wait { child_id } => (child_id, None),
            ChildPlan::Submit => {
                // Wired as `ctx.submit` wires them, and on the parent's
                // queue (which its worker serves); explicit options win.
                let task = self.task();
                let input = SubmitInput {
                    queue: input.queue.or_else(|| Some(task.queue.clone())),
                    parent_id: input.parent_id.or_else(|| Some(task.id.clone())),
                    root_id: input.root_id.or_else(|| task.root_id.clone()),
                    correlation_id: input.correlation_id.or_else(|| task.correlation_id.clone()),
                    ..input
                };
                let child = self.store().submit_child(self.task_id(), id, input).await?;
                let record = NewStep {
                    child_id: Some(child.id.clone()),
                    ..new_step(id, StepKind::Child)
                };
                (child.id, Some(record))
            }
        };
        let waited = self
            .store()
            .wait_for_child(self.owned(), record, child_id.clone(), recheck_ms)
            .await;
        match waited {
            Ok(ChildWait::Finished(child)) => Ok(Some(self.hand_child(id, child_id, child))),
            Ok(ChildWait::Gone) => Err(gone(id, &child_id)),
            Ok(ChildWait::Suspended(_)) => {
                self.mark_suspended();
                Ok(None)
            }
            Err(err) => self.step_failed(err),
        }
    }
}
