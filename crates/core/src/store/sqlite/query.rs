//! Running a statement: binding named parameters and reading rows, task
//! rows as any SDK may have stored them.

use rusqlite::types::ToSql;
use rusqlite::{Connection, Row, Statement};

use super::conn::sqlite_error;
use crate::error::Result;
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
struct Int(i64);

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
