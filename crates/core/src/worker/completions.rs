//! The worker's finished calls, completed many tasks per statement.
//!
//! Every call that returns completes its tasks; with many calls in flight
//! those completions arrive one after another. They queue here and one
//! `complete_batch` statement writes everything that queued while the
//! previous one ran — the same idea as the SQLite writer's group commit, one
//! level up, so the per-row cost is the index updates and little else.

use std::collections::HashSet;
use std::sync::Arc;

use tokio::sync::{mpsc, oneshot};

use crate::error::Result;
use crate::store::Store;

/// Rows per statement at most: bounds one statement's time holding the lock.
const MAX_BATCH: usize = 512;

struct Pending {
    task_id: String,
    result: Option<String>,
    /// `Ok(true)` completed, `Ok(false)` the lease was lost.
    reply: oneshot::Sender<Result<bool>>,
}

#[derive(Clone)]
pub(crate) struct Completions {
    queue: mpsc::UnboundedSender<Pending>,
}

impl Completions {
    /// Starts the writer task; it ends when the last handle is dropped.
    pub(crate) fn start(store: Arc<Store>, worker_id: String) -> Completions {
        let (queue, pending) = mpsc::unbounded_channel();
        tokio::spawn(write_batches(store, worker_id, pending));
        Completions { queue }
    }

    /// Complete one owned task: `Ok(false)` when its lease was lost.
    pub(crate) async fn complete(&self, task_id: &str, result: Option<String>) -> Result<bool> {
        let (reply, answer) = oneshot::channel();
        let pending = Pending {
            task_id: task_id.to_string(),
            result,
            reply,
        };
        if self.queue.send(pending).is_err() {
            return Err(crate::Error::Connection(
                "the worker's completion writer has stopped".into(),
            ));
        }
        answer.await.unwrap_or_else(|_| {
            Err(crate::Error::Connection(
                "the worker's completion writer has stopped".into(),
            ))
        })
    }
}

async fn write_batches(
    store: Arc<Store>,
    worker_id: String,
    mut pending: mpsc::UnboundedReceiver<Pending>,
) {
    let mut batch = Vec::new();
    while pending.recv_many(&mut batch, MAX_BATCH).await > 0 {
        let items = batch
            .iter()
            .map(|p| (p.task_id.clone(), p.result.clone()))
            .collect();
        match store.complete_batch(worker_id.clone(), items).await {
            Ok(done) => {
                let done: HashSet<String> = done.into_iter().collect();
                for p in batch.drain(..) {
                    let _ = p.reply.send(Ok(done.contains(&p.task_id)));
                }
            }
            Err(err) => {
                for p in batch.drain(..) {
                    let _ = p.reply.send(Err(err.clone()));
                }
            }
        }
    }
}
