//! A worker's poll on Postgres: the read-only probe (an idle poll's only
//! statement) and the claim transaction's statements.

use super::conn::{rows, task_rows, tasks};
use super::rows::insert_new;
use super::transport::{params, Param, PgRow, Session, Statement};
use crate::deadletter::letter::recovered_letters;
use crate::error::Result;
use crate::protocol::deadletters::POSTGRES as DEAD_LETTERS;
use crate::protocol::{specialize_for, ClaimShape, POSTGRES as SQL};
use crate::store::backend::{ClaimPlan, ClaimRequest};

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
/// recovery, then the plan's draws. The completions and the recovery go in
/// the first plain draw's round trip (in that order, as if run one by one);
/// only without one do they run alone. Returns the ids completed.
pub(super) async fn claim_draws<S: Session>(
    tx: &S,
    request: &ClaimRequest,
    completions: Vec<(String, Option<String>)>,
    plan: &mut dyn ClaimPlan,
) -> Result<Vec<String>> {
    let (ids, results): (Vec<String>, Vec<Option<String>>) = completions.into_iter().unzip();
    let complete = params![&ids, &results, &request.worker_id];
    let mut leading: Vec<Statement> = Vec::with_capacity(3);
    if !ids.is_empty() {
        leading.push((SQL.complete_batch, &complete));
    }
    leading.push((SQL.recover_leases, &[]));
    // The completed ids and the recovered ones once the leading statements ran.
    let mut led: Option<Led> = None;
    while let Some(draw) = plan.next_draw() {
        if draw.is_empty() {
            plan.accept(Vec::new());
            continue;
        }
        if draw.flow {
            if led.is_none() {
                led = Some(Led::read(&tx.query_all(&leading).await?, &ids)?);
            }
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
        let claim = [
            queue,
            name,
            Param::from(&request.worker_id),
            Param::from(&request.lease_ms),
            Param::from(&draw.limit),
        ];
        let lead = if led.is_none() { &leading[..] } else { &[] };
        let statements: Vec<Statement> = lead
            .iter()
            .copied()
            .chain([(shape.statement(&SQL), &claim[..])])
            .collect();
        let mut answers = tx.query_all(&statements).await?;
        let claimed = task_rows(&answers.pop().expect("the claim's answer"))?;
        if led.is_none() {
            led = Some(Led::read(&answers, &ids)?);
        }
        plan.accept(claimed);
    }
    let led = match led {
        Some(led) => led,
        None => Led::read(&tx.query_all(&leading).await?, &ids)?,
    };
    if !led.recovered.is_empty() {
        dead_letter_recovered(tx, &led.recovered, plan).await?;
    }
    Ok(led.completed)
}

/// What the leading statements answered: the ids `complete_batch` completed
/// (its answer comes first when `ids` were sent) and those `recover_leases`
/// failed for good.
struct Led {
    completed: Vec<String>,
    recovered: Vec<String>,
}

impl Led {
    fn read<R: PgRow>(answers: &[Vec<R>], ids: &[String]) -> Result<Self> {
        let ids_of = |rows: Option<&Vec<R>>| -> Result<Vec<String>> {
            rows.map_or(Ok(Vec::new()), |rows| {
                rows.iter().map(|row| row.text(0)).collect()
            })
        };
        let (completed, recovered) = if ids.is_empty() {
            (Vec::new(), ids_of(answers.first())?)
        } else {
            (ids_of(answers.first())?, ids_of(answers.get(1))?)
        };
        Ok(Led {
            completed,
            recovered,
        })
    }
}

/// The dead letters of the tasks lease recovery just failed for good
/// (docs/api.md, "Dead letters"), in the claim's transaction.
async fn dead_letter_recovered<S: Session>(
    tx: &S,
    recovered: &Vec<String>,
    // `&mut`: a shared borrow of the plan held across an await is not `Send`.
    plan: &mut dyn ClaimPlan,
) -> Result<()> {
    let failed = tasks(tx, DEAD_LETTERS.recovered_failed, &params![recovered]).await?;
    for letter in recovered_letters(&failed, plan) {
        insert_new(tx, &letter).await?;
    }
    Ok(())
}
