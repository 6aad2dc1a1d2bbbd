//! The bulk statements on SQLite (docs/api.md, "Bulk retry and cancel"): a
//! page's change one write of the writer, its dry run a read on a reader.

use async_trait::async_trait;
use rusqlite::Connection;

use super::lifecycle::SqliteBackend;
use super::query::query;
use crate::bulk::backend::{BulkBackend, BulkChange, BulkSelection};
use crate::error::Result;
use crate::protocol::bulk::SQLITE as SQL;
use crate::protocol::specialize_for;
use crate::task::Status;

/// Run the change's statement (`write`) or its dry run on `conn`, with the
/// selection's set filters made required; the ids it answers. Each statement
/// binds only the parameters it names; `now` is the store clock's.
fn run(conn: &Connection, selection: &BulkSelection, write: bool, now: i64) -> Result<Vec<String>> {
    let BulkSelection {
        queue, name, limit, ..
    } = selection;
    let (statement, status, after, before, reset_attempt) = match &selection.change {
        BulkChange::Retry {
            status,
            finished_after,
            finished_before,
            reset_attempt,
        } => (
            if write {
                SQL.retry_many
            } else {
                SQL.retry_many_preview
            },
            Some(*status),
            *finished_after,
            *finished_before,
            *reset_attempt,
        ),
        BulkChange::Cancel { status } => (
            if write {
                SQL.cancel_many
            } else {
                SQL.cancel_many_preview
            },
            *status,
            None,
            None,
            false,
        ),
    };
    let sql = specialize_for(
        statement,
        &[
            // retryMany's status is always set (its statement has no optional term on it).
            (":status", status.is_some() && !selection.change.is_retry()),
            (":queue", queue.is_some()),
            (":name", name.is_some()),
            (":finished_after", after.is_some()),
            (":finished_before", before.is_some()),
        ],
    );
    let status = status.map(Status::as_str);
    query(
        conn,
        sql,
        &[
            (":status", &status),
            (":queue", queue),
            (":name", name),
            (":finished_after", &after),
            (":finished_before", &before),
            (":limit", limit),
            (":reset_attempt", &reset_attempt),
            (":now", &now),
        ],
        |row| row.get(0),
    )
}

#[async_trait]
impl BulkBackend for SqliteBackend {
    async fn bulk_change(&self, selection: BulkSelection) -> Result<Vec<String>> {
        let clock = self.clock.clone();
        self.write(move |conn| run(conn, &selection, true, clock.now_ms()))
            .await
    }

    async fn bulk_preview(&self, selection: BulkSelection) -> Result<Vec<String>> {
        let clock = self.clock.clone();
        self.read(move |conn| run(conn, &selection, false, clock.now_ms()))
            .await
    }
}
