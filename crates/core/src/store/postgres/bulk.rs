//! The bulk statements on Postgres (docs/api.md, "Bulk retry and cancel"),
//! over any transport: a page's change one autocommit statement, its dry run
//! one read.

use async_trait::async_trait;

use super::conn::rows;
use super::lifecycle::PostgresBackend;
use super::listener::PushSource;
use super::transport::{params, PgRow, Session, Transport};
use crate::bulk::backend::{BulkBackend, BulkChange, BulkSelection};
use crate::error::Result;
use crate::protocol::bulk::POSTGRES as SQL;
use crate::protocol::specialize_for;
use crate::task::Status;

/// Run the change's statement (`write`) or its dry run, with the selection's
/// set filters made required; the ids it answers.
async fn run<S: Session>(
    session: &S,
    selection: &BulkSelection,
    write: bool,
) -> Result<Vec<String>> {
    let BulkSelection {
        queue, name, limit, ..
    } = selection;
    let found = match &selection.change {
        BulkChange::Retry {
            status,
            finished_after,
            finished_before,
            reset_attempt,
        } => {
            let statement = if write {
                SQL.retry_many
            } else {
                SQL.retry_many_preview
            };
            let sql = specialize_for(
                statement,
                &[
                    ("$2::text", queue.is_some()),
                    ("$3::text", name.is_some()),
                    ("$4::bigint", finished_after.is_some()),
                    ("$5::bigint", finished_before.is_some()),
                ],
            );
            let status = status.as_str();
            let values = params![&status, queue, name, finished_after, finished_before, limit];
            if write {
                let mut with_reset = values.to_vec();
                with_reset.extend(params![reset_attempt]);
                rows(session, sql, &with_reset).await?
            } else {
                rows(session, sql, &values).await?
            }
        }
        BulkChange::Cancel { status } => {
            let statement = if write {
                SQL.cancel_many
            } else {
                SQL.cancel_many_preview
            };
            let sql = specialize_for(
                statement,
                &[
                    ("$1::text", status.is_some()),
                    ("$2::text", queue.is_some()),
                    ("$3::text", name.is_some()),
                ],
            );
            let status = status.map(Status::as_str);
            rows(session, sql, &params![&status, queue, name, limit]).await?
        }
    };
    found.iter().map(|row| row.text(0)).collect()
}

#[async_trait]
impl<T: Transport + PushSource> BulkBackend for PostgresBackend<T> {
    async fn bulk_change(&self, selection: BulkSelection) -> Result<Vec<String>> {
        run(&self.client().await?, &selection, true).await
    }

    async fn bulk_preview(&self, selection: BulkSelection) -> Result<Vec<String>> {
        run(&self.client().await?, &selection, false).await
    }
}
