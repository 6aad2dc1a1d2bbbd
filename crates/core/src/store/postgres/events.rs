//! The events statements on Postgres (docs/protocol.md, "Events"): a
//! position is (txid, seq), and every read is bounded below the oldest
//! running transaction, so what it returns is final in position order.

use std::time::Duration;

use async_trait::async_trait;

use super::conn::{execute, feature_installed, install_feature, rows};
use super::lifecycle::PostgresBackend;
use super::listener::PushSource;
use super::transport::{end_tx, params, PgRow, Session, Transport};
use crate::error::Result;
use crate::events::backend::EventBackend;
use crate::events::rows::{sweep_cut, EventFilter, EventRow, Position, RawPage};
use crate::protocol::events::{POSTGRES as SQL, POSTGRES_JOIN_PLAN, POSTGRES_TRIGGERS};

fn event_from_row(row: &impl PgRow) -> Result<EventRow> {
    Ok(EventRow {
        position: Position::new(row.int(0)?, row.int(1)?),
        at_ms: row.int(2)?,
        task_id: row.text(3)?,
        queue: row.text(4)?,
        name: row.text(5)?,
        kind: row.text(6)?,
        attempt: row.int(7)?,
        worker_id: row.opt_text(8)?,
        run_at_ms: row.opt_int(9)?,
        progress: row.opt_float(10)?,
        message: row.opt_text(11)?,
        body: row.opt_text(12)?,
        body_bytes: row.opt_int(13)?,
    })
}

async fn one_position<S: Session>(
    session: &S,
    sql: &str,
    values: &[super::transport::Param<'_>],
) -> Result<Option<Position>> {
    match rows(session, sql, values).await?.first() {
        Some(row) => Ok(Some(Position::new(row.int(0)?, row.int(1)?))),
        None => Ok(None),
    }
}

/// What a part of `page.sql`'s answer is (its last column).
const HEAD: i64 = 0;
const HORIZON: i64 = 1;
const EVENT: i64 = 2;
const PAGE_PART: usize = 14;

/// The page, the head and the horizon in one statement: one snapshot, one
/// round trip, which is most of a wake's delivery time.
async fn page<S: Session>(
    session: &S,
    after: Position,
    filter: &EventFilter,
    limit: i64,
) -> Result<RawPage> {
    let values = params![
        &after.major,
        &after.minor,
        &filter.queue,
        &filter.name,
        &filter.task_id,
        &limit
    ];
    let mut raw = RawPage::default();
    for row in rows(session, SQL.page, &values).await? {
        let position = || -> Result<Position> { Ok(Position::new(row.int(0)?, row.int(1)?)) };
        match row.int(PAGE_PART)? {
            HEAD => raw.head = Some(position()?),
            HORIZON => raw.horizon = Some(position()?),
            EVENT => raw.rows.push(event_from_row(&row)?),
            _ => raw.pending = true,
        }
    }
    Ok(raw)
}

async fn sweep<S: Session>(tx: &S, cutoff_ms: i64, keep: i64) -> Result<()> {
    // Every transaction is below the largest id: the newest event of all.
    let newest = one_position(tx, SQL.head, &params![&i64::MAX]).await?;
    let young = one_position(tx, SQL.age_cut, &params![&cutoff_ms]).await?;
    let by_count = one_position(tx, SQL.count_cut, &params![&keep]).await?;
    let Some(cut) = sweep_cut(young, by_count, newest) else {
        return Ok(());
    };
    let at_cut = params![&cut.major, &cut.minor];
    if let Some(last) = one_position(tx, SQL.last_before, &at_cut).await? {
        execute(tx, SQL.delete_before, &at_cut).await?;
        execute(tx, SQL.set_horizon, &params![&last.major, &last.minor]).await?;
    }
    Ok(())
}

#[async_trait]
impl<T: Transport + PushSource> EventBackend for PostgresBackend<T> {
    async fn events_installed(&self) -> Result<bool> {
        feature_installed(&self.client().await?, SQL.installed).await
    }

    async fn install_events(&self) -> Result<()> {
        install_feature(self.begin().await?, &SQL.migration).await?;
        install_feature(self.begin().await?, &POSTGRES_TRIGGERS).await?;
        install_feature(self.begin().await?, &POSTGRES_JOIN_PLAN).await
    }

    async fn events_page(
        &self,
        after: Position,
        filter: EventFilter,
        limit: i64,
    ) -> Result<RawPage> {
        page(&self.client().await?, after, &filter, limit).await
    }

    async fn sweep_events(&self, cutoff_ms: i64, keep: i64) -> Result<()> {
        let tx = self.begin().await?;
        let swept = sweep(&tx, cutoff_ms, keep).await;
        end_tx(tx, swept).await
    }

    fn events_ticket(&self) -> u64 {
        self.wakes.events_ticket()
    }

    async fn events_changed(&self, since: u64, timeout: Duration) {
        self.wakes.events_changed(since, timeout).await
    }
}
