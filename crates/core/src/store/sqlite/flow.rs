//! Flow control on SQLite (docs/protocol.md, "Flow control tables"): the
//! tables created on first declaration, and a flow draw run inside the claim
//! transaction. The write lock serializes claimers, so what a draw counts
//! stays true until it commits: no locks of its own.

use rusqlite::Connection;

use super::conn::apply_in_transaction;
use super::query::{query, query_tasks};
use crate::error::Result;
use crate::ids::now_ms;
use crate::protocol::flow::{SQLITE as SQL, SQLITE_STARTS_PRUNE, SQLITE_STARTS_RECORD};
use crate::store::backend::{ClaimPlan, ClaimRequest, Draw};
use crate::store::flow::walk::{self, Allowance, Candidate, Walk, WindowCount};
use crate::store::flow::{Declaration, Declared, FlowLimits, Replaced};

/// The declared limits of `name`, if any.
fn declared(conn: &Connection, name: &str) -> Result<Option<Declared>> {
    let found = query(conn, SQL.limits, &[(":name", &name)], |row| {
        Ok(Declared {
            limits: FlowLimits::from_columns(row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?),
            by: row.get(4)?,
            at_ms: row.get(5)?,
        })
    })?;
    Ok(found.into_iter().next())
}

/// Inside the writer's transaction (the write lock held), so two processes
/// declaring at once create the tables and their ledger row once.
pub fn declare(
    conn: &Connection,
    worker_id: &str,
    declarations: &[Declaration],
) -> Result<Vec<Replaced>> {
    apply_in_transaction(conn, &SQL.migration)?;
    let mut replaced = Vec::new();
    for declaration in declarations {
        let previous = declared(conn, &declaration.name)?;
        if previous
            .as_ref()
            .is_some_and(|p| p.limits == declaration.limits)
        {
            continue;
        }
        let (rate_max, rate_per_ms, rate_per_group, group_concurrency) =
            declaration.limits.columns();
        query(
            conn,
            SQL.declare,
            &[
                (":name", &declaration.name),
                (":rate_max", &rate_max),
                (":rate_per_ms", &rate_per_ms),
                (":rate_per_group", &rate_per_group),
                (":group_concurrency", &group_concurrency),
                (":declared_by", &worker_id),
                (":now", &now_ms()),
            ],
            |_| Ok(()),
        )?;
        replaced.extend(previous.map(|previous| Replaced {
            name: declaration.name.clone(),
            limits: declaration.limits,
            previous,
        }));
    }
    Ok(replaced)
}

/// The starts of `name` in the window ending at `now`, after dropping the
/// older ones.
fn window(conn: &Connection, name: &str, since: i64) -> Result<Vec<WindowCount>> {
    query(
        conn,
        SQLITE_STARTS_PRUNE,
        &[(":name", &name), (":since", &since)],
        |_| Ok(()),
    )?;
    query(
        conn,
        SQL.starts_window,
        &[(":name", &name), (":since", &since)],
        |row| {
            Ok(WindowCount {
                group: row.get(0)?,
                count: row.get(1)?,
                oldest_ms: row.get(2)?,
            })
        },
    )
}

/// One flow draw: the name's limits, its windows and running groups, then the
/// candidates of each queue in claim order until the walk has what it wants;
/// the picked tasks are claimed and their starts recorded. Hands the plan the
/// rows (and, when the name's window is full, when it opens).
pub fn draw(
    conn: &Connection,
    request: &ClaimRequest,
    draw: &Draw,
    plan: &mut dyn ClaimPlan,
) -> Result<()> {
    let name = draw
        .names
        .as_deref()
        .and_then(|n| n.first())
        .expect("a flow draw names its task");
    let now = now_ms();
    let limits = declared(conn, name)?.map(|d| d.limits).unwrap_or_default();
    let mut want = draw.limit;
    if let Some(rate) = limits.name_rate() {
        let since = walk::window_since(&rate, now);
        match walk::name_allowance(&rate, &window(conn, name, since)?, now) {
            Allowance::Starts(allowed) => want = want.min(allowed),
            Allowance::Full { retry_in_ms } => {
                plan.rate_limited(retry_in_ms);
                plan.accept(Vec::new());
                return Ok(());
            }
        }
    }
    let mut walk = Walk::new(name, limits, want, false);
    if walk.counts_running() {
        let running = query(conn, SQL.running_groups, &[(":name", &name)], |row| {
            Ok((row.get::<_, String>(0)?, row.get::<_, i64>(1)?))
        })?;
        walk.set_running(running);
    }
    if let Some(rate) = walk.group_rate() {
        walk.set_started(&window(conn, name, walk::window_since(&rate, now))?);
    }
    for queue in &request.queues {
        let mut after: Option<Candidate> = None;
        while !walk.done() {
            let size = walk.chunk_size();
            let excluded = serde_json::to_string(&walk.excluded()).expect("groups encode");
            let chunk = query(
                conn,
                SQL.candidates,
                &[
                    (":queue", queue),
                    (":name", name),
                    (":now", &now),
                    (":excluded", &excluded),
                    (":after_priority", &after.as_ref().map(|c| c.priority)),
                    (":after_run_at", &after.as_ref().map(|c| c.run_at_ms)),
                    (":after_id", &after.as_ref().map(|c| c.id.clone())),
                    (":limit", &size),
                ],
                |row| {
                    Ok(Candidate {
                        id: row.get(0)?,
                        group: row.get(1)?,
                        priority: row.get(2)?,
                        run_at_ms: row.get(3)?,
                    })
                },
            )?;
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
    let ids = serde_json::to_string(walk.picks()).expect("ids encode");
    let rows = query_tasks(
        conn,
        SQL.claim_picked,
        &[
            (":ids", &ids),
            (":worker_id", &request.worker_id),
            (":lease_ms", &request.lease_ms),
            (":now", &now),
        ],
    )?;
    if let Some(rate) = limits.rate {
        query(
            conn,
            SQLITE_STARTS_RECORD,
            &[
                (":name", name),
                (":ids", &ids),
                (":per_group", &rate.per_group),
            ],
            |_| Ok(()),
        )?;
    }
    plan.accept(rows);
    Ok(())
}
