//! The events statements on SQLite (docs/protocol.md, "Events"): the
//! triggers write every event in its writer's transaction, one writer at a
//! time, so seq order is commit order and every committed row is final.

use std::time::Duration;

use async_trait::async_trait;
use rusqlite::{Connection, Row};

use super::conn::{apply_in_transaction, feature_installed};
use super::lifecycle::SqliteBackend;
use super::query::{query, Int, Params};
use crate::error::Result;
use crate::events::backend::EventBackend;
use crate::events::rows::{sweep_cut, EventFilter, EventRow, Position, RawPage};
use crate::protocol::events::{SQLITE as SQL, SQLITE_TRIGGERS};

fn event_from_row(row: &Row<'_>) -> rusqlite::Result<EventRow> {
    Ok(EventRow {
        position: Position::new(0, row.get(1)?),
        at_ms: row.get::<_, Int>(2)?.0,
        task_id: row.get(3)?,
        queue: row.get(4)?,
        name: row.get(5)?,
        kind: row.get(6)?,
        attempt: row.get::<_, Int>(7)?.0,
        worker_id: row.get(8)?,
        run_at_ms: row.get::<_, Option<Int>>(9)?.map(|v| v.0),
        progress: row.get(10)?,
        message: row.get(11)?,
        body: row.get(12)?,
        body_bytes: row.get(13)?,
    })
}

fn position_of(row: &Row<'_>) -> rusqlite::Result<Position> {
    Ok(Position::new(row.get(0)?, row.get(1)?))
}

fn one_position(conn: &Connection, sql: &str, params: &Params<'_>) -> Result<Option<Position>> {
    Ok(query(conn, sql, params, position_of)?.into_iter().next())
}

/// The head first, then the page up to it: a commit landing between the two
/// reads is left for the next page, never skipped. The horizon last, so a
/// sweep that ran meanwhile is seen.
fn page(conn: &Connection, after: Position, filter: &EventFilter, limit: i64) -> Result<RawPage> {
    let Some(head) = one_position(conn, SQL.head, &[])? else {
        return Ok(RawPage::default());
    };
    let params: &Params<'_> = &[
        (":after_minor", &after.minor),
        (":head_minor", &head.minor),
        (":queue", &filter.queue),
        (":name", &filter.name),
        (":task_id", &filter.task_id),
        (":limit", &limit),
    ];
    let rows = query(conn, SQL.page, params, event_from_row)?;
    let horizon = one_position(conn, SQL.horizon, &[])?;
    // One writer at a time: every committed row is final, none pending.
    Ok(RawPage {
        rows,
        head: Some(head),
        horizon,
        pending: false,
    })
}

fn sweep(conn: &Connection, cutoff_ms: i64, keep: i64) -> Result<()> {
    let newest = one_position(conn, SQL.head, &[])?;
    let young = one_position(conn, SQL.age_cut, &[(":cutoff_ms", &cutoff_ms)])?;
    let by_count = one_position(conn, SQL.count_cut, &[(":keep", &keep)])?;
    let Some(cut) = sweep_cut(young, by_count, newest) else {
        return Ok(());
    };
    let cut_minor: &Params<'_> = &[(":cut_minor", &cut.minor)];
    if let Some(last) = one_position(conn, SQL.last_before, cut_minor)? {
        query(conn, SQL.delete_before, cut_minor, |_| Ok(()))?;
        let horizon: &Params<'_> = &[(":major", &last.major), (":minor", &last.minor)];
        query(conn, SQL.set_horizon, horizon, |_| Ok(()))?;
    }
    Ok(())
}

#[async_trait]
impl EventBackend for SqliteBackend {
    async fn events_installed(&self) -> Result<bool> {
        self.read(|conn| feature_installed(conn, SQL.installed))
            .await
    }

    async fn install_events(&self) -> Result<()> {
        self.transaction(|conn| {
            apply_in_transaction(conn, &SQL.migration)?;
            apply_in_transaction(conn, &SQLITE_TRIGGERS)
        })
        .await
    }

    async fn events_page(
        &self,
        after: Position,
        filter: EventFilter,
        limit: i64,
    ) -> Result<RawPage> {
        // On the calling thread when the inline reader is free: a wake's
        // read then takes no thread hand-off, which on a busy machine is
        // most of a delivery's latency.
        self.engine()
            .await?
            .read_here(move |conn| page(conn, after, &filter, limit))
            .await
    }

    async fn sweep_events(&self, cutoff_ms: i64, keep: i64) -> Result<()> {
        self.transaction(move |conn| sweep(conn, cutoff_ms, keep))
            .await
    }

    fn events_ticket(&self) -> u64 {
        self.change_ticket()
    }

    async fn events_changed(&self, since: u64, timeout: Duration) {
        self.changed(since, timeout).await
    }
}
