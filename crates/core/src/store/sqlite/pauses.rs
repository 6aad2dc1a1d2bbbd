//! The queue pauses statements on SQLite (docs/protocol.md, "Queue pauses"):
//! a pause and a resume each one write of the writer, the workers' read on a
//! reader.

use async_trait::async_trait;
use rusqlite::Connection;

use super::conn::{apply_in_transaction, feature_installed};
use super::lifecycle::SqliteBackend;
use super::query::{query, Int, Params};
use crate::error::Result;
use crate::pauses::backend::{PauseBackend, PausedQueue};
use crate::protocol::pauses::SQLITE as SQL;

fn paused(conn: &Connection) -> Result<Vec<PausedQueue>> {
    query(conn, SQL.paused, &[], |row| {
        Ok(PausedQueue {
            queue: row.get(0)?,
            paused_at_ms: row.get::<_, Int>(1)?.0,
        })
    })
}

#[async_trait]
impl PauseBackend for SqliteBackend {
    async fn pauses_installed(&self) -> Result<bool> {
        self.read(|conn| feature_installed(conn, SQL.installed))
            .await
    }

    async fn install_pauses(&self) -> Result<()> {
        self.transaction(|conn| apply_in_transaction(conn, &SQL.migration))
            .await
    }

    async fn pause_queue(&self, queue: String, now_ms: i64) -> Result<bool> {
        self.write(move |conn| {
            let params: &Params<'_> = &[(":queue", &queue), (":now", &now_ms)];
            let written = query(conn, SQL.pause, params, |row| row.get::<_, Int>(0))?;
            Ok(!written.is_empty())
        })
        .await
    }

    async fn resume_queue(&self, queue: String) -> Result<bool> {
        self.write(move |conn| {
            let removed = query(conn, SQL.resume, &[(":queue", &queue)], |row| {
                row.get::<_, Int>(0)
            })?;
            Ok(!removed.is_empty())
        })
        .await
    }

    async fn paused_queues(&self) -> Result<Vec<PausedQueue>> {
        self.read(paused).await
    }
}
