//! The store's side of durable steps (docs/api.md, "Durable steps";
//! docs/protocol.md, "Durable steps"): the table installed by the first step
//! written, reads that create nothing, a child submitted once under a key
//! of its parent and step, and the wake of parents waiting on a child.

use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::{
    ChildWait, HeldTask, NewStep, StepSummary, Store, StoredStep, SubmitInput, Suspended, Target,
    Wake, Write,
};
use crate::error::{Error, Result};
use crate::task::Task;

/// A child's key is this, its parent's id, `:` and the step id.
pub const CHILD_KEY_PREFIX: &str = "cairnq:step:";

/// How long a catalog read that found no steps table stands for the wake of
/// parents: another process may create the table at any time, and a parent
/// whose wake is missed still re-checks its child (its bounded wait).
const ABSENT_FOR: Duration = Duration::from_secs(1);

/// What a store knows of the steps table: once seen it stays (nothing drops
/// it); not seen, it is looked for again.
#[derive(Default)]
pub(super) struct StepsPresence {
    installed: AtomicBool,
    /// When a catalog read last found no table.
    absent_at: Mutex<Option<Instant>>,
}

impl StepsPresence {
    fn known(&self) -> bool {
        self.installed.load(SeqCst)
    }

    /// Whether the table may exist without a catalog read saying otherwise
    /// within `ABSENT_FOR`.
    fn maybe(&self) -> bool {
        self.known()
            || self
                .absent_at
                .lock()
                .expect("steps presence")
                .is_none_or(|at| at.elapsed() >= ABSENT_FOR)
    }

    fn saw(&self, installed: bool) {
        if installed {
            self.installed.store(true, SeqCst);
        } else {
            *self.absent_at.lock().expect("steps presence") = Some(Instant::now());
        }
    }
}

impl Store {
    /// Whether `cairnq_steps` exists: a catalog read until it has been seen.
    pub async fn steps_installed(&self) -> Result<bool> {
        if self.steps.known() {
            return Ok(true);
        }
        let installed = self.backend.steps().steps_installed().await?;
        self.steps.saw(installed);
        Ok(installed)
    }

    async fn install_steps(&self) -> Result<()> {
        if !self.steps.known() {
            self.backend.steps().install_steps().await?;
            self.steps.saw(true);
        }
        Ok(())
    }

    /// Every step the task has stored (none, and nothing created, on a
    /// database without the table).
    pub async fn load_steps(&self, task_id: &str) -> Result<Vec<StoredStep>> {
        if !self.steps_installed().await? {
            return Ok(Vec::new());
        }
        self.backend.steps().load_steps(task_id.to_string()).await
    }

    /// The task's steps as the dashboard and the command line show them.
    pub async fn step_summaries(&self, task_id: &str) -> Result<Vec<StepSummary>> {
        if !self.steps_installed().await? {
            return Ok(Vec::new());
        }
        self.backend
            .steps()
            .step_summaries(task_id.to_string())
            .await
    }

    /// Store a step of the task `owned` holds (installing the table first);
    /// its stored-at time.
    pub async fn record_step(&self, owned: HeldTask, step: NewStep) -> Result<i64> {
        self.install_steps().await?;
        self.backend.steps().record_step(owned, step).await
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
        self.backend.steps().suspend(owned, step, wake).await
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
        self.backend
            .steps()
            .wait_for_child(owned, step, child_id, recheck_ms)
            .await
    }

    /// `ctx.callChild`'s submit (docs/api.md, "Durable steps"): the child of
    /// `parent_id` under the key of `parent_id` and `step_id`, through the
    /// backpressure gate like any submit. A child already under that key
    /// (its parent's run was cut short before it stored the step) is that
    /// task, whatever its status: the child is submitted once.
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
        input.conflict = Some("reject".into());
        let mut written = self.write_group(vec![Ok(Write::Submit(input))]).await;
        match written.pop().expect("one answer per write") {
            Ok(row) => Ok(row.expect("a submit returns its row")),
            Err(Error::AlreadyExists { .. }) => {
                self.get(Target::Key(key.clone()))
                    .await?
                    .ok_or_else(|| {
                        // Purged between the refusal and this read: the key is free again.
                        Error::Invalid(format!(
                            "the child under key {key} went while its parent looked it up; the parent's next run submits it again"
                        ))
                    })
            }
            Err(err) => Err(err),
        }
    }

    /// Make the tasks waiting on any of `child_ids` (each just finished) due
    /// now. Only an accelerator, like a push wake: a failure or a table
    /// another process created a moment ago leaves the parent to its own
    /// bounded re-check, so nothing is reported.
    pub async fn wake_parents_of(&self, child_ids: Vec<String>) {
        if child_ids.is_empty() || !self.steps.maybe() {
            return;
        }
        if let Ok(true) = self.steps_installed().await {
            let _ = self.backend.steps().wake_parents(child_ids).await;
        }
    }

    /// `wake_parents_of` for the rows among `rows` that a write finished
    /// and that have a parent.
    pub(super) async fn wake_parents_of_rows<'a>(&self, rows: impl IntoIterator<Item = &'a Task>) {
        let finished = rows
            .into_iter()
            .filter(|row| row.status.is_terminal() && row.parent_id.is_some())
            .map(|row| row.id.clone())
            .collect();
        self.wake_parents_of(finished).await;
    }

    /// Whether a client write of `write`'s kind must leave the caller's
    /// thread: a cancel or a finish may end a child whose parent waits, and
    /// only the asynchronous path wakes it.
    pub(super) fn may_wake_parents(&self, write: &Write) -> bool {
        matches!(write, Write::Cancel(_) | Write::Finish(..)) && self.steps.maybe()
    }
}
