//! The seam under the Postgres backend: how its statements reach a server.
//! The backend's statements and decisions are written once against
//! `Transport` and `Session`; the native pool (`native.rs`) and an
//! application's executor (`executor.rs`) differ only in the carrying.

use async_trait::async_trait;
use serde::ser::{Serialize, SerializeSeq, Serializer};
use tokio_postgres::types::{to_sql_checked, IsNull, ToSql, Type};

use crate::error::Result;

/// One bound value of a protocol statement.
#[derive(Clone, Copy, Debug)]
pub enum Param<'a> {
    Null,
    Text(&'a str),
    Int(i64),
    Float(f64),
    Bool(bool),
    Texts(&'a [String]),
    OptTexts(&'a [Option<String>]),
}

impl<'a> From<&'a String> for Param<'a> {
    fn from(v: &'a String) -> Self {
        Param::Text(v)
    }
}
impl<'a> From<&&'a str> for Param<'a> {
    fn from(v: &&'a str) -> Self {
        Param::Text(v)
    }
}
impl<'a> From<&'a i64> for Param<'a> {
    fn from(v: &'a i64) -> Self {
        Param::Int(*v)
    }
}
impl<'a> From<&'a bool> for Param<'a> {
    fn from(v: &'a bool) -> Self {
        Param::Bool(*v)
    }
}
impl<'a> From<&'a Vec<String>> for Param<'a> {
    fn from(v: &'a Vec<String>) -> Self {
        Param::Texts(v)
    }
}
impl<'a> From<&'a Vec<Option<String>>> for Param<'a> {
    fn from(v: &'a Vec<Option<String>>) -> Self {
        Param::OptTexts(v)
    }
}
macro_rules! optional {
    ($($t:ty),*) => {$(
        impl<'a> From<&'a Option<$t>> for Param<'a> {
            fn from(v: &'a Option<$t>) -> Self {
                v.as_ref().map_or(Param::Null, Param::from)
            }
        }
    )*};
}
optional!(String, i64, f64, bool, Vec<String>);
impl<'a> From<&'a Option<&'a str>> for Param<'a> {
    fn from(v: &'a Option<&'a str>) -> Self {
        v.map_or(Param::Null, Param::Text)
    }
}
impl<'a> From<&'a f64> for Param<'a> {
    fn from(v: &'a f64) -> Self {
        Param::Float(*v)
    }
}

/// `params![a, b]`: a statement's bound values, each converted with `Param::from`.
macro_rules! params {
    ($($value:expr),* $(,)?) => {
        [$($crate::store::postgres::transport::Param::from($value)),*]
    };
}
pub(crate) use params;

impl ToSql for Param<'_> {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut bytes::BytesMut,
    ) -> std::result::Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match self {
            Param::Null => Ok(IsNull::Yes),
            Param::Text(v) => v.to_sql_checked(ty, out),
            Param::Int(v) => v.to_sql_checked(ty, out),
            Param::Float(v) => v.to_sql_checked(ty, out),
            Param::Bool(v) => v.to_sql_checked(ty, out),
            Param::Texts(v) => v.to_sql_checked(ty, out),
            Param::OptTexts(v) => v.to_sql_checked(ty, out),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

/// Values cross to an executor as JSON: arrays as arrays, as node-postgres binds them.
impl Serialize for Param<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            Param::Null => s.serialize_none(),
            Param::Text(v) => s.serialize_str(v),
            Param::Int(v) => s.serialize_i64(*v),
            Param::Float(v) => s.serialize_f64(*v),
            Param::Bool(v) => s.serialize_bool(*v),
            Param::Texts(v) => {
                let mut seq = s.serialize_seq(Some(v.len()))?;
                for item in v.iter() {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Param::OptTexts(v) => {
                let mut seq = s.serialize_seq(Some(v.len()))?;
                for item in v.iter() {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
        }
    }
}

/// A result row read by column position, whatever carried it. Statements
/// that name their columns are read by position; full task rows (`*`) by
/// name, through positions resolved once per result (`conn::TaskColumns`).
pub trait PgRow: Send + Sync {
    /// The name of the column at `index`, `None` past the last.
    fn column_name(&self, index: usize) -> Option<&str>;
    fn text(&self, index: usize) -> Result<String>;
    fn opt_text(&self, index: usize) -> Result<Option<String>>;
    /// Any integer column (`integer`, `bigint`) widened to i64.
    fn int(&self, index: usize) -> Result<i64>;
    fn opt_int(&self, index: usize) -> Result<Option<i64>>;
    fn opt_float(&self, index: usize) -> Result<Option<f64>>;
    fn bool(&self, index: usize) -> Result<bool>;
    /// A `json`/`jsonb` column as its JSON text: the core never looks inside.
    fn opt_json(&self, index: usize) -> Result<Option<String>>;
}

/// Where statements run: a pooled connection or an open transaction.
#[async_trait]
pub trait Session: Send + Sync {
    type Row: PgRow;
    /// One parameterized statement (`$1…$n`).
    async fn query(&self, sql: &str, params: &[Param<'_>]) -> Result<Vec<Self::Row>>;
    /// Parameterless SQL, possibly several statements (migrations, locks).
    async fn batch(&self, sql: &str) -> Result<()>;
    /// Statements in order, each a later statement than the one before (its
    /// snapshot taken after that one ended), sent together where the
    /// transport can pipeline them: one round trip instead of one each.
    /// Answers each statement's rows, in order.
    async fn query_all(&self, statements: &[Statement<'_, '_>]) -> Result<Vec<Vec<Self::Row>>> {
        let mut answers = Vec::with_capacity(statements.len());
        for (sql, params) in statements {
            answers.push(self.query(sql, params).await?);
        }
        Ok(answers)
    }
}

/// A statement and its bound values, one of `Session::query_all`'s.
pub type Statement<'s, 'p> = (&'s str, &'s [Param<'p>]);

/// A transaction: statements run in it until `commit` or `rollback`.
#[async_trait]
pub trait Transaction: Session + Sized {
    /// The executor's id of this transaction, when an executor holds it.
    fn handle(&self) -> Option<u64>;
    /// A caller's statement (`completeIn` on a DSN store): `values` is a
    /// JSON array bound by the server's parameter types, the answer a JSON
    /// array of row objects.
    async fn query_objects(&self, sql: &str, values: &str) -> Result<String>;
    async fn commit(self) -> Result<()>;
    /// Commit without waiting for the server to flush the commit to its WAL
    /// (`synchronous_commit` off for this transaction only): for writes that
    /// lose no task if a server crash undoes them, such as a claim (the task
    /// is queued again). Any later flushed commit flushes this one first.
    async fn commit_unflushed(self) -> Result<()> {
        self.batch(UNFLUSHED).await?;
        self.commit().await
    }
    async fn rollback(self) -> Result<()>;
}

/// What makes a transaction's commit skip the wait for its WAL flush.
pub const UNFLUSHED: &str = "set local synchronous_commit to off";

/// How a Postgres backend reaches its server.
#[async_trait]
pub trait Transport: Send + Sync + 'static {
    type Row: PgRow;
    /// What a successful open publishes (the native pool; nothing for an executor).
    type Opened: Clone + Send + Sync + 'static;
    type Conn: Session<Row = Self::Row>;
    type Tx: Transaction<Row = Self::Row>;
    /// The password-free name of the server, for messages.
    fn target(&self) -> &str;
    async fn open(&self) -> Result<Self::Opened>;
    /// Undo `open` (a failed connect or `close`): an owned pool closes; an
    /// application's executor is never closed.
    fn release(&self, opened: Self::Opened);
    async fn conn(&self, opened: &Self::Opened) -> Result<Self::Conn>;
    async fn begin(&self, opened: &Self::Opened) -> Result<Self::Tx>;
    /// Whether connect reads the stored protocol version before migrating
    /// too, so that a database of another protocol is refused untouched. An
    /// application's executor is asked exactly the protocol's connect
    /// sequence (docs/protocol.md, "Connection setup (Postgres)").
    const READS_VERSION_BEFORE_MIGRATING: bool;
}

/// End a transaction by its body's outcome: commit what it returned, roll
/// back what it refused.
pub async fn end_tx<X: Transaction, R>(tx: X, outcome: Result<R>) -> Result<R> {
    match outcome {
        Ok(value) => {
            tx.commit().await?;
            Ok(value)
        }
        Err(err) => {
            // The refusal is the error to report; a failed rollback ends the
            // session anyway (the server rolls back a dropped connection).
            let _ = tx.rollback().await;
            Err(err)
        }
    }
}

/// Serialize a statement's values as one JSON array.
pub fn params_json(params: &[Param<'_>]) -> String {
    serde_json::to_string(params).expect("statement values serialize")
}
