//! Flow control on Postgres (docs/protocol.md, "Flow control tables"): the
//! statements of each step the core's `store/flow` decides, run in the
//! declaration's or the claim's transaction, over any transport. Claimers in
//! other processes run at the same time, so a draw counts a window or a group
//! only under that key's transaction-scoped advisory lock, taken by an
//! earlier statement than the count (a statement's snapshot predates its own
//! lock waits): whoever counted before has committed what it claimed. Locks
//! are only tried, never waited for, so two claimers cannot deadlock; a key
//! another claimer holds is left to it for this draw.

use async_trait::async_trait;

use super::conn::{apply, rows, tasks};
use super::lifecycle::PostgresBackend;
use super::listener::PushSource;
use super::transport::{end_tx, params, Param, PgRow, Session, Transport};
use crate::error::Result;
use crate::protocol::flow::{
    POSTGRES as SQL, POSTGRES_CLAIM_IDS, POSTGRES_DRAW_SCAN, POSTGRES_LIMITS_AND_LOCKS,
    POSTGRES_LOCK_NAME,
};
use crate::store::backend::{ClaimPlan, ClaimRequest, Draw, FlowBackend};
use crate::store::flow::claim;
use crate::store::flow::declare::declare;
use crate::store::flow::draw::{Chunk, GroupLimits, WindowCount};
use crate::store::flow::pick::{GroupCounts, Scanned};
use crate::store::flow::transaction::{FlowTransaction, StoredDeclaration};
use crate::store::flow::{Declaration, Declared, FlowLimits, RateLimit, Replaced};
use crate::task::Task;

/// A transaction, and the groups whose advisory locks it holds.
struct PgFlow<'t, S> {
    tx: &'t S,
    held: Vec<String>,
}

impl<'t, S: Session> PgFlow<'t, S> {
    fn new(tx: &'t S) -> Self {
        PgFlow {
            tx,
            held: Vec::new(),
        }
    }

    /// `limits_and_locks` before a chunk of `queue`: the name's limits and
    /// the database clock; the groups it locked join `held`.
    async fn limits_and_locks(
        &mut self,
        queue: &str,
        name: &str,
        chunk: Chunk,
    ) -> Result<(StoredDeclaration, i64)> {
        let found = rows(
            self.tx,
            POSTGRES_LIMITS_AND_LOCKS,
            &params![&queue, &name, &chunk.rows, &chunk.limit, &self.held],
        )
        .await?;
        let row = found.first().expect("limits_and_locks answers a row");
        let declared = declared_of(row)?;
        let now = row.int(6)?;
        for row in &found {
            self.held.extend(row.opt_text(7)?);
        }
        Ok((declared.map(Ok), now))
    }
}

/// The limits columns of a `limits` row (the first six).
fn declared_of<R: PgRow>(row: &R) -> Result<Option<Declared>> {
    let Some(by) = row.opt_text(4)? else {
        return Ok(None);
    };
    Ok(Some(Declared {
        limits: FlowLimits::from_columns(
            row.opt_int(0)?,
            row.opt_int(1)?,
            row.int(2)?,
            row.opt_int(3)?,
        ),
        by,
        at_ms: row.int(5)?,
    }))
}

/// Under the ledger's exclusive lock (as a migration); the declarations
/// themselves serialize on their rows.
#[async_trait]
impl<T: Transport + PushSource> FlowBackend for PostgresBackend<T> {
    async fn declare_flow(
        &self,
        worker_id: String,
        declarations: Vec<Declaration>,
    ) -> Result<Vec<Replaced>> {
        let tx = self.begin().await?;
        let declared = declare(&mut PgFlow::new(&tx), &worker_id, &declarations).await;
        end_tx(tx, declared).await
    }
}

/// One flow draw inside the claim transaction.
pub async fn draw<S: Session>(
    tx: &S,
    request: &ClaimRequest,
    draw: &Draw,
    plan: &mut dyn ClaimPlan,
) -> Result<()> {
    claim::run(&mut PgFlow::new(tx), request, draw, plan).await
}

impl<S: Session> FlowTransaction for PgFlow<'_, S> {
    async fn install(&mut self) -> Result<()> {
        apply(self.tx, &SQL.migration).await
    }

    async fn declared(&mut self, name: &str) -> Result<StoredDeclaration> {
        match rows(self.tx, SQL.limits, &params![&name]).await?.first() {
            Some(row) => Ok(declared_of(row)?.map(Ok)),
            None => Ok(None),
        }
    }

    async fn declare(&mut self, worker_id: &str, declaration: &Declaration) -> Result<()> {
        let (rate_max, rate_per_ms, rate_per_group, group_concurrency) =
            declaration.limits.columns();
        rows(
            self.tx,
            SQL.declare,
            &params![
                &declaration.name,
                &rate_max,
                &rate_per_ms,
                &rate_per_group,
                &group_concurrency,
                &worker_id,
            ],
        )
        .await?;
        Ok(())
    }

    /// The limits, the clock and the first chunk's locks in one statement.
    async fn start_draw(
        &mut self,
        queue: &str,
        name: &str,
        first: Chunk,
    ) -> Result<(StoredDeclaration, i64)> {
        self.limits_and_locks(queue, name, first).await
    }

    async fn lock_name(&mut self, name: &str) -> Result<bool> {
        let locked = rows(self.tx, POSTGRES_LOCK_NAME, &params![&name]).await?;
        Ok(locked
            .first()
            .map(|row| row.bool(0))
            .transpose()?
            .unwrap_or(false))
    }

    async fn window(&mut self, name: &str, since: i64) -> Result<Vec<WindowCount>> {
        rows(self.tx, SQL.starts_window, &params![&name, &since])
            .await?
            .iter()
            .map(|row| {
                Ok(WindowCount {
                    group: row.text(0)?,
                    count: row.int(1)?,
                    oldest_ms: row.int(2)?,
                })
            })
            .collect()
    }

    /// `starts_window` prunes: its answer is left unread.
    async fn prune(&mut self, name: &str, since: i64) -> Result<()> {
        self.window(name, since).await.map(drop)
    }

    /// The name's limits, read again, go unused: the draw keeps the first.
    async fn lock_groups(&mut self, queue: &str, name: &str, chunk: Chunk) -> Result<()> {
        self.limits_and_locks(queue, name, chunk).await.map(drop)
    }

    /// The rows with their groups' counts in one statement; a limited group
    /// another claimer holds the lock of is left to it.
    async fn scan(
        &mut self,
        queue: &str,
        name: &str,
        now: i64,
        chunk: Chunk,
        groups: &GroupLimits,
    ) -> Result<(Vec<Scanned>, GroupCounts)> {
        let found = rows(
            self.tx,
            POSTGRES_DRAW_SCAN,
            &params![
                &queue,
                &name,
                &now,
                &chunk.rows,
                &groups.concurrency.is_some(),
                &groups.since,
                &groups.rate_max.is_some(),
            ],
        )
        .await?;
        let mut scanned = Vec::with_capacity(found.len());
        let mut counts = GroupCounts::default();
        for row in &found {
            let group = row.text(1)?;
            if groups.limits(&group) && !self.held.contains(&group) {
                continue;
            }
            counts.running.insert(group.clone(), row.int(2)?);
            counts.started.insert(group.clone(), row.int(3)?);
            scanned.push(Scanned {
                id: row.text(0)?,
                group,
            });
        }
        Ok((scanned, counts))
    }

    /// The starts are recorded by `claim_ids` itself, at the database clock.
    async fn claim(
        &mut self,
        request: &ClaimRequest,
        _name: &str,
        ids: &[String],
        _now: i64,
        rate: Option<RateLimit>,
    ) -> Result<Vec<Task>> {
        tasks(
            self.tx,
            POSTGRES_CLAIM_IDS,
            &params![
                Param::Texts(ids),
                &request.worker_id,
                &request.lease_ms,
                &rate.is_some(),
                &rate.is_some_and(|r| r.per_group),
            ],
        )
        .await
    }

    async fn due_count(&mut self, queue: &str, name: &str, now: i64, bound: i64) -> Result<i64> {
        let found = rows(
            self.tx,
            SQL.due_count,
            &params![&queue, &name, &now, &bound],
        )
        .await?;
        found.first().map_or(Ok(0), |row| row.int(0))
    }
}
