//! A worker's poll on Postgres: the read-only probe (an idle poll's only
//! statement) and the claim transaction's statements.

use super::conn::{rows, tasks};
use super::rows::{complete_many, insert_new};
use super::transport::{params, Param, PgRow, Session};
use crate::deadletter::Route;
use crate::error::Result;
use crate::protocol::deadletters::POSTGRES as DEAD_LETTERS;
use crate::protocol::{specialize_for, ClaimShape, POSTGRES as SQL};
use crate::store::backend::{ClaimPlan, ClaimRequest};
use crate::store::dead_letters::letter_of;

/// `claimable_probe`: whether a claim on `request`'s queues and names may
/// find work now.
pub(super) async fn claimable<S: Session>(client: &S, request: &ClaimRequest) -> Result<bool> {
    let sql = specialize_for(
        SQL.claimable_probe,
        &[("$2::text[]", request.names.is_some())],
    );
    let found = rows(client, sql, &params![&request.queues, &request.names]).await?;
    Ok(found
        .first()
        .map(|row| row.bool(0))
        .transpose()?
        .unwrap_or(false))
}

/// A poll's statements inside its transaction: the completions, lease
/// recovery, then the plan's draws. Returns the ids completed.
pub(super) async fn claim_draws<S: Session>(
    tx: &S,
    request: &ClaimRequest,
    completions: Vec<(String, Option<String>)>,
    plan: &mut dyn ClaimPlan,
) -> Result<Vec<String>> {
    let completed = if completions.is_empty() {
        Vec::new()
    } else {
        complete_many(tx, &request.worker_id, completions).await?
    };
    let recovered = rows(tx, SQL.recover_leases, &params![]).await?;
    if !recovered.is_empty() {
        let ids = recovered
            .iter()
            .map(|row| row.text(0))
            .collect::<Result<Vec<String>>>()?;
        dead_letter_recovered(tx, &ids).await?;
    }
    while let Some(draw) = plan.next_draw() {
        if draw.is_empty() {
            plan.accept(Vec::new());
            continue;
        }
        if draw.flow {
            super::flow::draw(tx, request, &draw, plan).await?;
            continue;
        }
        let shape = ClaimShape::of(&request.queues, draw.names.as_deref());
        // Equality forms bind the single element, list forms the whole list.
        let queue = match shape {
            ClaimShape::OneQueue | ClaimShape::OneQueueOneName => Param::from(&request.queues[0]),
            ClaimShape::Lists | ClaimShape::OneName => Param::from(&request.queues),
        };
        let name = match (shape, &draw.names) {
            (ClaimShape::OneName | ClaimShape::OneQueueOneName, Some(names)) => {
                Param::from(&names[0])
            }
            _ => Param::from(&draw.names),
        };
        let claimed = tasks(
            tx,
            shape.statement(&SQL),
            &[
                queue,
                name,
                Param::from(&request.worker_id),
                Param::from(&request.lease_ms),
                Param::from(&draw.limit),
            ],
        )
        .await?;
        plan.accept(claimed);
    }
    Ok(completed)
}

/// The dead letters of the tasks lease recovery just failed for good
/// (docs/api.md, "Dead letters"), in the claim's transaction.
async fn dead_letter_recovered<S: Session>(tx: &S, recovered: &Vec<String>) -> Result<()> {
    let failed = tasks(tx, DEAD_LETTERS.recovered_failed, &params![recovered]).await?;
    for letter in failed
        .iter()
        .filter_map(|row| letter_of(row, &Route::Stored))
    {
        insert_new(tx, &letter).await?;
    }
    Ok(())
}
