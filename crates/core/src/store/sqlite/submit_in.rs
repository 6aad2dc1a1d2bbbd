//! `submitIn` on SQLite: the application's own connection (better-sqlite3,
//! `node:sqlite`, `bun:sqlite`) writes the rows inside its transaction, so
//! the core hands it the statement the store itself runs (`insert_task.sql`,
//! bound as `writes::insert_values` binds it) with `?` placeholders, which
//! every driver binds from a list of values.

use std::sync::OnceLock;

use rusqlite::types::{ToSqlOutput, ValueRef};
use serde_json::{json, Value};

use super::writes::{insert_values, INSERT_PARAMS};
use crate::error::{Error, Result};
use crate::protocol::SQLITE as SQL;
use crate::store::backend::WriteOp;
use crate::store::inputs::item_error;

/// The caller's writes as JSON: `{"sql": …, "ids": [task ids], "params":
/// [[values of one task]…]}`, one run of `sql` per task, in order. `items`:
/// the ops are `submitManyIn`'s, and a refusal names the item. `now`: the
/// store clock's time.
pub fn submit_in_statements(ops: Vec<WriteOp>, items: bool, now: i64) -> Result<String> {
    let (sql, order) = positional_insert();
    let mut ids = Vec::with_capacity(ops.len());
    let mut params = Vec::with_capacity(ops.len());
    for (index, op) in ops.iter().enumerate() {
        let WriteOp::Insert(task) = op else {
            // A keyed submit decides on the key's current task, which needs
            // the core's reads inside the caller's transaction.
            let refused = Error::Invalid(
                "key cannot be used in a submit inside your transaction on SQLite (submitIn): submit it with submit()".into(),
            );
            return Err(if items {
                item_error(index, refused)
            } else {
                refused
            });
        };
        let values = insert_values(task, &now);
        let row = order
            .iter()
            .map(|&index| {
                json_value(
                    values[index]
                        .to_sql()
                        .map_err(|e| Error::Invalid(e.to_string()))?,
                )
            })
            .collect::<Result<Vec<Value>>>()?;
        ids.push(task.id.as_str());
        params.push(row);
    }
    Ok(json!({"sql": sql, "ids": ids, "params": params}).to_string())
}

fn json_value(output: ToSqlOutput<'_>) -> Result<Value> {
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

/// `insert_task.sql` with each named parameter replaced by `?`, and the
/// index in `INSERT_PARAMS` of each placeholder's value, in order.
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
}
