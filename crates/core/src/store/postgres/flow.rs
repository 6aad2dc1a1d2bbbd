//! Flow control on Postgres (docs/protocol.md, "Flow control tables"): the
//! tables created on first declaration, and a flow draw run inside the claim
//! transaction, over any transport. Claimers in other processes run at the
//! same time, so a draw counts a window or a group only under that key's
//! transaction-scoped advisory lock, taken by an earlier statement than the
//! count (a statement's snapshot predates its own lock waits): whoever counted
//! before has committed what it claimed. Locks are only tried, never waited
//! for, so two claimers cannot deadlock; a key another claimer holds is left
//! to it for this draw.

use super::conn::{apply, rows, tasks};
use super::transport::{end_tx, params, PgRow, Session, Transaction};
use crate::error::Result;
use crate::protocol::flow::{
    POSTGRES as SQL, POSTGRES_CLAIM_IDS, POSTGRES_DRAW_SCAN, POSTGRES_LIMITS_AND_LOCKS,
    POSTGRES_LOCK_NAME,
};
use crate::store::backend::{ClaimPlan, ClaimRequest, Draw};
use crate::store::flow::draw::{self as flow, Allowance, Chunk, Chunks, GroupLimits, WindowCount};
use crate::store::flow::pick::{pick, GroupCounts, Scanned};
use crate::store::flow::{Declaration, Declared, FlowLimits, RateLimit, Replaced};
use crate::task::Task;

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

/// Under the ledger's exclusive lock (as a migration), so two processes
/// declaring at once create the tables and their ledger row once; the
/// declarations themselves serialize on their rows.
pub async fn declare<X: Transaction>(
    tx: X,
    worker_id: &str,
    declarations: &[Declaration],
) -> Result<Vec<Replaced>> {
    let declared = async {
        apply(&tx, &SQL.migration).await?;
        let mut replaced = Vec::new();
        for declaration in declarations {
            let found = rows(&tx, SQL.limits, &params![&declaration.name]).await?;
            let previous = match found.first() {
                Some(row) => declared_of(row)?,
                None => None,
            };
            if previous
                .as_ref()
                .is_some_and(|p| p.limits == declaration.limits)
            {
                continue;
            }
            let (rate_max, rate_per_ms, rate_per_group, group_concurrency) =
                declaration.limits.columns();
            rows(
                &tx,
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
            replaced.extend(previous.map(|previous| Replaced {
                name: declaration.name.clone(),
                limits: declaration.limits,
                previous,
            }));
        }
        Ok(replaced)
    }
    .await;
    end_tx(tx, declared).await
}

/// The starts of `name` after `since`, per group (older ones pruned).
async fn window<S: Session>(tx: &S, name: &str, since: i64) -> Result<Vec<WindowCount>> {
    rows(tx, SQL.starts_window, &params![&name, &since])
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

/// `limits_and_locks` before a chunk of `queue`: the name's limits (read
/// again each time, the draw keeping the first) and the database clock; the
/// groups it locked join `held`.
async fn limits_and_locks<S: Session>(
    tx: &S,
    queue: &str,
    name: &str,
    chunk: Chunk,
    held: &mut Vec<String>,
) -> Result<(FlowLimits, i64)> {
    let found = rows(
        tx,
        POSTGRES_LIMITS_AND_LOCKS,
        &params![&queue, &name, &chunk.rows, &chunk.limit, &*held],
    )
    .await?;
    let row = found.first().expect("limits_and_locks answers a row");
    let limits = declared_of(row)?.map(|d| d.limits).unwrap_or_default();
    let now = row.int(6)?;
    for row in &found {
        held.extend(row.opt_text(7)?);
    }
    Ok((limits, now))
}

/// One chunk on `queue`: its due rows in claim order with their groups'
/// counts, the core's pick among those whose group is either unlimited or
/// locked by this transaction (`held`), and the claim of the picked ids
/// (rows another claimer took meanwhile skipped), recording their starts
/// under a rate.
async fn claim_chunk<S: Session>(
    tx: &S,
    request: &ClaimRequest,
    (queue, name, now): (&str, &str, i64),
    chunk: Chunk,
    groups: &GroupLimits,
    held: &[String],
    rate: Option<RateLimit>,
) -> Result<Vec<Task>> {
    let found = rows(
        tx,
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
        if groups.limits(&group) && !held.contains(&group) {
            continue;
        }
        counts.running.insert(group.clone(), row.int(2)?);
        counts.started.insert(group.clone(), row.int(3)?);
        scanned.push(Scanned {
            id: row.text(0)?,
            group,
        });
    }
    let ids = pick(&scanned, &counts, groups, chunk.limit);
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    tasks(
        tx,
        POSTGRES_CLAIM_IDS,
        &params![
            &ids,
            &request.worker_id,
            &request.lease_ms,
            &rate.is_some(),
            &rate.is_some_and(|r| r.per_group),
        ],
    )
    .await
}

/// One flow draw: the name's limits and the database clock, with the locks
/// of the first chunk's groups (one statement); under a name-wide rate, the
/// name's lock and window; then per queue the chunks `Chunks` asks for, each
/// one `claim_chunk`, each after the first preceded, when groups are limited,
/// by `limits_and_locks` for the groups it may claim. Hands the plan the rows
/// (and, when the name's window is full, when it opens).
pub async fn draw<S: Session>(
    tx: &S,
    request: &ClaimRequest,
    draw: &Draw,
    plan: &mut dyn ClaimPlan,
) -> Result<()> {
    let name = draw
        .names
        .as_deref()
        .and_then(|n| n.first())
        .expect("a flow draw names its task");
    let first_queue = request.queues.first().map_or("", String::as_str);
    let mut held: Vec<String> = Vec::new();
    let (limits, now) =
        limits_and_locks(tx, first_queue, name, Chunk::first(draw.limit), &mut held).await?;
    let mut locked_first = true;
    let mut want = draw.limit;
    if let Some(rate) = limits.name_rate() {
        let locked = rows(tx, POSTGRES_LOCK_NAME, &params![name]).await?;
        if !locked
            .first()
            .map(|row| row.bool(0))
            .transpose()?
            .unwrap_or(false)
        {
            // Another claimer is starting this name right now.
            plan.accept(Vec::new());
            return Ok(());
        }
        let since = flow::window_since(&rate, now);
        match flow::name_allowance(&rate, &window(tx, name, since).await?, now) {
            Allowance::Starts(allowed) => want = want.min(allowed),
            Allowance::Full { retry_in_ms } => {
                plan.rate_limited(retry_in_ms);
                plan.accept(Vec::new());
                return Ok(());
            }
        }
    }
    let groups = GroupLimits::of(&limits, now);
    if groups.rate_max.is_some() {
        // Only its pruning: the chunks count the window per group.
        window(tx, name, groups.since).await?;
    }
    let mut chunks = Chunks::new(groups, want);
    let mut claimed = Vec::new();
    for queue in &request.queues {
        chunks.start_queue();
        while let Some(chunk) = chunks.next() {
            if groups.any() && !std::mem::take(&mut locked_first) {
                limits_and_locks(tx, queue, name, chunk, &mut held).await?;
            }
            let taken = claim_chunk(
                tx,
                request,
                (queue, name, now),
                chunk,
                &groups,
                &held,
                limits.rate,
            )
            .await?;
            let count = taken.len() as i64;
            claimed.extend(taken);
            if let Some(bound) = chunks.claimed(count) {
                let due = rows_of(tx, queue, name, now, bound).await?;
                chunks.due(due);
            }
        }
    }
    plan.accept(claimed);
    Ok(())
}

/// The due queued rows of `name` left on `queue`, counted up to `bound`.
async fn rows_of<S: Session>(tx: &S, queue: &str, name: &str, now: i64, bound: i64) -> Result<i64> {
    let found = rows(tx, SQL.due_count, &params![&queue, &name, &now, &bound]).await?;
    found.first().map_or(Ok(0), |row| row.int(0))
}
