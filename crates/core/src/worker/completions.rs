//! Writing the completions of the calls that returned (docs/api.md, "Poll
//! loop"). Where the backend pairs them with claims (SQLite: one writer, so
//! one commit settles the last calls and claims the next) the poll loop
//! waits for their commit. Where it writes them apart (Postgres: a commit
//! that completes waits for its WAL flush, a claim's need not), one write at
//! a time runs beside the loop, which claims on meanwhile: the completions
//! that return during a flush share the next one. A completion is reported
//! done only after its commit either way.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::ledger::{PendingCompletion, RunState};
use super::WorkerInner;
use crate::error::Result;

impl WorkerInner {
    /// The completions to write now: none while a write of them runs apart
    /// (they wait for the next, woken by its end).
    pub(super) fn completions_to_write(&self, run: &RunState) -> Vec<PendingCompletion> {
        if self.store.completes_apart() && run.completions_writing.load(Ordering::SeqCst) {
            return Vec::new();
        }
        run.take_completions()
    }

    /// Write `pending` without a claim: on a backend that writes completions
    /// apart, started beside the loop; else awaited. False when there were none.
    pub(super) async fn write_completions(
        self: &Arc<Self>,
        run: &Arc<RunState>,
        pending: Vec<PendingCompletion>,
    ) -> bool {
        if pending.is_empty() {
            return false;
        }
        if !self.store.completes_apart() {
            self.write_now(run, pending).await;
            return true;
        }
        run.completions_writing.store(true, Ordering::SeqCst);
        let (worker, run) = (self.clone(), run.clone());
        run.runtime.clone().spawn(async move {
            let items = pending.iter().map(PendingCompletion::item).collect();
            let written = worker.store.complete_batch(worker.id.clone(), items).await;
            // Cleared before the answers wake the loop, so it takes the next ones.
            run.completions_writing.store(false, Ordering::SeqCst);
            worker.deliver(&run, pending, written);
            run.changed.notify_one();
        });
        true
    }

    /// Write the queued completions and wait for their commit (the end of a run).
    pub(super) async fn flush_completions(&self, run: &RunState) -> bool {
        let pending = run.take_completions();
        if pending.is_empty() {
            return false;
        }
        self.write_now(run, pending).await;
        true
    }

    async fn write_now(&self, run: &RunState, pending: Vec<PendingCompletion>) {
        let items = pending.iter().map(PendingCompletion::item).collect();
        let written = self.store.complete_batch(self.id.clone(), items).await;
        self.deliver(run, pending, written);
    }

    fn deliver(
        &self,
        run: &RunState,
        pending: Vec<PendingCompletion>,
        written: Result<Vec<String>>,
    ) {
        match written {
            Ok(completed) => run.deliver(pending, Ok(completed), &self.reporter),
            Err(err) => run.deliver(pending, Err(&err), &self.reporter),
        }
    }
}
