//! Flow control on SQLite (docs/protocol.md, "Flow control tables"): the
//! tables created on first declaration, and a flow draw run inside the claim
//! transaction. The write lock serializes claimers, so what a draw counts
//! stays true until it commits: no locks of its own.

use rusqlite::Connection;

use super::conn::apply_in_transaction;
use super::query::{query, query_tasks, Cells};
use super::rows::json_list;
use crate::error::Result;
use crate::ids::now_ms;
use crate::protocol::flow::{
    SQLITE as SQL, SQLITE_CLAIM_IDS, SQLITE_DRAW_SCAN, SQLITE_GROUP_RUNNING, SQLITE_GROUP_STARTS,
    SQLITE_STARTS_PRUNE, SQLITE_STARTS_RECORD,
};
use crate::store::backend::{ClaimPlan, ClaimRequest, Draw};
use crate::store::bad_rows::{report, BadRow};
use crate::store::flow::draw::{self as flow, Allowance, Chunk, Chunks, GroupLimits, WindowCount};
use crate::store::flow::pick::{pick, GroupCounts, Scanned};
use crate::store::flow::{Declaration, Declared, FlowLimits, Replaced, LIMITS_TABLE};
use crate::task::Task;

/// The declared limits of `name`, if any: a `BadRow` when another program
/// wrote them in a shape the core cannot read.
fn declared(
    conn: &Connection,
    name: &str,
) -> Result<Option<std::result::Result<Declared, BadRow>>> {
    let found = query(conn, SQL.limits, &[(":name", &name)], |row| {
        let row = Cells::new(row, LIMITS_TABLE, name.into());
        Ok((|| {
            Ok(Declared {
                limits: FlowLimits::from_columns(
                    row.opt_int(0, "rate_max")?,
                    row.opt_int(1, "rate_per_ms")?,
                    row.int(2, "rate_per_group")?,
                    row.opt_int(3, "group_concurrency")?,
                ),
                by: row.get(4, "declared_by")?,
                at_ms: row.int(5, "declared_at_ms")?,
            })
        })())
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
        // A row nobody can read counts as none: this declaration replaces it.
        let previous =
            declared(conn, &declaration.name)?.and_then(|row| row.map_err(|bad| report(&bad)).ok());
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

/// Drop the starts of `name` no window after `since` reaches.
fn prune(conn: &Connection, name: &str, since: i64) -> Result<()> {
    query(
        conn,
        SQLITE_STARTS_PRUNE,
        &[(":name", &name), (":since", &since)],
        |_| Ok(()),
    )?;
    Ok(())
}

/// The starts of `name` in the window after `since`, after dropping the
/// older ones.
fn window(conn: &Connection, name: &str, since: i64) -> Result<Vec<WindowCount>> {
    prune(conn, name, since)?;
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

/// One chunk on `queue`: its due rows in claim order, the counts of their
/// groups, the core's pick, and the claim of the picked ids.
fn claim_chunk(
    conn: &Connection,
    request: &ClaimRequest,
    queue: &str,
    name: &str,
    now: i64,
    chunk: &Chunk,
    groups: &GroupLimits,
) -> Result<Vec<Task>> {
    let scanned = query(
        conn,
        SQLITE_DRAW_SCAN,
        &[
            (":queue", &queue),
            (":name", &name),
            (":now", &now),
            (":rows", &chunk.rows),
        ],
        |row| {
            Ok(Scanned {
                id: row.get(0)?,
                group: row.get(1)?,
            })
        },
    )?;
    if scanned.is_empty() {
        return Ok(Vec::new());
    }
    let counts = group_counts(conn, name, groups, &scanned)?;
    let ids = pick(&scanned, &counts, groups, chunk.limit);
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    query_tasks(
        conn,
        SQLITE_CLAIM_IDS,
        &[
            (":ids", &json_list(&ids)),
            (":worker_id", &request.worker_id),
            (":now", &now),
            (":lease_ms", &request.lease_ms),
        ],
    )
}

/// What counts against the groups of `scanned` under `groups`' limits.
fn group_counts(
    conn: &Connection,
    name: &str,
    groups: &GroupLimits,
    scanned: &[Scanned],
) -> Result<GroupCounts> {
    let mut counts = GroupCounts::default();
    if !groups.any() {
        return Ok(counts);
    }
    let mut seen: Vec<&str> = scanned.iter().map(|row| row.group.as_str()).collect();
    seen.sort_unstable();
    seen.dedup();
    let seen = json_list(&seen);
    let per_group = |row: &rusqlite::Row<'_>| Ok((row.get::<_, String>(0)?, row.get::<_, i64>(1)?));
    if groups.concurrency.is_some() {
        counts.running = query(
            conn,
            SQLITE_GROUP_RUNNING,
            &[(":name", &name), (":groups", &seen)],
            per_group,
        )?
        .into_iter()
        .collect();
    }
    if groups.rate_max.is_some() {
        counts.started = query(
            conn,
            SQLITE_GROUP_STARTS,
            &[
                (":name", &name),
                (":groups", &seen),
                (":since", &groups.since),
            ],
            per_group,
        )?
        .into_iter()
        .collect();
    }
    Ok(counts)
}

/// One flow draw: the name's limits and, under a name-wide rate, its window;
/// then per queue the chunks `Chunks` asks for, each one `claim_chunk`,
/// recording the starts of a rate-limited name. Hands the plan the rows (and,
/// when the name's window is full, when it opens).
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
    let limits = match declared(conn, name)? {
        None => FlowLimits::default(),
        Some(Ok(declared)) => declared.limits,
        // Limits nobody can read are no licence to run unlimited: the name
        // waits for a worker's next declaration, the other names go on.
        Some(Err(bad)) => {
            report(&bad);
            plan.accept(Vec::new());
            return Ok(());
        }
    };
    let mut want = draw.limit;
    if let Some(rate) = limits.name_rate() {
        let since = flow::window_since(&rate, now);
        match flow::name_allowance(&rate, &window(conn, name, since)?, now) {
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
        prune(conn, name, groups.since)?;
    }
    let mut chunks = Chunks::new(groups, want);
    let mut claimed = Vec::new();
    for queue in &request.queues {
        chunks.start_queue();
        while let Some(chunk) = chunks.next() {
            let rows = claim_chunk(conn, request, queue, name, now, &chunk, &groups)?;
            if let Some(rate) = limits.rate.filter(|_| !rows.is_empty()) {
                let ids = json_list(&rows.iter().map(|t| &t.id).collect::<Vec<_>>());
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
            let count = rows.len() as i64;
            claimed.extend(rows);
            if let Some(bound) = chunks.claimed(count) {
                let due = query(
                    conn,
                    SQL.due_count,
                    &[
                        (":queue", queue),
                        (":name", name),
                        (":now", &now),
                        (":bound", &bound),
                    ],
                    |row| row.get::<_, i64>(0),
                )?;
                chunks.due(due.first().copied().unwrap_or(0));
            }
        }
    }
    plan.accept(claimed);
    Ok(())
}
