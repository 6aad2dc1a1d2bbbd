//! What a store knows of the steps table (docs/protocol.md, "Durable
//! steps"), and the wake of parents waiting on a child that every finishing
//! write of the store may owe (docs/api.md, "Durable steps").

use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::backend::StepBackend;
use crate::error::Result;
use crate::task::Task;

/// How long a catalog read that found no steps table stands for the wake of
/// parents: another process may create the table at any time, and a parent
/// whose wake is missed still re-checks its child (its bounded wait).
const ABSENT_FOR: Duration = Duration::from_secs(1);

/// Once seen, the table stays (nothing drops it); not seen, it is looked for
/// again.
#[derive(Default)]
pub struct StepsPresence {
    installed: AtomicBool,
    /// When a catalog read last found no table.
    absent_at: Mutex<Option<Instant>>,
}

impl StepsPresence {
    /// Whether `cairnq_steps` exists: a catalog read until it has been seen.
    pub async fn installed(&self, steps: &dyn StepBackend) -> Result<bool> {
        if self.installed.load(SeqCst) {
            return Ok(true);
        }
        let installed = steps.steps_installed().await?;
        if installed {
            self.installed.store(true, SeqCst);
        } else {
            *self.absent_at.lock().expect("steps presence") = Some(Instant::now());
        }
        Ok(installed)
    }

    /// Create the table unless it is known to exist (on first use).
    pub async fn install(&self, steps: &dyn StepBackend) -> Result<()> {
        if !self.installed.load(SeqCst) {
            steps.install_steps().await?;
            self.installed.store(true, SeqCst);
        }
        Ok(())
    }

    /// Whether the table may exist, unless a catalog read said otherwise
    /// within `ABSENT_FOR`.
    pub fn maybe(&self) -> bool {
        self.installed.load(SeqCst)
            || self
                .absent_at
                .lock()
                .expect("steps presence")
                .is_none_or(|at| at.elapsed() >= ABSENT_FOR)
    }

    /// Make the tasks waiting on any of `child_ids` (each just finished) due
    /// now. Only an accelerator, like a push wake: a failure, or a table
    /// another process created a moment ago, leaves the parent to its own
    /// bounded re-check, so nothing is reported. While the table may exist
    /// it is looked for even when no id is given: until a read says it is
    /// absent, the store's cancels and finishes leave the caller's thread
    /// (`maybe`), so this read is what lets them run there again.
    pub async fn wake_parents(&self, steps: &dyn StepBackend, child_ids: Vec<String>) {
        if !self.maybe() {
            return;
        }
        if let (Ok(true), false) = (self.installed(steps).await, child_ids.is_empty()) {
            let _ = steps.wake_parents(child_ids).await;
        }
    }
}

/// The ids of the rows a write finished that have a parent.
pub fn finished_children<'a>(rows: impl IntoIterator<Item = &'a Task>) -> Vec<String> {
    rows.into_iter()
        .filter(|row| row.status.is_terminal() && row.parent_id.is_some())
        .map(|row| row.id.clone())
        .collect()
}
