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
use super::transport::{end_tx, params, Param, PgRow, Session, Transaction};
use crate::error::Result;
use crate::protocol::flow::{POSTGRES as SQL, POSTGRES_LOCK_KEYS};
use crate::store::backend::{ClaimPlan, ClaimRequest, Draw};
use crate::store::flow::walk::{self, Allowance, Candidate, Walk, WindowCount};
use crate::store::flow::{Declaration, Declared, FlowLimits, Replaced};

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

/// Which of `keys` this transaction now holds.
async fn lock<S: Session>(tx: &S, keys: &[String]) -> Result<Vec<String>> {
    if keys.is_empty() {
        return Ok(Vec::new());
    }
    let keys = keys.to_vec();
    rows(tx, POSTGRES_LOCK_KEYS, &params![&keys])
        .await?
        .iter()
        .map(|row| row.text(0))
        .collect()
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

/// The walk's counts, read again now that more groups are locked.
async fn count<S: Session>(tx: &S, walk: &mut Walk, name: &str, now: i64) -> Result<()> {
    if walk.counts_running() {
        let running = rows(tx, SQL.running_groups, &params![&name])
            .await?
            .iter()
            .map(|row| Ok((row.text(0)?, row.int(1)?)))
            .collect::<Result<Vec<_>>>()?;
        walk.set_running(running);
    }
    if let Some(rate) = walk.group_rate() {
        walk.set_started(&window(tx, name, walk::window_since(&rate, now)).await?);
    }
    Ok(())
}

/// One flow draw: the name's limits and the database clock; under a name-wide
/// rate, the name's lock and window; the running groups and group windows;
/// then the candidates of each queue in claim order, each chunk's groups
/// locked and counted again before the walk picks from it; the picked tasks
/// claimed (those another claimer took meanwhile skipped) with their starts
/// recorded. Hands the plan the rows (and, when the name's window is full,
/// when it opens).
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
    let found = rows(tx, SQL.limits, &params![name]).await?;
    let row = found.first().expect("the limits statement answers one row");
    let limits = declared_of(row)?.map(|d| d.limits).unwrap_or_default();
    let now = row.int(6)?;
    let mut want = draw.limit;
    if let Some(rate) = limits.name_rate() {
        let key = walk::lock_key(name, None);
        if lock(tx, std::slice::from_ref(&key)).await?.is_empty() {
            // Another claimer is starting this name right now.
            plan.accept(Vec::new());
            return Ok(());
        }
        let since = walk::window_since(&rate, now);
        match walk::name_allowance(&rate, &window(tx, name, since).await?, now) {
            Allowance::Starts(allowed) => want = want.min(allowed),
            Allowance::Full { retry_in_ms } => {
                plan.rate_limited(retry_in_ms);
                plan.accept(Vec::new());
                return Ok(());
            }
        }
    }
    let mut walk = Walk::new(name, limits, want, true);
    count(tx, &mut walk, name, now).await?;
    for queue in &request.queues {
        let mut after: Option<Candidate> = None;
        while !walk.done() {
            let size = walk.chunk_size();
            let excluded = walk.excluded();
            let (after_priority, after_run_at, after_id) = match &after {
                Some(c) => (Some(c.priority), Some(c.run_at_ms), Some(c.id.clone())),
                None => (None, None, None),
            };
            let chunk = rows(
                tx,
                SQL.candidates,
                &[
                    Param::from(queue),
                    Param::from(name),
                    Param::from(&now),
                    Param::from(&excluded),
                    Param::from(&after_priority),
                    Param::from(&after_run_at),
                    Param::from(&after_id),
                    Param::from(&size),
                ],
            )
            .await?
            .iter()
            .map(|row| {
                Ok(Candidate {
                    id: row.text(0)?,
                    group: row.text(1)?,
                    priority: row.int(2)?,
                    run_at_ms: row.int(3)?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
            let wanted = walk.locks_wanted(&chunk);
            if !wanted.is_empty() {
                let granted = lock(tx, &wanted).await?;
                walk.locked(&wanted, &granted);
                count(tx, &mut walk, name, now).await?;
            }
            walk.offer(&chunk);
            if (chunk.len() as i64) < size {
                break;
            }
            after = chunk.last().cloned();
        }
    }
    if walk.picks().is_empty() {
        plan.accept(Vec::new());
        return Ok(());
    }
    let picks = walk.picks().to_vec();
    let record = limits.rate.is_some();
    let per_group = limits.rate.is_some_and(|r| r.per_group);
    let claimed = tasks(
        tx,
        SQL.claim_picked,
        &params![
            &picks,
            &request.worker_id,
            &request.lease_ms,
            name,
            &record,
            &per_group,
        ],
    )
    .await?;
    plan.accept(claimed);
    Ok(())
}
