//! Queue pauses (docs/api.md, "Queue pauses"): `pauseQueue` stops every
//! worker of every process claiming from a queue, `resumeQueue` lets them
//! claim again; submits are accepted meanwhile and running tasks finish.
//! The table is created by the first pause on a database; workers read it
//! every `worker::pauses::REFRESH` (not once per claim). `backend` is the
//! seam each dialect's `pauses.rs` implements, `presence` what a store knows
//! of the table and of this process's own pauses.

pub mod backend;
pub mod presence;

use self::backend::PausedQueue;
use crate::error::Result;
use crate::input::name_field;
use crate::store::{Stats, Store};
use crate::task::Status;

/// A queue of `queues()`: its counts and whether it is paused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueueSummary {
    pub queue: String,
    /// Per status, in `Status::ALL` order.
    pub counts: [i64; 5],
    pub paused_at_ms: Option<i64>,
}

/// A queue name as pause and resume take it: checked as a submit's queue.
/// Nothing is written when it fails.
fn queue_field(queue: &str) -> Result<String> {
    name_field("queue", queue)?;
    Ok(queue.to_string())
}

impl Store {
    /// Whether the pauses table exists: a catalog read until it has been
    /// seen (nothing drops it).
    pub async fn pauses_installed(&self) -> Result<bool> {
        let presence = self.pause_presence();
        if presence.seen() {
            return Ok(true);
        }
        let installed = self.backend().pauses_installed().await?;
        if installed {
            presence.mark_seen();
        }
        Ok(installed)
    }

    /// `pauseQueue(queue)`: whether this call paused it (false: paused
    /// already). Any name may be paused, one with no task yet included; the
    /// table is created by the first pause.
    pub async fn pause_queue(&self, queue: &str) -> Result<bool> {
        let queue = queue_field(queue)?;
        if !self.pause_presence().seen() {
            self.backend().install_pauses().await?;
            self.pause_presence().mark_seen();
        }
        let paused = self
            .backend()
            .pause_queue(queue, self.clock().now_ms())
            .await?;
        self.pause_presence().changed();
        Ok(paused)
    }

    /// `resumeQueue(queue)`: whether it was paused. Nothing is created on a
    /// database that never paused.
    pub async fn resume_queue(&self, queue: &str) -> Result<bool> {
        let queue = queue_field(queue)?;
        if !self.pauses_installed().await? {
            return Ok(false);
        }
        let resumed = self.backend().resume_queue(queue).await?;
        self.pause_presence().changed();
        Ok(resumed)
    }

    /// Every paused queue, by name (none, and nothing created, on a database
    /// that never paused).
    pub async fn paused_queues(&self) -> Result<Vec<PausedQueue>> {
        if !self.pauses_installed().await? {
            return Ok(Vec::new());
        }
        self.backend().paused_queues().await
    }

    /// `queues()`: every queue with a task or a pause, by name.
    pub async fn queues(&self) -> Result<Vec<QueueSummary>> {
        let stats = self.stats(None).await?;
        Ok(summaries(stats, self.paused_queues().await?))
    }
}

/// The queues of `stats` and of `paused` together, by name.
fn summaries(mut stats: Stats, paused: Vec<PausedQueue>) -> Vec<QueueSummary> {
    let mut paused_at = std::collections::BTreeMap::new();
    for pause in paused {
        stats.entry(pause.queue.clone()).or_insert([0; 5]);
        paused_at.insert(pause.queue, pause.paused_at_ms);
    }
    stats
        .into_iter()
        .map(|(queue, counts)| QueueSummary {
            paused_at_ms: paused_at.get(&queue).copied(),
            queue,
            counts,
        })
        .collect()
}

/// `queues()` as JSON: `[{queue, counts: {queued, …}, paused, pausedAtMs}]`.
pub fn queues_to_json(queues: &[QueueSummary]) -> String {
    let listed: Vec<serde_json::Value> = queues
        .iter()
        .map(|summary| {
            let counts: serde_json::Map<String, serde_json::Value> = Status::ALL
                .iter()
                .zip(summary.counts)
                .map(|(status, n)| (status.to_string(), n.into()))
                .collect();
            serde_json::json!({
                "queue": summary.queue,
                "counts": counts,
                "paused": summary.paused_at_ms.is_some(),
                "pausedAtMs": summary.paused_at_ms,
            })
        })
        .collect();
    serde_json::Value::Array(listed).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_names_are_checked_naming_the_field() {
        assert_eq!(
            queue_field("").unwrap_err().to_string(),
            "queue must be a non-empty string, got \"\""
        );
        assert_eq!(queue_field("mail").unwrap(), "mail");
    }

    #[test]
    fn a_paused_queue_without_tasks_is_listed_with_zero_counts() {
        let stats = Stats::from([("a".to_string(), [1, 0, 2, 0, 0])]);
        let paused = vec![PausedQueue {
            queue: "b".into(),
            paused_at_ms: 7,
        }];
        let listed = summaries(stats, paused);
        assert_eq!(
            queues_to_json(&listed),
            r#"[{"counts":{"canceled":0,"failed":0,"queued":1,"running":0,"succeeded":2},"paused":false,"pausedAtMs":null,"queue":"a"},{"counts":{"canceled":0,"failed":0,"queued":0,"running":0,"succeeded":0},"paused":true,"pausedAtMs":7,"queue":"b"}]"#
        );
    }
}
