//! `submitIn` on SQLite: the application's own connection (better-sqlite3,
//! `node:sqlite`, `bun:sqlite`) writes the rows inside its transaction. The
//! core drives every submit, keyed and debounced ones as the store decides
//! them (`store::keyed`), and hands that connection one statement at a time:
//! a statement the store itself runs, its named parameters turned into `?`
//! placeholders with a list of values (which every driver binds); the
//! connection hands back the rows it read, as objects.

use std::sync::OnceLock;

use rusqlite::types::{ToSqlOutput, ValueRef};
use serde::Serialize;
use serde_json::{json, Map, Value};

use super::conn::{LEDGER_HAS, LEDGER_RECORD};
use super::followups::{hold_params, postpone_params};
use super::query::Params;
use super::writes::{debounce_params, insert_values, INSERT_PARAMS};
use crate::error::{Error, Result};
use crate::protocol::followups::{LEDGER_NAME, SQLITE as FOLLOWUPS};
use crate::protocol::steps::SQLITE as STEPS;
use crate::protocol::{returning_row, SQLITE as SQL};
use crate::store::backend::{NewTask, TaskRef, WriteOp};
use crate::store::inputs::item_error;
use crate::store::keyed::{insert_keyed, KeyedAnswer, KeyedConn, KeyedStep};
use crate::task::{Status, Task};

/// How the caller's connection runs a statement.
#[derive(Clone, Copy, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// A statement that reads: its rows.
    Rows,
    /// A write: no rows.
    Write,
    /// Several statements without values (a table's creation): no rows.
    Script,
}

/// The caller's connection: takes one statement as JSON, `{"sql": …,
/// "values": [...], "mode": "rows"|"write"|"script"}`, runs it and answers
/// the rows it read as a JSON array of objects (`[]` for a write).
pub type RunOnCaller<'r> = dyn FnMut(String) -> Result<String> + 'r;

/// `ops` (`store::submit_in`) in order on the caller's connection; each op's
/// task ref. `items`: the ops are `submitManyIn`'s, and a refusal names the
/// item. Unless it is one plain insert, the submit runs in a savepoint that a
/// refusal undoes: what a keyed submit, or an earlier item, wrote is gone
/// and the caller's transaction goes on as before the call. `now`: the
/// store clock's time.
pub fn submit_in(
    ops: Vec<WriteOp>,
    items: bool,
    now: i64,
    run: &mut RunOnCaller<'_>,
) -> Result<Vec<TaskRef>> {
    let mut caller = CallerConn { run, now };
    let guarded = ops.len() > 1 || ops.iter().any(|op| !matches!(op, WriteOp::Insert(_)));
    if guarded {
        caller.script("savepoint cairnq_submit_in")?;
    }
    let submitted = ops
        .iter()
        .enumerate()
        .map(|(index, op)| {
            caller
                .submit(op)
                .map_err(|e| if items { item_error(index, e) } else { e })
        })
        .collect::<Result<Vec<TaskRef>>>();
    if guarded {
        if submitted.is_ok() {
            caller.script("release cairnq_submit_in")?;
        } else {
            // The refusal is the error to report: a failed undo leaves the
            // caller's transaction to its own rollback.
            let _ = caller.script("rollback to cairnq_submit_in");
            let _ = caller.script("release cairnq_submit_in");
        }
    }
    submitted
}

struct CallerConn<'r, 'f> {
    run: &'r mut RunOnCaller<'f>,
    /// The clock of every statement of the call.
    now: i64,
}

impl CallerConn<'_, '_> {
    fn submit(&mut self, op: &WriteOp) -> Result<TaskRef> {
        match op {
            WriteOp::Insert(task) => Ok(TaskRef::of(&self.insert(task)?)),
            WriteOp::InsertKeyed(task, key, conflict) => {
                let now = self.now;
                Ok(TaskRef::of(&insert_keyed(self, task, key, *conflict, now)?))
            }
            other => unreachable!("submitIn passes submits only, got {other:?}"),
        }
    }

    fn call(
        &mut self,
        sql: &str,
        values: Vec<Value>,
        mode: Mode,
    ) -> Result<Vec<Map<String, Value>>> {
        let request = json!({"sql": sql, "values": values, "mode": mode}).to_string();
        let answer = (self.run)(request)?;
        serde_json::from_str(&answer).map_err(|e| {
            Error::Connection(format!(
                "your connection's rows are not a list of row objects: {e}"
            ))
        })
    }

    fn rows(&mut self, sql: &str, params: &Params<'_>) -> Result<Vec<Map<String, Value>>> {
        let (text, values) = bound(sql, params)?;
        self.call(&text, values, Mode::Rows)
    }

    fn write(&mut self, sql: &str, params: &Params<'_>) -> Result<()> {
        let (text, values) = bound(sql, params)?;
        self.call(&text, values, Mode::Write).map(drop)
    }

    fn script(&mut self, sql: &str) -> Result<()> {
        self.call(sql, Vec::new(), Mode::Script).map(drop)
    }

    /// The first column of the first row, as SQLite's booleans are: 0 or 1.
    fn flag(&mut self, sql: &str, params: &Params<'_>) -> Result<bool> {
        let rows = self.rows(sql, params)?;
        let first = rows.first().and_then(|row| row.values().next());
        Ok(first.and_then(Value::as_f64).is_some_and(|v| v != 0.0))
    }

    fn task(&mut self, sql: &str, params: &Params<'_>) -> Result<Option<Task>> {
        self.rows(sql, params)?.first().map(task_of).transpose()
    }

    fn insert(&mut self, task: &NewTask) -> Result<Task> {
        let (sql, order) = positional_insert();
        let values = insert_values(task, &self.now);
        let values = order
            .iter()
            .map(|&index| bind_value(values[index]))
            .collect::<Result<Vec<Value>>>()?;
        self.call(sql, values, Mode::Write)?;
        Ok(task.inserted_row(self.now))
    }
}

impl KeyedConn for CallerConn<'_, '_> {
    fn run(&mut self, step: KeyedStep<'_>) -> Result<KeyedAnswer> {
        let now = self.now;
        Ok(match &step {
            KeyedStep::ReadKey(key) => {
                self.rows(SQL.lock_key, &[(":key", &key)])?;
                let pointer = self.rows(SQL.get_key, &[(":key", &key)])?;
                match pointer.first().and_then(|row| row.get("task_id")) {
                    Some(Value::String(id)) => {
                        KeyedAnswer::Row(self.task(SQL.get, &[(":id", id)])?)
                    }
                    _ => KeyedAnswer::Row(None),
                }
            }
            KeyedStep::Cancel(id) => {
                self.write(SQL.cancel, &[(":id", &id), (":now", &now)])?;
                KeyedAnswer::Done
            }
            KeyedStep::Insert(task) => KeyedAnswer::Row(Some(self.insert(task)?)),
            KeyedStep::PointKey { key, id } => {
                self.write(
                    SQL.upsert_key,
                    &[(":key", &key), (":task_id", &id), (":now", &now)],
                )?;
                KeyedAnswer::Done
            }
            KeyedStep::FollowupsInstalled => {
                KeyedAnswer::Flag(self.flag(FOLLOWUPS.installed, &[])?)
            }
            KeyedStep::Held(id) => KeyedAnswer::Flag(self.flag(FOLLOWUPS.held, &[(":id", &id)])?),
            KeyedStep::HasSteps(id) => KeyedAnswer::Flag(
                self.flag(STEPS.installed, &[])?
                    && self.flag(FOLLOWUPS.has_steps, &[(":id", &id)])?,
            ),
            KeyedStep::Debounce {
                id,
                payload,
                window,
                held,
            } => KeyedAnswer::Row(self.task(
                returning_row(SQL.debounce),
                &debounce_params(id, payload, window, held, &now),
            )?),
            KeyedStep::Postpone { id, window } => {
                self.write(FOLLOWUPS.postpone, &postpone_params(id, window, &now))?;
                KeyedAnswer::Done
            }
            KeyedStep::Hold {
                task_id,
                after_id,
                window,
            } => {
                // The first follow-up of the database creates the table, as
                // the store's writer does, inside this transaction.
                if !self.flag(FOLLOWUPS.installed, &[])?
                    && !self.flag(LEDGER_HAS, &[(":name", &LEDGER_NAME)])?
                {
                    self.script(FOLLOWUPS.migration.sql)?;
                    self.write(LEDGER_RECORD, &[(":name", &LEDGER_NAME), (":now", &now)])?;
                }
                self.write(
                    FOLLOWUPS.hold,
                    &hold_params(task_id, after_id, window, &now),
                )?;
                KeyedAnswer::Done
            }
        })
    }
}

/// `sql` with its named parameters as `?`, and their values in that order.
fn bound(sql: &str, params: &Params<'_>) -> Result<(String, Vec<Value>)> {
    let names: Vec<&str> = params.iter().map(|(name, _)| *name).collect();
    let (text, order) = positional(sql, &names);
    let values = order
        .iter()
        .map(|&index| bind_value(params[index].1))
        .collect::<Result<Vec<Value>>>()?;
    Ok((text, values))
}

/// A value as the drivers bind it: SQLite's booleans are the integers 0 and 1.
fn bind_value(value: &dyn rusqlite::types::ToSql) -> Result<Value> {
    let output = value.to_sql().map_err(|e| Error::Invalid(e.to_string()))?;
    let value = match output {
        ToSqlOutput::Borrowed(value) => value,
        ToSqlOutput::Owned(ref value) => value.into(),
        _ => return Err(Error::Invalid("a value SQLite cannot bind".into())),
    };
    Ok(match value {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => json!(i),
        ValueRef::Real(f) => json!(f),
        ValueRef::Text(text) => Value::String(String::from_utf8_lossy(text).into_owned()),
        ValueRef::Blob(_) => return Err(Error::Invalid("a task field is never a blob".into())),
    })
}

/// A task row as the caller's driver read it: one object, a key per column;
/// integers as numbers (a REAL another SDK stored is truncated, as the store
/// reads it), JSON columns as their text.
fn task_of(row: &Map<String, Value>) -> Result<Task> {
    let bad = |column: &str, found: &Value| {
        Error::Connection(format!(
            "your connection's task row has {found} in {column}"
        ))
    };
    let value = |column: &str| row.get(column).unwrap_or(&Value::Null);
    let opt_text = |column: &str| match value(column) {
        Value::Null => Ok(None),
        Value::String(text) => Ok(Some(text.clone())),
        other => Err(bad(column, other)),
    };
    let text = |column: &str| opt_text(column)?.ok_or_else(|| bad(column, &Value::Null));
    let opt_number = |column: &str| match value(column) {
        Value::Null => Ok(None),
        Value::Number(n) => Ok(n.as_f64()),
        other => Err(bad(column, other)),
    };
    let opt_int = |column: &str| opt_number(column).map(|n| n.map(|v| v as i64));
    let int = |column: &str| opt_int(column)?.ok_or_else(|| bad(column, &Value::Null));
    let status = text("status")?;
    Ok(Task {
        id: text("id")?,
        name: text("name")?,
        queue: text("queue")?,
        status: status
            .parse::<Status>()
            .map_err(|_| bad("status", &Value::String(status.clone())))?,
        payload: text("payload")?,
        result: opt_text("result")?,
        error: opt_text("error")?,
        metadata: text("metadata")?,
        progress: opt_number("progress")?,
        message: opt_text("message")?,
        attempt: int("attempt")?,
        max_attempts: int("max_attempts")?,
        priority: int("priority")?,
        worker_id: opt_text("worker_id")?,
        lease_until_ms: opt_int("lease_until_ms")?,
        run_at_ms: int("run_at_ms")?,
        cancel_requested_at_ms: opt_int("cancel_requested_at_ms")?,
        parent_id: opt_text("parent_id")?,
        root_id: opt_text("root_id")?,
        correlation_id: opt_text("correlation_id")?,
        created_at_ms: int("created_at_ms")?,
        updated_at_ms: int("updated_at_ms")?,
        completed_at_ms: opt_int("completed_at_ms")?,
    })
}

/// `insert_task.sql` with each named parameter replaced by `?`, and the
/// index in `INSERT_PARAMS` of each placeholder's value, in order: the one
/// statement of a plain `submitIn`, parsed once.
fn positional_insert() -> &'static (String, Vec<usize>) {
    static POSITIONAL: OnceLock<(String, Vec<usize>)> = OnceLock::new();
    POSITIONAL.get_or_init(|| positional(SQL.insert_task, &INSERT_PARAMS))
}

/// `sql` without its comment lines, each `:name` of `names` a `?`.
fn positional(sql: &str, names: &[&str]) -> (String, Vec<usize>) {
    let mut text = String::with_capacity(sql.len());
    let mut order = Vec::new();
    for line in sql.lines().filter(|l| !l.trim_start().starts_with("--")) {
        let mut rest = line;
        while let Some(at) = rest.find(':') {
            text.push_str(&rest[..at]);
            let tail = &rest[at..];
            let len = 1 + tail[1..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(tail.len() - 1);
            match names.iter().position(|name| *name == &tail[..len]) {
                Some(index) => {
                    text.push('?');
                    order.push(index);
                }
                None => text.push_str(&tail[..len]),
            }
            rest = &tail[len..];
        }
        text.push_str(rest);
        text.push('\n');
    }
    (text, order)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_placeholder_is_a_named_parameter_of_the_insert() {
        let (sql, order) = positional_insert();
        assert!(!sql.contains(':'), "{sql}");
        assert_eq!(sql.matches('?').count(), order.len());
        // `:now` stamps run_at_ms, created_at_ms and updated_at_ms.
        let now = INSERT_PARAMS.iter().position(|n| *n == ":now").unwrap();
        assert_eq!(order.iter().filter(|&&i| i == now).count(), 3);
        for (index, name) in INSERT_PARAMS.iter().enumerate() {
            assert!(order.contains(&index), "{name} unused");
        }
    }

    #[test]
    fn values_follow_their_placeholders_and_booleans_bind_as_integers() {
        let (sql, values) = bound(
            "-- :a and :b\nupdate t set a = :a, b = :b where c = :a",
            &[(":b", &true), (":a", &"x")],
        )
        .unwrap();
        assert_eq!(sql, "update t set a = ?, b = ? where c = ?\n");
        assert_eq!(values, [json!("x"), json!(1), json!("x")]);
    }
}
