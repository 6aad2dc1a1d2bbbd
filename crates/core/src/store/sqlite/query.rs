//! Running a statement: binding named parameters and reading rows, task
//! rows as any SDK may have stored them.

use rusqlite::types::ToSql;
use rusqlite::{Connection, Row, Statement};

use super::conn::sqlite_error;
use crate::error::Result;
use crate::store::bad_rows::BadRow;
use crate::task::{Status, Task};

/// Named parameters a statement may use. Only those the statement actually
/// contains are bound, so callers pass one set per operation.
pub type Params<'a> = [(&'a str, &'a dyn ToSql)];

pub fn prepare<'c>(
    conn: &'c Connection,
    sql: &str,
    params: &Params<'_>,
) -> Result<rusqlite::CachedStatement<'c>> {
    let mut stmt = conn.prepare_cached(sql).map_err(sqlite_error)?;
    bind(&mut stmt, params)?;
    Ok(stmt)
}

fn bind(stmt: &mut Statement<'_>, params: &Params<'_>) -> Result<()> {
    for (name, value) in params {
        if let Some(index) = stmt.parameter_index(name).map_err(sqlite_error)? {
            stmt.raw_bind_parameter(index, value)
                .map_err(sqlite_error)?;
        }
    }
    Ok(())
}

/// A statement run once per item of a loop: prepared, and its named
/// parameters' places looked up, once (a lookup converts the name to a C
/// string and scans the statement's parameters).
pub struct Repeated<'c> {
    stmt: rusqlite::CachedStatement<'c>,
    places: Vec<Option<usize>>,
}

impl<'c> Repeated<'c> {
    /// `sql` with the parameters `names` (those it does not contain are skipped).
    pub fn new(conn: &'c Connection, sql: &str, names: &[&str]) -> Result<Repeated<'c>> {
        let stmt = conn.prepare_cached(sql).map_err(sqlite_error)?;
        let places = names
            .iter()
            .map(|name| stmt.parameter_index(name))
            .collect::<rusqlite::Result<_>>()
            .map_err(sqlite_error)?;
        Ok(Repeated { stmt, places })
    }

    /// Runs the statement once, `values` in the order of `new`'s names.
    pub fn run(&mut self, values: &[&dyn ToSql]) -> Result<()> {
        for (place, value) in self.places.iter().zip(values) {
            if let Some(index) = *place {
                self.stmt
                    .raw_bind_parameter(index, value)
                    .map_err(sqlite_error)?;
            }
        }
        self.stmt.raw_execute().map_err(sqlite_error)?;
        Ok(())
    }
}

/// A transaction-control statement (`BEGIN`, `SAVEPOINT` …), prepared once
/// per connection.
pub fn transaction_control(conn: &Connection, sql: &str) -> rusqlite::Result<()> {
    conn.prepare_cached(sql)?.execute([]).map(|_| ())
}

/// Run a statement that returns no rows; the number of rows it changed.
pub fn execute(conn: &Connection, sql: &str, params: &Params<'_>) -> Result<usize> {
    prepare(conn, sql, params)?
        .raw_execute()
        .map_err(sqlite_error)
}

/// Run a statement and map every returned row.
pub fn query<T>(
    conn: &Connection,
    sql: &str,
    params: &Params<'_>,
    mut map: impl FnMut(&Row<'_>) -> rusqlite::Result<T>,
) -> Result<Vec<T>> {
    let mut stmt = prepare(conn, sql, params)?;
    let mut rows = stmt.raw_query();
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(sqlite_error)? {
        out.push(map(row).map_err(sqlite_error)?);
    }
    Ok(out)
}

pub fn query_tasks(conn: &Connection, sql: &str, params: &Params<'_>) -> Result<Vec<Task>> {
    query(conn, sql, params, task_from_row)
}

pub fn query_task(conn: &Connection, sql: &str, params: &Params<'_>) -> Result<Option<Task>> {
    Ok(query_tasks(conn, sql, params)?.into_iter().next())
}

/// An integer column as any SDK may have stored it. SQLite keeps whatever a
/// writer computed: a time past the 64-bit range, or one computed in floating
/// point by another SDK, is stored as a REAL. It is read truncated and
/// saturated, so one such row cannot fail every query that reads it.
pub struct Int(pub i64);

impl rusqlite::types::FromSql for Int {
    fn column_result(value: rusqlite::types::ValueRef<'_>) -> rusqlite::types::FromSqlResult<Self> {
        match value {
            rusqlite::types::ValueRef::Real(v) => Ok(Int(v as i64)),
            other => i64::column_result(other).map(Int),
        }
    }
}

fn int(row: &Row<'_>, index: usize) -> rusqlite::Result<i64> {
    Ok(row.get::<_, Int>(index)?.0)
}

fn optional_int(row: &Row<'_>, index: usize) -> rusqlite::Result<Option<i64>> {
    Ok(row.get::<_, Option<Int>>(index)?.map(|v| v.0))
}

pub fn task_from_row(row: &Row<'_>) -> rusqlite::Result<Task> {
    let status: String = row.get(3)?;
    let status = status.parse::<Status>().map_err(|_| {
        rusqlite::Error::FromSqlConversionFailure(
            3,
            rusqlite::types::Type::Text,
            format!("unknown status {status}").into(),
        )
    })?;
    Ok(Task {
        id: row.get(0)?,
        name: row.get(1)?,
        queue: row.get(2)?,
        status,
        payload: row.get(4)?,
        result: row.get(5)?,
        error: row.get(6)?,
        metadata: row.get(7)?,
        progress: row.get(8)?,
        message: row.get(9)?,
        attempt: int(row, 10)?,
        max_attempts: int(row, 11)?,
        priority: int(row, 12)?,
        worker_id: row.get(13)?,
        lease_until_ms: optional_int(row, 14)?,
        run_at_ms: int(row, 15)?,
        cancel_requested_at_ms: optional_int(row, 16)?,
        parent_id: row.get(17)?,
        root_id: row.get(18)?,
        correlation_id: row.get(19)?,
        created_at_ms: int(row, 20)?,
        updated_at_ms: int(row, 21)?,
        completed_at_ms: optional_int(row, 22)?,
    })
}

/// The cells of one row of this SDK's own tables, read as the task table's
/// are (a REAL integer truncated); a cell holding anything else makes the row
/// a `BadRow` naming its table, key and column.
pub struct Cells<'r, 's> {
    row: &'r Row<'s>,
    table: &'static str,
    key: String,
}

impl<'r, 's> Cells<'r, 's> {
    /// The row's cells, the row known by `key` (see `key_at`).
    pub fn new(row: &'r Row<'s>, table: &'static str, key: String) -> Cells<'r, 's> {
        Cells { row, table, key }
    }

    pub fn get<T: rusqlite::types::FromSql>(
        &self,
        index: usize,
        column: &'static str,
    ) -> std::result::Result<T, BadRow> {
        self.row
            .get(index)
            .map_err(|err| self.bad(index, column, err))
    }

    pub fn int(&self, index: usize, column: &'static str) -> std::result::Result<i64, BadRow> {
        self.get::<Int>(index, column).map(|v| v.0)
    }

    pub fn opt_int(
        &self,
        index: usize,
        column: &'static str,
    ) -> std::result::Result<Option<i64>, BadRow> {
        Ok(self.get::<Option<Int>>(index, column)?.map(|v| v.0))
    }

    /// The row is bad at `column` for `why`.
    pub fn bad_at(&self, column: &'static str, why: String) -> BadRow {
        BadRow {
            table: self.table,
            key: self.key.clone(),
            column,
            why,
        }
    }

    fn bad(&self, index: usize, column: &'static str, err: rusqlite::Error) -> BadRow {
        let why = match self.row.get_ref(index) {
            Ok(value) => format!("holds {}", held(value)),
            Err(_) => err.to_string(),
        };
        self.bad_at(column, why)
    }
}

/// The text of a key column as a report names its row (or what it holds).
pub fn key_at(row: &Row<'_>, index: usize) -> String {
    match row.get_ref(index) {
        Ok(rusqlite::types::ValueRef::Text(text)) => String::from_utf8_lossy(text).into(),
        Ok(other) => held(other),
        Err(err) => err.to_string(),
    }
}

/// A stored value as a report names it (long texts cut).
fn held(value: rusqlite::types::ValueRef<'_>) -> String {
    use rusqlite::types::ValueRef;
    match value {
        ValueRef::Null => "NULL".into(),
        ValueRef::Integer(v) => format!("INTEGER {v}"),
        ValueRef::Real(v) => format!("REAL {v}"),
        ValueRef::Text(text) => {
            let text = String::from_utf8_lossy(text);
            let cut: String = text.chars().take(40).collect();
            let more = if cut.len() < text.len() { "…" } else { "" };
            format!("TEXT {cut:?}{more}")
        }
        ValueRef::Blob(bytes) => format!("a BLOB of {} bytes", bytes.len()),
    }
}

/// A dialect-neutral transaction decision (a flow draw, a suspension, a
/// signal) run on the writer's connection: SQLite's statements never wait,
/// so the core's future of it is ready at its first poll.
pub(super) fn at_once<T>(steps: impl std::future::Future<Output = Result<T>>) -> Result<T> {
    futures_util::FutureExt::now_or_never(steps).expect("SQLite's statements never wait")
}
