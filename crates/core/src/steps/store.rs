//! The store's operations for durable steps (docs/api.md, "Durable steps";
//! docs/protocol.md, "Durable steps"): the table installed by the first step
//! written, reads that create nothing, and a child submitted once under a
//! key of its parent and step.

use crate::error::{Error, Result};
use crate::steps::rows::{ChildWait, NewStep, StepSummary, StoredStep, Suspended, Wake};
use crate::store::{HeldTask, Store, SubmitInput, Target, Write};
use crate::task::Task;

/// A child's key is this, its parent's id, `:` and the step id.
pub const CHILD_KEY_PREFIX: &str = "cairnq:step:";

impl Store {
    /// Whether `cairnq_steps` exists: a catalog read until it has been seen.
    pub async fn steps_installed(&self) -> Result<bool> {
        self.step_presence()
            .installed(self.backend().as_ref())
            .await
    }

    async fn install_steps(&self) -> Result<()> {
        self.step_presence().install(self.backend().as_ref()).await
    }

    /// Every step the task has stored (none, and nothing created, on a
    /// database without the table).
    pub async fn load_steps(&self, task_id: &str) -> Result<Vec<StoredStep>> {
        if !self.steps_installed().await? {
            return Ok(Vec::new());
        }
        self.backend().load_steps(task_id.to_string()).await
    }

    /// The task's steps as the dashboard and the command line show them.
    pub async fn step_summaries(&self, task_id: &str) -> Result<Vec<StepSummary>> {
        if !self.steps_installed().await? {
            return Ok(Vec::new());
        }
        self.backend().step_summaries(task_id.to_string()).await
    }

    /// `retry(target, { fromStep: step_id, resetAttempt })` (docs/api.md,
    /// "Restart from a step"): the task requeued with its steps from
    /// `step_id` on dropped, in one transaction; `None` for no task. A
    /// database without the steps table has no step to restart from.
    pub async fn restart_from_step(
        &self,
        target: Target,
        step_id: &str,
        reset_attempt: bool,
    ) -> Result<Option<Task>> {
        crate::steps::restart::from_step(step_id)?;
        if !self.steps_installed().await? {
            let found = self.get(target).await?;
            return match found {
                None => Ok(None),
                Some(task) => crate::steps::restart::restart_point(
                    &task.id,
                    step_id,
                    Some((task.status, None)),
                )
                .map(|_| None),
            };
        }
        self.backend()
            .restart_from_step(target, step_id.to_string(), reset_attempt)
            .await
    }

    /// Store a step of the task `owned` holds (installing the table first);
    /// its stored-at time.
    pub async fn record_step(&self, owned: HeldTask, step: NewStep) -> Result<i64> {
        self.install_steps().await?;
        self.backend().record_step(owned, step).await
    }

    /// Store `step` (when given), then send the task back to the queue until
    /// `wake` without using an attempt.
    pub async fn suspend(
        &self,
        owned: HeldTask,
        step: Option<NewStep>,
        wake: Wake,
    ) -> Result<Suspended> {
        if step.is_some() {
            self.install_steps().await?;
        }
        self.backend().suspend(owned, step, wake).await
    }

    /// Store `step` (when given), then, unless the child has finished,
    /// suspend the task for `recheck_ms`.
    pub async fn wait_for_child(
        &self,
        owned: HeldTask,
        step: Option<NewStep>,
        child_id: String,
        recheck_ms: i64,
    ) -> Result<ChildWait> {
        if step.is_some() {
            self.install_steps().await?;
        }
        self.backend()
            .wait_for_child(owned, step, child_id, recheck_ms)
            .await
    }

    /// `ctx.callChild`'s submit: the child of `parent_id` under the key of
    /// `parent_id` and `step_id`, through the backpressure gate like any
    /// submit. A child already under that key (its parent's run was cut
    /// short before it stored the step) is that task, whatever its status:
    /// the child is submitted once. Another program's task under the key is
    /// no child (`store::reserved`): the key is taken from it.
    pub async fn submit_child(
        &self,
        parent_id: &str,
        step_id: &str,
        mut input: SubmitInput,
    ) -> Result<Task> {
        let refuse = |option: &str, why: &str| {
            Err(Error::Invalid(format!(
                "ctx.callChild cannot take {option}: {why}"
            )))
        };
        let own_key = "the child's key is its parent's and its step's";
        if input.key.is_some() {
            return refuse("key", own_key);
        }
        if input.conflict.is_some() {
            return refuse("conflict", own_key);
        }
        if input.debounce_ms.is_some() || input.max_delay_ms.is_some() {
            let option = if input.debounce_ms.is_some() {
                "debounceMs"
            } else {
                "maxDelayMs"
            };
            return refuse(option, "a child is submitted once, never debounced");
        }
        if input.parent_id.as_deref() != Some(parent_id) {
            return refuse("parentId", "the child's parent is the calling task");
        }
        let key = format!("{CHILD_KEY_PREFIX}{parent_id}:{step_id}");
        input.key = Some(key.clone());
        let name = input.name.clone();
        let mut written = self.write_group(vec![Ok(Write::OwnSubmit(input))]).await;
        match written.pop().expect("one answer per write") {
            Ok(row) => Ok(row.expect("a submit returns its row")),
            Err(Error::AlreadyExists { .. }) => {
                let found = self.get(Target::Key(key.clone())).await?.ok_or_else(|| {
                    // Purged between the refusal and this read: the key is free again.
                    Error::Invalid(format!(
                        "the child under key {key} went while its parent looked it up; the parent's next run submits it again"
                    ))
                })?;
                verified_child(&key, &name, parent_id, found)
            }
            Err(err) => Err(err),
        }
    }
}

/// The task read under a child's key after the submit found the child there:
/// the child only if it is still `name` of `parent_id` (another program may
/// have repointed the key in between, docs/security.md, "Reserved keys").
fn verified_child(key: &str, name: &str, parent_id: &str, found: Task) -> Result<Task> {
    if found.name == name && found.parent_id.as_deref() == Some(parent_id) {
        return Ok(found);
    }
    Err(Error::Invalid(format!(
        "the task {} under key {key} is not this step's child (a task \"{name}\" of parent {parent_id}): another program put it under cairnq's reserved key; its result is not taken, and the parent's next run submits the child again",
        found.id
    )))
}
