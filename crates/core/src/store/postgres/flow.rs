//! Flow control on Postgres (docs/protocol.md, "Flow control tables"): the
//! statements of each step the core's `flow/` decides, run in the
//! declaration's or the claim's transaction, over any transport. Claimers in
//! other processes run at the same time, so a draw counts a window or a group
//! only under that key's transaction-scoped advisory lock, taken by an
//! earlier statement than the count (a statement's snapshot predates its own
//! lock waits): whoever counted before has committed what it claimed. Locks
//! are only tried, never waited for, so two claimers cannot deadlock; a key
//! another claimer holds is left to it for this draw.

use std::collections::HashMap;

use async_trait::async_trait;

use super::conn::{apply, execute, rows, tasks};
use super::lifecycle::PostgresBackend;
use super::listener::PushSource;
use super::steps::PgTx;
use super::transport::{end_tx, params, Param, PgRow, Session, Transport};
use crate::error::Result;
use crate::flow::backend::FlowBackend;
use crate::flow::claim;
use crate::flow::declare::declare;
use crate::flow::draw::{Chunk, GroupLimits, WindowCount};
use crate::flow::pick::{GroupCounts, Scanned};
use crate::flow::transaction::{FlowTransaction, StoredDeclaration, StoredKey};
use crate::flow::{Budget, Declaration, Declared, FlowLimits, KeyDeclared, RateLimit, Replaced};
use crate::protocol::flow::{
    POSTGRES as SQL, POSTGRES_CLAIM_IDS, POSTGRES_DRAW_SCAN, POSTGRES_GROUP_RUNNING,
    POSTGRES_GROUP_STARTS, POSTGRES_LIMITS_AND_LOCKS, POSTGRES_LOCK_NAME, POSTGRES_PUSH_BACK_LOCK,
    POSTGRES_SHARED_KEYS,
};
use crate::protocol::with_literal_limit;
use crate::steps::rows::{Suspended, Wake};
use crate::steps::transaction::suspend;
use crate::store::backend::{ClaimPlan, ClaimRequest, Draw, HeldTask};
use crate::task::Task;

/// A transaction, the groups whose advisory locks it holds, and what the
/// last `limits_and_locks` and `group_running` read for the next chunk.
struct PgFlow<'t, S> {
    tx: &'t S,
    held: Vec<String>,
    read: Vec<Scanned>,
    /// The running rows of the name per group, as `group_running` counted
    /// them (a group missing has none).
    running: HashMap<String, i64>,
}

impl<'t, S: Session> PgFlow<'t, S> {
    fn new(tx: &'t S) -> Self {
        PgFlow {
            tx,
            held: Vec::new(),
            read: Vec::new(),
            running: HashMap::new(),
        }
    }

    /// `limits_and_locks` before a chunk of `queue`: the name's limits and
    /// the database clock; under group limits the chunk's rows, kept for
    /// `scan`, and the groups it locked join `held`. `group_running` goes in
    /// the same round trip and runs after it: under a group concurrency the
    /// running rows per group, counted after the locks.
    async fn limits_and_locks(
        &mut self,
        queue: &str,
        name: &str,
        chunk: Chunk,
    ) -> Result<(StoredDeclaration, i64)> {
        let answers = self
            .tx
            .query_all(&[
                (
                    with_literal_limit(POSTGRES_LIMITS_AND_LOCKS, "$5", chunk.rows),
                    &params![&queue, &name, &chunk.limit, &self.held],
                ),
                (POSTGRES_GROUP_RUNNING, &params![&name]),
            ])
            .await?;
        let [found, running]: [Vec<_>; 2] = answers.try_into().ok().expect("two answers");
        self.running = running
            .iter()
            .map(|row| Ok((row.text(0)?, row.int(1)?)))
            .collect::<Result<_>>()?;
        let row = found.first().expect("limits_and_locks answers a row");
        let declared = declared_of(row)?;
        let now = row.int(12)?;
        self.read.clear();
        for row in &found {
            let Some(id) = row.opt_text(13)? else {
                continue;
            };
            let group = row.text(14)?;
            if row.bool(15)? {
                self.held.push(group.clone());
            }
            self.read.push(Scanned { id, group });
        }
        Ok((declared.map(Ok), now))
    }
}

/// The limits columns of a `limits` row (the first twelve: the name's, its
/// key, the key's).
fn declared_of<R: PgRow>(row: &R) -> Result<Option<Declared>> {
    let Some(by) = row.opt_text(4)? else {
        return Ok(None);
    };
    let key = match row.opt_int(7)? {
        None => None,
        Some(max) => Some(key_of(row, 7, max)?),
    };
    Ok(Some(Declared {
        limits: FlowLimits::from_columns(
            row.opt_int(0)?,
            row.opt_int(1)?,
            row.int(2)?,
            row.opt_int(3)?,
            row.opt_text(6)?,
        ),
        by,
        at_ms: row.int(5)?,
        key,
    }))
}

/// A key's columns from `at` on (`rate_max`, the `max` read, then
/// `rate_per_ms`, `rate_per_group`, `declared_by`, `declared_at_ms`).
fn key_of<R: PgRow>(row: &R, at: usize, max: i64) -> Result<KeyDeclared> {
    Ok(KeyDeclared {
        rate: RateLimit {
            max,
            per_ms: row.int(at + 1)?,
            per_group: row.int(at + 2)? != 0,
        },
        by: row.text(at + 3)?,
        at_ms: row.int(at + 4)?,
    })
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

    async fn push_back(&self, owned: HeldTask, ms: i64) -> Result<Suspended> {
        let tx = self.begin().await?;
        let pushed = async {
            execute(&tx, POSTGRES_PUSH_BACK_LOCK, &params![&owned.task_id]).await?;
            execute(&tx, SQL.push_back, &params![&owned.task_id, &ms]).await?;
            suspend(&mut PgTx(&tx), &owned, None, Wake::After(ms)).await
        }
        .await;
        end_tx(tx, pushed).await
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
        apply(self.tx, &SQL.migration).await?;
        apply(self.tx, &POSTGRES_SHARED_KEYS).await
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
                &declaration.limits.rate_key,
            ],
        )
        .await?;
        Ok(())
    }

    async fn declared_key(&mut self, key: &str) -> Result<StoredKey> {
        match rows(self.tx, SQL.key_limits, &params![&key]).await?.first() {
            Some(row) => Ok(Some(Ok(key_of(row, 0, row.int(0)?)?))),
            None => Ok(None),
        }
    }

    async fn declare_key(&mut self, worker_id: &str, key: &str, rate: RateLimit) -> Result<()> {
        execute(
            self.tx,
            SQL.declare_key,
            &params![
                &key,
                &rate.max,
                &rate.per_ms,
                &(rate.per_group as i64),
                &worker_id
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

    async fn lock_budget(&mut self, budget: &Budget) -> Result<bool> {
        let locked = rows(
            self.tx,
            POSTGRES_LOCK_NAME,
            &params![&budget.id, &budget.shared_column()],
        )
        .await?;
        Ok(locked
            .first()
            .map(|row| row.bool(0))
            .transpose()?
            .unwrap_or(false))
    }

    async fn window(&mut self, budget: &Budget, since: i64) -> Result<Vec<WindowCount>> {
        rows(
            self.tx,
            SQL.starts_window,
            &params![&budget.id, &budget.shared_column(), &since],
        )
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
    async fn prune(&mut self, budget: &Budget, since: i64) -> Result<()> {
        self.window(budget, since).await.map(drop)
    }

    /// The name's limits, read again, go unused: the draw keeps the first.
    async fn lock_groups(&mut self, queue: &str, name: &str, chunk: Chunk) -> Result<()> {
        self.limits_and_locks(queue, name, chunk).await.map(drop)
    }

    /// Under group limits, the rows the chunk's `limits_and_locks` read
    /// whose groups this transaction holds, with the running rows
    /// `group_running` counted beside it and, under a per-group rate, their
    /// groups' starts from a later statement; a limited group another
    /// claimer holds the lock of is left to it. Without group limits, the
    /// rows alone.
    async fn scan(
        &mut self,
        queue: &str,
        name: &str,
        budget: &Budget,
        now: i64,
        chunk: Chunk,
        groups: &GroupLimits,
    ) -> Result<(Vec<Scanned>, GroupCounts)> {
        let mut counts = GroupCounts::default();
        if !groups.any() {
            let found = rows(
                self.tx,
                with_literal_limit(POSTGRES_DRAW_SCAN, "$4", chunk.rows),
                &params![&queue, &name, &now],
            )
            .await?;
            let scanned = found
                .iter()
                .map(|row| {
                    Ok(Scanned {
                        id: row.text(0)?,
                        group: row.text(1)?,
                    })
                })
                .collect::<Result<_>>()?;
            return Ok((scanned, counts));
        }
        let mut scanned = std::mem::take(&mut self.read);
        scanned.truncate(usize::try_from(chunk.rows).unwrap_or(0));
        scanned.retain(|row| !groups.limits(&row.group) || self.held.contains(&row.group));
        // `group_running` counted the running rows after the locks already.
        counts.running = std::mem::take(&mut self.running);
        if groups.rate_max.is_none() || scanned.is_empty() {
            return Ok((scanned, counts));
        }
        let mut counted: Vec<String> = scanned.iter().map(|row| row.group.clone()).collect();
        counted.sort_unstable();
        counted.dedup();
        let found = rows(
            self.tx,
            POSTGRES_GROUP_STARTS,
            &params![
                Param::Texts(&counted),
                &budget.id,
                &budget.shared_column(),
                &groups.since,
            ],
        )
        .await?;
        for row in &found {
            counts.started.insert(row.text(0)?, row.int(1)?);
        }
        Ok((scanned, counts))
    }

    /// The starts are recorded by `claim_ids` itself, at the database clock.
    async fn claim(
        &mut self,
        request: &ClaimRequest,
        budget: &Budget,
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
                &budget.id,
                &budget.shared_column(),
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
