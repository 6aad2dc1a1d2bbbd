//! A tick's writes on Postgres: its plain submits share one statement, so one
//! commit and one WAL flush, instead of a transaction each; every other write
//! runs on its own connection beside them.

use std::collections::HashMap;

use futures_util::future::join_all;

use super::conn::tasks;
use super::lifecycle::PostgresBackend;
use super::listener::PushSource;
use super::transport::{params, Transport};
use crate::error::Error;
use crate::protocol::{self, POSTGRES_INSERT_TASKS};
use crate::store::backend::{Backend, NewTask, WriteAnswer, WriteOp};
use crate::task::Task;

/// Each op's answer, in order. Fewer than two plain submits run as before.
pub(super) async fn write_group<T: Transport + PushSource>(
    backend: &PostgresBackend<T>,
    ops: Vec<WriteOp>,
) -> Vec<WriteAnswer> {
    let submits = ops
        .iter()
        .filter(|op| matches!(op, WriteOp::Insert(_)))
        .count();
    if submits < 2 {
        return join_all(ops.into_iter().map(|op| backend.write_one(op))).await;
    }
    let count = ops.len();
    let mut inserts = Vec::with_capacity(submits);
    let mut others = Vec::with_capacity(count - submits);
    for (place, op) in ops.into_iter().enumerate() {
        match op {
            WriteOp::Insert(task) => inserts.push((place, task)),
            other => others.push((place, other)),
        }
    }
    let rest = join_all(
        others
            .into_iter()
            .map(|(place, op)| async move { (place, backend.write_one(op).await) }),
    );
    let (batched, rest) = futures_util::join!(insert_together(backend, inserts), rest);
    let mut answers: Vec<Option<WriteAnswer>> = (0..count).map(|_| None).collect();
    for (place, answer) in batched.into_iter().chain(rest) {
        answers[place] = Some(answer);
    }
    answers
        .into_iter()
        .map(|answer| answer.expect("every op answered"))
        .collect()
}

/// The submits as one `insert_tasks.sql` statement answering their rows.
/// If it fails, nothing of it was written, and each runs on its own so that
/// a refused one fails alone (an id cannot be inserted twice).
async fn insert_together<T: Transport + PushSource>(
    backend: &PostgresBackend<T>,
    inserts: Vec<(usize, NewTask)>,
) -> Vec<(usize, WriteAnswer)> {
    let tasks_json = {
        let tasks: Vec<&NewTask> = inserts.iter().map(|(_, task)| task).collect();
        serde_json::to_string(&tasks).expect("tasks encode")
    };
    let inserted = async {
        let client = backend.client().await?;
        let sql = protocol::returning_row(POSTGRES_INSERT_TASKS);
        tasks(&client, sql, &params![&tasks_json]).await
    }
    .await;
    match inserted {
        Ok(rows) => answered_in_order(&inserts, rows),
        Err(_) => {
            join_all(
                inserts.into_iter().map(|(place, task)| async move {
                    (place, backend.insert(task).await.map(Some))
                }),
            )
            .await
        }
    }
}

/// Each submit's inserted row, by its id (RETURNING promises no order).
fn answered_in_order(inserts: &[(usize, NewTask)], rows: Vec<Task>) -> Vec<(usize, WriteAnswer)> {
    let mut by_id: HashMap<String, Task> =
        rows.into_iter().map(|row| (row.id.clone(), row)).collect();
    inserts
        .iter()
        .map(|(place, task)| {
            let row = by_id.remove(&task.id).ok_or_else(|| Error::Database {
                code: tokio_postgres::error::SqlState::NO_DATA.code().to_string(),
                message: format!("the grouped insert returned no row for {}", task.id),
            });
            (*place, row.map(Some))
        })
        .collect()
}
