//! The queue pauses statements on Postgres (docs/protocol.md, "Queue
//! pauses"), over any transport: each one autocommit statement.

use async_trait::async_trait;

use super::conn::{feature_installed, install_feature, rows};
use super::lifecycle::PostgresBackend;
use super::listener::PushSource;
use super::transport::{params, PgRow, Transport};
use crate::error::Result;
use crate::pauses::backend::{PauseBackend, PausedQueue};
use crate::protocol::pauses::POSTGRES as SQL;

#[async_trait]
impl<T: Transport + PushSource> PauseBackend for PostgresBackend<T> {
    async fn pauses_installed(&self) -> Result<bool> {
        feature_installed(&self.client().await?, SQL.installed).await
    }

    async fn install_pauses(&self) -> Result<()> {
        install_feature(self.begin().await?, &SQL.migration).await
    }

    async fn pause_queue(&self, queue: String, now_ms: i64) -> Result<bool> {
        let written = rows(&self.client().await?, SQL.pause, &params![&queue, &now_ms]).await?;
        Ok(!written.is_empty())
    }

    async fn resume_queue(&self, queue: String) -> Result<bool> {
        let removed = rows(&self.client().await?, SQL.resume, &params![&queue]).await?;
        Ok(!removed.is_empty())
    }

    async fn paused_queues(&self) -> Result<Vec<PausedQueue>> {
        rows(&self.client().await?, SQL.paused, &[])
            .await?
            .iter()
            .map(|row| {
                Ok(PausedQueue {
                    queue: row.text(0)?,
                    paused_at_ms: row.int(1)?,
                })
            })
            .collect()
    }
}
