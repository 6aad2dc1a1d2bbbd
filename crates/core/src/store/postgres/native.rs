//! The native transport: a tokio-postgres pool the store opens from a DSN
//! and owns, and the LISTEN connection beside it.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};

use async_trait::async_trait;
use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, QueueMode, RecyclingMethod};
use serde_json::Value;
use tokio_postgres::types::{to_sql_checked, FromSql, IsNull, ToSql, Type};
use tokio_postgres::Row;

use super::conn::{db_error, quoted_schema};
use super::dsn::Dsn;
use super::transport::{Param, PgRow, Session, Statement, Transaction, Transport, UNFLUSHED};
use crate::error::{Error, Result};

pub struct NativeTransport {
    pub dsn: Dsn,
    pub pool_size: usize,
    /// Every connection's only schema, created at open if absent.
    pub schema: Option<String>,
}

#[async_trait]
impl Transport for NativeTransport {
    type Row = Row;
    type Opened = Pool;
    type Conn = Object;
    type Tx = NativeTx;
    const READS_VERSION_BEFORE_MIGRATING: bool = true;

    fn target(&self) -> &str {
        self.dsn.target()
    }

    async fn open(&self) -> Result<Pool> {
        let mut config = self.dsn.config.clone();
        let quoted = self.schema.as_deref().map(quoted_schema).transpose()?;
        if let Some(quoted) = &quoted {
            // Set at startup, so every pooled connection resolves to it alone.
            let options = config.get_options().unwrap_or("").to_string();
            config.options(format!("{options} -c search_path={quoted}").trim_start());
        }
        let manager = Manager::from_config(
            config,
            self.dsn.tls.clone(),
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        // Most recently used first: a point write or read reuses the connection
        // whose server process just ran, instead of cycling through the pool
        // and waking the one idle longest (sequential cancels measured faster:
        // bench/RESULTS.md, 2026-12-04).
        let pool = Pool::builder(manager)
            .max_size(self.pool_size)
            .queue_mode(QueueMode::Lifo)
            .build()
            .map_err(|e| self.dsn.connection_error(e))?;
        if let Some(quoted) = quoted {
            let created = async {
                let client = self.conn(&pool).await?;
                Session::batch(&client, &format!("create schema if not exists {quoted}")).await
            }
            .await;
            if let Err(err) = created {
                pool.close();
                return Err(err);
            }
        }
        Ok(pool)
    }

    fn release(&self, pool: Pool) {
        pool.close();
    }

    async fn conn(&self, pool: &Pool) -> Result<Object> {
        pool.get().await.map_err(|e| self.dsn.pool_error(e))
    }

    async fn begin(&self, pool: &Pool) -> Result<NativeTx> {
        Ok(NativeTx {
            client: Some(self.conn(pool).await?),
            begun: AtomicBool::new(false),
        })
    }
}

#[async_trait]
impl Session for Object {
    type Row = Row;

    async fn query(&self, sql: &str, params: &[Param<'_>]) -> Result<Vec<Row>> {
        let statement = self.prepare_cached(sql).await.map_err(db_error)?;
        tokio_postgres::Client::query(self, &statement, &bound(params))
            .await
            .map_err(db_error)
    }

    async fn batch(&self, sql: &str) -> Result<()> {
        self.batch_execute(sql).await.map_err(db_error)
    }

    /// All prepared before any is sent: a prepare still in flight would let
    /// a later statement's execution reach the server first. Each execution
    /// is sent at its future's first poll, in the order joined.
    async fn query_all(&self, statements: &[Statement<'_, '_>]) -> Result<Vec<Vec<Row>>> {
        let mut prepared = Vec::with_capacity(statements.len());
        for (sql, params) in statements {
            let statement = self.prepare_cached(sql).await.map_err(db_error)?;
            prepared.push((statement, bound(params)));
        }
        futures_util::future::try_join_all(
            prepared
                .iter()
                .map(|(statement, values)| tokio_postgres::Client::query(self, statement, values)),
        )
        .await
        .map_err(db_error)
    }
}

/// A statement's values as tokio-postgres binds them.
fn bound<'a>(params: &'a [Param<'_>]) -> Vec<&'a (dyn ToSql + Sync)> {
    params.iter().map(|p| p as &(dyn ToSql + Sync)).collect()
}

/// A transaction on one pooled connection, begun and ended by statements so
/// it can own its connection. Its `begin` is sent with its first statement,
/// in the same round trip; one that ran none ends without a round trip.
/// Dropped unfinished (a caller gave up), the connection leaves the pool and
/// closes: the server rolls it back.
pub struct NativeTx {
    client: Option<Object>,
    begun: AtomicBool,
}

impl NativeTx {
    fn client(&self) -> &Object {
        self.client.as_ref().expect("an unfinished transaction")
    }

    /// `work`, the transaction's `begin` sent just before it on a first use.
    async fn in_tx<R>(&self, work: impl Future<Output = Result<R>>) -> Result<R> {
        if self.begun.swap(true, Ordering::SeqCst) {
            return work.await;
        }
        // `begin` is polled first, so it reaches the server first; it fails
        // only with its connection, which fails `work` too.
        let (began, done) = futures_util::join!(self.client().batch_execute("begin"), work);
        began.map_err(db_error)?;
        done
    }

    async fn end(mut self, sql: &str) -> Result<()> {
        let client = self.client.take().expect("an unfinished transaction");
        if !self.begun.load(Ordering::SeqCst) {
            return Ok(());
        }
        match client.batch_execute(sql).await {
            Ok(()) => Ok(()),
            Err(e) => {
                drop(Object::take(client));
                Err(db_error(e))
            }
        }
    }
}

impl Drop for NativeTx {
    fn drop(&mut self) {
        if let Some(client) = self.client.take() {
            drop(Object::take(client));
        }
    }
}

#[async_trait]
impl Session for NativeTx {
    type Row = Row;

    async fn query(&self, sql: &str, params: &[Param<'_>]) -> Result<Vec<Row>> {
        self.in_tx(self.client().query(sql, params)).await
    }

    async fn batch(&self, sql: &str) -> Result<()> {
        self.in_tx(Session::batch(self.client(), sql)).await
    }

    async fn query_all(&self, statements: &[Statement<'_, '_>]) -> Result<Vec<Vec<Row>>> {
        self.in_tx(self.client().query_all(statements)).await
    }
}

#[async_trait]
impl Transaction for NativeTx {
    fn handle(&self) -> Option<u64> {
        None
    }

    async fn query_objects(&self, sql: &str, values: &str) -> Result<String> {
        let values: Vec<Value> = serde_json::from_str(values)
            .map_err(|e| Error::Invalid(format!("query values must be a JSON array: {e}")))?;
        let client = self.client();
        let found = self
            .in_tx(async {
                let statement = client.prepare(sql).await.map_err(db_error)?;
                let loose: Vec<Loose> = values.into_iter().map(Loose).collect();
                let bound: Vec<&(dyn ToSql + Sync)> =
                    loose.iter().map(|v| v as &(dyn ToSql + Sync)).collect();
                tokio_postgres::Client::query(client, &statement, &bound)
                    .await
                    .map_err(db_error)
            })
            .await?;
        let objects: Vec<Value> = found.iter().map(row_object).collect::<Result<_>>()?;
        Ok(Value::Array(objects).to_string())
    }

    async fn commit(self) -> Result<()> {
        self.end("commit").await
    }

    /// The setting and the commit in one round trip.
    async fn commit_unflushed(self) -> Result<()> {
        self.end(&format!("{UNFLUSHED}; commit")).await
    }

    async fn rollback(self) -> Result<()> {
        self.end("rollback").await
    }
}

/// A `json`/`jsonb` column as its JSON text.
struct JsonText(String);

impl<'a> FromSql<'a> for JsonText {
    fn from_sql(
        ty: &Type,
        raw: &'a [u8],
    ) -> std::result::Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        // jsonb's binary form is a format version byte followed by the text.
        let text = if *ty == Type::JSONB {
            match raw.split_first() {
                Some((1, text)) => text,
                _ => return Err("unsupported jsonb binary format".into()),
            }
        } else {
            raw
        };
        Ok(JsonText(std::str::from_utf8(text)?.to_owned()))
    }

    fn accepts(ty: &Type) -> bool {
        *ty == Type::JSONB || *ty == Type::JSON
    }
}

/// Any integer column widened to i64, so `integer` and `bigint` read alike.
struct Int(i64);

impl<'a> FromSql<'a> for Int {
    fn from_sql(
        ty: &Type,
        raw: &'a [u8],
    ) -> std::result::Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        Ok(Int(match *ty {
            Type::INT2 => i16::from_sql(ty, raw)?.into(),
            Type::INT4 => i32::from_sql(ty, raw)?.into(),
            _ => i64::from_sql(ty, raw)?,
        }))
    }

    fn accepts(ty: &Type) -> bool {
        matches!(*ty, Type::INT2 | Type::INT4 | Type::INT8)
    }
}

fn column<'a, T: FromSql<'a>>(row: &'a Row, index: usize) -> Result<T> {
    row.try_get(index).map_err(db_error)
}

impl PgRow for Row {
    fn column_name(&self, index: usize) -> Option<&str> {
        self.columns().get(index).map(|c| c.name())
    }
    fn text(&self, index: usize) -> Result<String> {
        column(self, index)
    }
    fn opt_text(&self, index: usize) -> Result<Option<String>> {
        column(self, index)
    }
    fn int(&self, index: usize) -> Result<i64> {
        column::<Int>(self, index).map(|v| v.0)
    }
    fn opt_int(&self, index: usize) -> Result<Option<i64>> {
        column::<Option<Int>>(self, index).map(|v| v.map(|v| v.0))
    }
    fn opt_float(&self, index: usize) -> Result<Option<f64>> {
        column(self, index)
    }
    fn bool(&self, index: usize) -> Result<bool> {
        column(self, index)
    }
    fn opt_json(&self, index: usize) -> Result<Option<String>> {
        column::<Option<JsonText>>(self, index).map(|v| v.map(|v| v.0))
    }
}

/// A caller's JSON value bound by the type the server inferred for its
/// parameter, as node-postgres's text parameters are.
#[derive(Debug)]
struct Loose(Value);

impl ToSql for Loose {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut bytes::BytesMut,
    ) -> std::result::Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        let value = &self.0;
        if value.is_null() {
            return Ok(IsNull::Yes);
        }
        let text = match value {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let wrong = || format!("cannot bind {value} as {ty}");
        match *ty {
            Type::BOOL => value.as_bool().ok_or_else(wrong)?.to_sql(ty, out),
            Type::INT2 => text.parse::<i16>().map_err(|_| wrong())?.to_sql(ty, out),
            Type::INT4 => text.parse::<i32>().map_err(|_| wrong())?.to_sql(ty, out),
            Type::INT8 => text.parse::<i64>().map_err(|_| wrong())?.to_sql(ty, out),
            Type::FLOAT4 => text.parse::<f32>().map_err(|_| wrong())?.to_sql(ty, out),
            Type::FLOAT8 => text.parse::<f64>().map_err(|_| wrong())?.to_sql(ty, out),
            Type::JSONB => {
                // jsonb's binary form: a format version byte, then the text.
                out.extend_from_slice(&[1]);
                out.extend_from_slice(text.as_bytes());
                Ok(IsNull::No)
            }
            Type::JSON | Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN => {
                out.extend_from_slice(text.as_bytes());
                Ok(IsNull::No)
            }
            _ => Err(
                format!("cannot bind {value} as {ty}: cast the parameter (e.g. $1::text)").into(),
            ),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

/// A caller's row as an object, column names to JSON values; int8 and
/// numeric as JS numbers would lose them, so they come as numbers only when exact.
fn row_object(row: &Row) -> Result<Value> {
    let mut object = serde_json::Map::new();
    for (i, col) in row.columns().iter().enumerate() {
        let value = match *col.type_() {
            Type::BOOL => column::<Option<bool>>(row, i)?.map(Value::from),
            Type::INT2 | Type::INT4 | Type::INT8 => row.opt_int(i)?.map(Value::from),
            Type::FLOAT4 => column::<Option<f32>>(row, i)?.map(Value::from),
            Type::FLOAT8 => column::<Option<f64>>(row, i)?.map(Value::from),
            Type::JSON | Type::JSONB => row
                .opt_json(i)?
                .map(|text| serde_json::from_str(&text).unwrap_or(Value::String(text))),
            _ => column::<Option<String>>(row, i)
                .map_err(|_| {
                    Error::Invalid(format!(
                        "column {} has type {}, which a session query cannot read; cast it to text",
                        col.name(),
                        col.type_()
                    ))
                })?
                .map(Value::from),
        };
        object.insert(col.name().to_string(), value.unwrap_or(Value::Null));
    }
    Ok(Value::Object(object))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::postgres::transport::params;

    /// A transport of one pooled connection to the test server, opened;
    /// `None` when CAIRNQ_TEST_PG_DSN is not set.
    async fn one_connection() -> Option<(NativeTransport, Pool)> {
        let dsn = std::env::var("CAIRNQ_TEST_PG_DSN").ok()?;
        let transport = NativeTransport {
            dsn: Dsn::parse(&dsn).unwrap(),
            pool_size: 1,
            schema: None,
        };
        let pool = transport.open().await.unwrap();
        Some((transport, pool))
    }

    /// `query_all` runs its statements in order in the transaction, each
    /// seeing what the one before did, on a first use (none prepared on the
    /// connection yet) and on a second (all prepared).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn pipelined_statements_run_in_order_in_their_transaction() {
        let Some((transport, pool)) = one_connection().await else {
            return;
        };
        for round in ["first", "second"] {
            let tx = transport.begin(&pool).await.unwrap();
            let seen = tx
                .query_all(&[
                    (
                        "select set_config('cairnq.pair', $1::text, true)",
                        &params![&round],
                    ),
                    (
                        "select set_config('cairnq.pair', current_setting('cairnq.pair') || '+', true)",
                        &params![],
                    ),
                    ("select current_setting('cairnq.pair', true)", &params![]),
                ])
                .await
                .unwrap();
            let expected = format!("{round}+");
            assert_eq!(seen[2][0].opt_text(0).unwrap(), Some(expected));
            tx.rollback().await.unwrap();
        }
        transport.release(pool);
    }

    /// The `begin` a transaction sends with its first statement precedes
    /// it: a rollback undoes that statement. One that ran nothing commits.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_transactions_first_statement_is_inside_it() {
        let Some((transport, pool)) = one_connection().await else {
            return;
        };
        let table = format!("cairnq_first_{}", std::process::id());
        let conn = transport.conn(&pool).await.unwrap();
        conn.batch(&format!("create table {table} (n int)"))
            .await
            .unwrap();
        drop(conn);
        let insert = format!("insert into {table} values (1)");
        let tx = transport.begin(&pool).await.unwrap();
        tx.query(&insert, &[]).await.unwrap();
        tx.rollback().await.unwrap();
        let tx = transport.begin(&pool).await.unwrap();
        tx.batch(&insert).await.unwrap();
        tx.rollback().await.unwrap();
        transport
            .begin(&pool)
            .await
            .unwrap()
            .commit()
            .await
            .unwrap();
        let conn = transport.conn(&pool).await.unwrap();
        let count = format!("select count(*) from {table}");
        assert_eq!(conn.query(&count, &[]).await.unwrap()[0].int(0).unwrap(), 0);
        conn.batch(&format!("drop table {table}")).await.unwrap();
        drop(conn);
        transport.release(pool);
    }

    /// `commit_unflushed` commits (the row is there) and turns the flush
    /// wait off inside its transaction only: the pooled connection's own
    /// setting is as it was for the next transaction.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_unflushed_commit_changes_its_transaction_only() {
        let Some((transport, pool)) = one_connection().await else {
            return;
        };
        let setting = "select current_setting('synchronous_commit')";
        // The session's own setting (the test server's default is off).
        let conn = transport.conn(&pool).await.unwrap();
        conn.batch("set synchronous_commit to on").await.unwrap();
        drop(conn);
        let table = format!("cairnq_unflushed_{}", std::process::id());
        let tx = transport.begin(&pool).await.unwrap();
        tx.batch(&format!(
            "create table {table} (n int); insert into {table} values (1)"
        ))
        .await
        .unwrap();
        tx.commit_unflushed().await.unwrap();
        let conn = transport.conn(&pool).await.unwrap();
        assert_eq!(
            conn.query(setting, &[]).await.unwrap()[0].text(0).unwrap(),
            "on"
        );
        let count = format!("select count(*) from {table}");
        assert_eq!(conn.query(&count, &[]).await.unwrap()[0].int(0).unwrap(), 1);
        conn.batch(&format!("drop table {table}")).await.unwrap();
        drop(conn);
        transport.release(pool);
    }
}
