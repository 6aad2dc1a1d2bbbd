//! A worker's poll on SQLite: the read-only probe that decides whether a
//! claim is worth the write lock, and the claim transaction (completions,
//! lease recovery, the plan's draws).

use rusqlite::Connection;

use super::query::{execute, query, query_tasks};
use super::rows::json_list;
use super::writes::{complete_many, insert_new};
use crate::clock::Clock;
use crate::deadletter::letter::recovered_letters;
use crate::error::{Error, Result};
use crate::protocol::deadletters::SQLITE as DEAD_LETTERS;
use crate::protocol::{
    specialize_for, without_returning, ClaimShape, SQLITE as SQL, SQLITE_CLAIM_IDS,
};
use crate::store::backend::{ClaimPlan, ClaimRequest, Polled};
use crate::task::Task;

/// The claim probe of `request`, as a read to run on a connection.
pub(super) fn probe(
    request: &ClaimRequest,
    clock: Clock,
) -> impl Fn(&Connection) -> Result<bool> + Send + 'static {
    let queues = json_list(&request.queues);
    let names = request.names.as_deref().map(json_list);
    // A name list reaches cairnq_tasks_claim_name_idx only once its term
    // is required: otherwise the probe walks every queued row of the
    // queues, however many other names they hold.
    let sql = specialize_for(SQL.claimable_probe, &[(":names", names.is_some())]);
    move |conn| {
        let hit = query(
            conn,
            sql,
            &[
                (":queues", &queues),
                (":names", &names),
                (":now", &clock.now_ms()),
            ],
            |row| row.get::<_, bool>(0),
        )?;
        Ok(hit.into_iter().next().unwrap_or(false))
    }
}

/// The poll's transaction: `completions` written, expired leases recovered,
/// then the plan's draws. A plan that fails rolls it all back.
pub(super) fn claim(
    conn: &Connection,
    request: &ClaimRequest,
    completions: &[(String, Option<String>)],
    mut plan: Box<dyn ClaimPlan>,
    clock: &Clock,
) -> Result<Polled> {
    let completed = if completions.is_empty() {
        Vec::new()
    } else {
        complete_many(conn, &request.worker_id, completions, clock.now_ms())?
    };
    let recovered: Vec<String> = query(
        conn,
        SQL.recover_leases,
        &[(":now", &clock.now_ms())],
        |row| row.get(0),
    )?;
    if !recovered.is_empty() {
        dead_letter_recovered(conn, &recovered, &*plan, clock.now_ms())?;
    }
    let queues_json = json_list(&request.queues);
    let one_queue = request.queues.first().cloned();
    while let Some(draw) = plan.next_draw() {
        if draw.is_empty() {
            plan.accept(Vec::new());
            continue;
        }
        if draw.flow {
            super::flow::draw(conn, request, &draw, &mut *plan, clock)?;
            continue;
        }
        let shape = ClaimShape::of(&request.queues, draw.names.as_deref());
        let names_json = draw.names.as_deref().map(json_list);
        let one_name = draw.names.as_ref().and_then(|n| n.first().cloned());
        let now = clock.now_ms();
        let rows = query_tasks(
            conn,
            shape.statement(&SQL),
            &[
                (":queues", &queues_json),
                (":queue", &one_queue),
                (":names", &names_json),
                (":name", &one_name),
                (":limit", &draw.limit),
                (":now", &now),
            ],
        )?;
        plan.accept(mark_claimed(conn, request, rows, now)?);
    }
    if !plan.keep() {
        // Failing the job is what rolls its transaction back.
        return Err(Error::Invalid(
            "the claim session's plan failed; its draws were rolled back".into(),
        ));
    }
    Ok(Polled {
        completed,
        plan: Some(plan),
    })
}

/// Mark claimed the rows a draw read, in the same write transaction, with
/// `claim_ids.sql` less its `returning` clause: the rows are read already,
/// and SQLite building them again as results would cost more than the
/// update's own row count, which checks that every row was still queued.
/// Answers them as the update leaves them.
fn mark_claimed(
    conn: &Connection,
    request: &ClaimRequest,
    rows: Vec<Task>,
    now: i64,
) -> Result<Vec<Task>> {
    if rows.is_empty() {
        return Ok(rows);
    }
    let ids = json_list(&rows.iter().map(|task| &task.id).collect::<Vec<_>>());
    let marked = execute(
        conn,
        without_returning(SQLITE_CLAIM_IDS),
        &[
            (":ids", &ids),
            (":worker_id", &request.worker_id),
            (":now", &now),
            (":lease_ms", &request.lease_ms),
        ],
    )?;
    if marked != rows.len() {
        // Failing the job is what rolls its transaction back.
        return Err(Error::Invalid(format!(
            "a claim's draw read {} queued rows but marked {marked}; its draws were rolled back",
            rows.len()
        )));
    }
    Ok(rows
        .into_iter()
        .map(|task| task.claimed(&request.worker_id, now, request.lease_ms))
        .collect())
}

/// The dead letters of the tasks lease recovery just failed for good
/// (docs/api.md, "Dead letters"), in the claim's transaction.
fn dead_letter_recovered(
    conn: &Connection,
    recovered: &[String],
    plan: &dyn ClaimPlan,
    now: i64,
) -> Result<()> {
    let ids = json_list(recovered);
    let failed = query_tasks(conn, DEAD_LETTERS.recovered_failed, &[(":ids", &ids)])?;
    for letter in recovered_letters(&failed, plan) {
        insert_new(conn, &letter, now)?;
    }
    Ok(())
}
