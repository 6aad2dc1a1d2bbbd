//! A flow draw in the claim transaction, written once for both dialects:
//! each step's statements run by the backend's `FlowTransaction`, every
//! decision taken here or in `draw` and `pick`.

use super::draw::{name_allowance, window_since, Allowance, Chunk, Chunks, GroupLimits};
use super::pick::pick;
use super::transaction::FlowTransaction;
use super::FlowLimits;
use crate::error::Result;
use crate::store::backend_values::{ClaimPlan, ClaimRequest, Draw};
use crate::store::bad_rows::report;

/// One flow draw in the claim transaction `tx`: the name's limits and,
/// under a name-wide rate, its budget's lock and window (the name's own, or
/// its key's); then per queue the chunks
/// `Chunks` asks for, each scanned, picked (`pick`) and claimed, each after
/// the draw's first preceded, under group limits, by the locks of its
/// groups. Hands the plan the rows (and, when the name's window is full,
/// when it opens).
pub async fn run<T: FlowTransaction>(
    tx: &mut T,
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
    let (declared, now) = tx
        .start_draw(first_queue, name, Chunk::first(draw.limit))
        .await?;
    let limits = match declared {
        None => FlowLimits::default(),
        Some(Ok(declared)) => declared.enforced(),
        // Limits nobody can read are no licence to run unlimited: the name
        // waits for a worker's next declaration, the other names go on.
        Some(Err(bad)) => {
            report(&bad);
            plan.accept(Vec::new());
            return Ok(());
        }
    };
    let budget = limits.budget(name);
    let mut want = draw.limit;
    if let Some(rate) = limits.name_rate() {
        if !tx.lock_budget(&budget).await? {
            // Another claimer is starting tasks of this budget right now.
            plan.accept(Vec::new());
            return Ok(());
        }
        let since = window_since(&rate, now);
        match name_allowance(&rate, &tx.window(&budget, since).await?, now) {
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
        tx.prune(&budget, groups.since).await?;
    }
    let mut chunks = Chunks::new(groups, want);
    let mut claimed = Vec::new();
    let mut first_chunk = true;
    for queue in &request.queues {
        chunks.start_queue();
        while let Some(chunk) = chunks.next() {
            if groups.any() && !std::mem::take(&mut first_chunk) {
                tx.lock_groups(queue, name, chunk).await?;
            }
            let (scanned, counts) = tx.scan(queue, name, &budget, now, chunk, &groups).await?;
            let ids = pick(&scanned, &counts, &groups, chunk.limit);
            let rows = if ids.is_empty() {
                Vec::new()
            } else {
                tx.claim(request, &budget, &ids, now, limits.rate).await?
            };
            let count = rows.len() as i64;
            claimed.extend(rows);
            if let Some(bound) = chunks.claimed(count) {
                chunks.due(tx.due_count(queue, name, now, bound).await?);
            }
        }
    }
    plan.accept(claimed);
    Ok(())
}
