//! Flow control on SQLite (docs/protocol.md, "Flow control tables"): the
//! statements of each step the core's `flow/` decides, run on the
//! writer's connection inside its transaction. The write lock serializes
//! claimers, so what a draw counts stays true until it commits: no locks of
//! its own.

use async_trait::async_trait;
use rusqlite::Connection;

use super::conn::apply_in_transaction;
use super::lifecycle::SqliteBackend;
use super::query::{at_once, query, query_tasks, Cells};
use super::rows::json_list;
use super::steps::WriterTx;
use crate::clock::Clock;
use crate::error::Result;
use crate::flow::backend::FlowBackend;
use crate::flow::claim;
use crate::flow::declare::declare;
use crate::flow::draw::{Chunk, GroupLimits, WindowCount};
use crate::flow::pick::{GroupCounts, Scanned};
use crate::flow::transaction::{FlowTransaction, StoredDeclaration, StoredKey};
use crate::flow::{
    Budget, Declaration, Declared, FlowLimits, KeyDeclared, RateLimit, Replaced, KEYS_TABLE,
    LIMITS_TABLE,
};
use crate::protocol::flow::{
    sqlite_draw_scan, SQLITE as SQL, SQLITE_GROUP_RUNNING, SQLITE_GROUP_STARTS, SQLITE_SHARED_KEYS,
    SQLITE_STARTS_PRUNE, SQLITE_STARTS_RECORD,
};
use crate::protocol::SQLITE_CLAIM_IDS;
use crate::steps::rows::{Suspended, Wake};
use crate::steps::transaction::suspend;
use crate::store::backend::{ClaimPlan, ClaimRequest, Draw, HeldTask};
use crate::task::Task;

/// The writer's connection, inside its transaction, and the transaction's time.
struct SqliteFlow<'c>(&'c Connection, i64);

/// Inside the writer's transaction (the write lock held).
#[async_trait]
impl FlowBackend for SqliteBackend {
    async fn declare_flow(
        &self,
        worker_id: String,
        declarations: Vec<Declaration>,
    ) -> Result<Vec<Replaced>> {
        let clock = self.clock.clone();
        self.transaction(move |conn| {
            let mut flow = SqliteFlow(conn, clock.now_ms());
            at_once(declare(&mut flow, &worker_id, &declarations))
        })
        .await
    }

    async fn push_back(&self, owned: HeldTask, ms: i64) -> Result<Suspended> {
        let clock = self.clock.clone();
        self.transaction(move |conn| {
            let mut tx = WriterTx::new(conn, clock.now_ms());
            query(
                conn,
                SQL.push_back,
                &[(":id", &owned.task_id), (":now", &tx.now), (":ms", &ms)],
                |_| Ok(()),
            )?;
            let wake = Wake::At(tx.now.saturating_add(ms));
            at_once(suspend(&mut tx, &owned, None, wake))
        })
        .await
    }
}

/// One flow draw inside the claim transaction.
pub fn draw(
    conn: &Connection,
    request: &ClaimRequest,
    draw: &Draw,
    plan: &mut dyn ClaimPlan,
    clock: &Clock,
) -> Result<()> {
    let mut flow = SqliteFlow(conn, clock.now_ms());
    at_once(claim::run(&mut flow, request, draw, plan))
}

impl FlowTransaction for SqliteFlow<'_> {
    async fn install(&mut self) -> Result<()> {
        apply_in_transaction(self.0, &SQL.migration)?;
        apply_in_transaction(self.0, &SQLITE_SHARED_KEYS)
    }

    async fn declared(&mut self, name: &str) -> Result<StoredDeclaration> {
        let found = query(self.0, SQL.limits, &[(":name", &name)], |row| {
            let row = Cells::new(row, LIMITS_TABLE, name.into());
            Ok((|| {
                let key = match row.opt_int(7, "rate_max")? {
                    None => None,
                    Some(max) => Some(KeyDeclared {
                        rate: RateLimit {
                            max,
                            per_ms: row.int(8, "rate_per_ms")?,
                            per_group: row.int(9, "rate_per_group")? != 0,
                        },
                        by: row.get(10, "declared_by")?,
                        at_ms: row.int(11, "declared_at_ms")?,
                    }),
                };
                Ok(Declared {
                    limits: FlowLimits::from_columns(
                        row.opt_int(0, "rate_max")?,
                        row.opt_int(1, "rate_per_ms")?,
                        row.int(2, "rate_per_group")?,
                        row.opt_int(3, "group_concurrency")?,
                        row.get(6, "rate_key")?,
                    ),
                    by: row.get(4, "declared_by")?,
                    at_ms: row.int(5, "declared_at_ms")?,
                    key,
                })
            })())
        })?;
        Ok(found.into_iter().next())
    }

    async fn declared_key(&mut self, key: &str) -> Result<StoredKey> {
        let found = query(self.0, SQL.key_limits, &[(":key", &key)], |row| {
            let row = Cells::new(row, KEYS_TABLE, key.into());
            Ok((|| {
                Ok(KeyDeclared {
                    rate: RateLimit {
                        max: row.int(0, "rate_max")?,
                        per_ms: row.int(1, "rate_per_ms")?,
                        per_group: row.int(2, "rate_per_group")? != 0,
                    },
                    by: row.get(3, "declared_by")?,
                    at_ms: row.int(4, "declared_at_ms")?,
                })
            })())
        })?;
        Ok(found.into_iter().next())
    }

    async fn declare_key(&mut self, worker_id: &str, key: &str, rate: RateLimit) -> Result<()> {
        query(
            self.0,
            SQL.declare_key,
            &[
                (":key", &key),
                (":rate_max", &rate.max),
                (":rate_per_ms", &rate.per_ms),
                (":rate_per_group", &(rate.per_group as i64)),
                (":declared_by", &worker_id),
                (":now", &self.1),
            ],
            |_| Ok(()),
        )?;
        Ok(())
    }

    async fn declare(&mut self, worker_id: &str, declaration: &Declaration) -> Result<()> {
        let (rate_max, rate_per_ms, rate_per_group, group_concurrency) =
            declaration.limits.columns();
        query(
            self.0,
            SQL.declare,
            &[
                (":name", &declaration.name),
                (":rate_max", &rate_max),
                (":rate_per_ms", &rate_per_ms),
                (":rate_per_group", &rate_per_group),
                (":group_concurrency", &group_concurrency),
                (":rate_key", &declaration.limits.rate_key),
                (":declared_by", &worker_id),
                (":now", &self.1),
            ],
            |_| Ok(()),
        )?;
        Ok(())
    }

    async fn start_draw(
        &mut self,
        _queue: &str,
        name: &str,
        _first: Chunk,
    ) -> Result<(StoredDeclaration, i64)> {
        Ok((self.declared(name).await?, self.1))
    }

    async fn lock_budget(&mut self, _budget: &Budget) -> Result<bool> {
        Ok(true)
    }

    async fn window(&mut self, budget: &Budget, since: i64) -> Result<Vec<WindowCount>> {
        self.prune(budget, since).await?;
        query(
            self.0,
            SQL.starts_window,
            &[
                (":name", &budget.id),
                (":shared_key", &budget.shared_column()),
                (":since", &since),
            ],
            |row| {
                Ok(WindowCount {
                    group: row.get(0)?,
                    count: row.get(1)?,
                    oldest_ms: row.get(2)?,
                })
            },
        )
    }

    async fn prune(&mut self, budget: &Budget, since: i64) -> Result<()> {
        query(
            self.0,
            SQLITE_STARTS_PRUNE,
            &[
                (":name", &budget.id),
                (":shared_key", &budget.shared_column()),
                (":since", &since),
            ],
            |_| Ok(()),
        )?;
        Ok(())
    }

    async fn lock_groups(&mut self, _queue: &str, _name: &str, _chunk: Chunk) -> Result<()> {
        Ok(())
    }

    /// The rows, then each count only when its limit is declared.
    async fn scan(
        &mut self,
        queue: &str,
        name: &str,
        budget: &Budget,
        now: i64,
        chunk: Chunk,
        groups: &GroupLimits,
    ) -> Result<(Vec<Scanned>, GroupCounts)> {
        let scanned = query(
            self.0,
            sqlite_draw_scan(),
            &[
                (":queue", &queue),
                (":name", &name),
                (":now", &now),
                (":limit", &chunk.rows),
            ],
            |row| {
                Ok(Scanned {
                    id: row.get(0)?,
                    group: row.get(1)?,
                })
            },
        )?;
        let mut counts = GroupCounts::default();
        if scanned.is_empty() || !groups.any() {
            return Ok((scanned, counts));
        }
        let mut seen: Vec<&str> = scanned.iter().map(|row| row.group.as_str()).collect();
        seen.sort_unstable();
        seen.dedup();
        let seen = json_list(&seen);
        let per_group =
            |row: &rusqlite::Row<'_>| Ok((row.get::<_, String>(0)?, row.get::<_, i64>(1)?));
        if groups.concurrency.is_some() {
            counts.running = query(
                self.0,
                SQLITE_GROUP_RUNNING,
                &[(":name", &name), (":groups", &seen)],
                per_group,
            )?
            .into_iter()
            .collect();
        }
        if groups.rate_max.is_some() {
            counts.started = query(
                self.0,
                SQLITE_GROUP_STARTS,
                &[
                    (":name", &budget.id),
                    (":shared_key", &budget.shared_column()),
                    (":groups", &seen),
                    (":since", &groups.since),
                ],
                per_group,
            )?
            .into_iter()
            .collect();
        }
        Ok((scanned, counts))
    }

    async fn claim(
        &mut self,
        request: &ClaimRequest,
        budget: &Budget,
        ids: &[String],
        now: i64,
        rate: Option<RateLimit>,
    ) -> Result<Vec<Task>> {
        let rows = query_tasks(
            self.0,
            SQLITE_CLAIM_IDS,
            &[
                (":ids", &json_list(ids)),
                (":worker_id", &request.worker_id),
                (":now", &now),
                (":lease_ms", &request.lease_ms),
            ],
        )?;
        if let Some(rate) = rate.filter(|_| !rows.is_empty()) {
            let ids = json_list(&rows.iter().map(|t| &t.id).collect::<Vec<_>>());
            query(
                self.0,
                SQLITE_STARTS_RECORD,
                &[
                    (":name", &budget.id),
                    (":shared_key", &budget.shared_column()),
                    (":ids", &ids),
                    (":per_group", &rate.per_group),
                ],
                |_| Ok(()),
            )?;
        }
        Ok(rows)
    }

    async fn due_count(&mut self, queue: &str, name: &str, now: i64, bound: i64) -> Result<i64> {
        let due = query(
            self.0,
            SQL.due_count,
            &[
                (":queue", &queue),
                (":name", &name),
                (":now", &now),
                (":bound", &bound),
            ],
            |row| row.get::<_, i64>(0),
        )?;
        Ok(due.first().copied().unwrap_or(0))
    }
}
