//! The executor transport: every statement, transaction and LISTEN of the
//! Postgres backend runs through an application-owned executor (the JS
//! `PgExecutor`), reached by JSON requests. The backend's statements and
//! decisions are the native ones; only the carrying differs.
//!
//! Requests: `{"op":"query","tx":id|null,"sql":…,"params":[…]}` (answer:
//! `{"columns":[names…],"rows":[[values in that order]…]}`), `{"op":"exec","tx":…,
//! "sql":…}`, `{"op":"begin"}` (answer: a transaction id), `{"op":"end",
//! "tx":id,"commit":bool}`, `{"op":"listen"}` (answer: whether push is on),
//! `{"op":"unlisten"}`. Answers are `{"ok":value}` or `{"error":{"code":
//! SQLSTATE|null,"message":…,"unavailable":bool}}`.

use std::sync::Arc;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{json, Value};

use super::transport::{params_json, Param, PgRow, Session, Transaction, Transport};
use crate::error::{Error, Result};

/// The application's executor, as the binding reaches it.
#[async_trait]
pub trait Executor: Send + Sync + 'static {
    /// Send one request; resolves to the answer's JSON text.
    async fn call(&self, request: String) -> Result<String>;
}

#[derive(Deserialize)]
struct Refusal {
    code: Option<String>,
    message: String,
    #[serde(default)]
    unavailable: bool,
}

#[derive(Deserialize)]
#[serde(rename_all = "lowercase")]
enum Answer {
    Ok(Value),
    Error(Refusal),
}

/// How an executor refused: with the server's SQLSTATE a database error,
/// otherwise the connection's.
pub enum Refused {
    Unavailable(String),
    Other(Error),
}

impl From<Refused> for Error {
    fn from(r: Refused) -> Error {
        match r {
            Refused::Unavailable(message) => Error::Connection(message),
            Refused::Other(err) => err,
        }
    }
}

/// One request and its decoded answer.
pub async fn request(
    executor: &dyn Executor,
    request: Value,
) -> std::result::Result<Value, Refused> {
    let text = executor
        .call(request.to_string())
        .await
        .map_err(Refused::Other)?;
    let answer: Answer = serde_json::from_str(&text).map_err(|e| {
        Refused::Other(Error::Connection(format!(
            "the executor's answer is malformed: {e}"
        )))
    })?;
    match answer {
        Answer::Ok(value) => Ok(value),
        Answer::Error(refusal) if refusal.unavailable => Err(Refused::Unavailable(refusal.message)),
        Answer::Error(Refusal {
            code: Some(code),
            message,
            ..
        }) => Err(Refused::Other(Error::Database { code, message })),
        Answer::Error(Refusal { message, .. }) => Err(Refused::Other(Error::Connection(message))),
    }
}

async fn run(executor: &dyn Executor, body: Value) -> Result<Value> {
    request(executor, body).await.map_err(Error::from)
}

pub struct ExecutorTransport {
    executor: Arc<dyn Executor>,
}

impl ExecutorTransport {
    pub fn new(executor: Arc<dyn Executor>) -> ExecutorTransport {
        ExecutorTransport { executor }
    }

    pub fn executor(&self) -> &Arc<dyn Executor> {
        &self.executor
    }
}

/// Statements outside a transaction (`tx` = None) or inside one.
pub struct ExecutorSession {
    executor: Arc<dyn Executor>,
    tx: Option<u64>,
}

impl ExecutorSession {
    /// Statements on a session the caller holds (`submitIn`): its requests
    /// name no transaction of the store's.
    pub(super) fn caller(executor: Arc<dyn Executor>) -> ExecutorSession {
        ExecutorSession { executor, tx: None }
    }

    async fn query_rows(&self, sql: &str, params: &[Param<'_>]) -> Result<Vec<JsonRow>> {
        let params: Value = serde_json::from_str(&params_json(params)).expect("values are JSON");
        let answer = run(
            &*self.executor,
            json!({"op": "query", "tx": self.tx, "sql": sql, "params": params}),
        )
        .await?;
        let Answered { columns, rows } = serde_json::from_value(answer).map_err(|e| {
            Error::Connection(format!(
                "the executor answered a query without its columns and rows: {e}"
            ))
        })?;
        let columns: Arc<[String]> = columns.into();
        Ok(rows
            .into_iter()
            .map(|values| JsonRow {
                columns: columns.clone(),
                values,
            })
            .collect())
    }
}

/// A query's answer: the column names once, each row's values in their order.
#[derive(Deserialize)]
struct Answered {
    columns: Vec<String>,
    rows: Vec<Vec<Value>>,
}

#[async_trait]
impl Session for ExecutorSession {
    type Row = JsonRow;

    async fn query(&self, sql: &str, params: &[Param<'_>]) -> Result<Vec<JsonRow>> {
        self.query_rows(sql, params).await
    }

    async fn batch(&self, sql: &str) -> Result<()> {
        run(
            &*self.executor,
            json!({"op": "exec", "tx": self.tx, "sql": sql}),
        )
        .await?;
        Ok(())
    }
}

/// A transaction the executor's `tx` holds open until `end`. Dropped
/// unfinished (a caller gave up), it is rolled back in the background.
pub struct ExecutorTx {
    session: ExecutorSession,
    open: bool,
}

impl ExecutorTx {
    async fn end(mut self, commit: bool) -> Result<()> {
        self.open = false;
        run(
            &*self.session.executor,
            json!({"op": "end", "tx": self.session.tx, "commit": commit}),
        )
        .await?;
        Ok(())
    }
}

impl Drop for ExecutorTx {
    fn drop(&mut self) {
        if !self.open {
            return;
        }
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let executor = self.session.executor.clone();
            let tx = self.session.tx;
            runtime.spawn(async move {
                let _ = run(&*executor, json!({"op": "end", "tx": tx, "commit": false})).await;
            });
        }
    }
}

#[async_trait]
impl Session for ExecutorTx {
    type Row = JsonRow;

    async fn query(&self, sql: &str, params: &[Param<'_>]) -> Result<Vec<JsonRow>> {
        self.session.query_rows(sql, params).await
    }

    async fn batch(&self, sql: &str) -> Result<()> {
        self.session.batch(sql).await
    }
}

#[async_trait]
impl Transaction for ExecutorTx {
    fn handle(&self) -> Option<u64> {
        self.session.tx
    }

    /// The caller holds the executor's own session (`handle`) and writes
    /// through it; nothing routes its statements back here.
    async fn query_objects(&self, _sql: &str, _values: &str) -> Result<String> {
        Err(Error::Invalid(
            "write through the executor's session handed to your function".into(),
        ))
    }

    async fn commit(self) -> Result<()> {
        self.end(true).await
    }

    async fn rollback(self) -> Result<()> {
        self.end(false).await
    }
}

#[async_trait]
impl Transport for ExecutorTransport {
    type Row = JsonRow;
    type Opened = ();
    type Conn = ExecutorSession;
    type Tx = ExecutorTx;
    const READS_VERSION_BEFORE_MIGRATING: bool = false;

    fn target(&self) -> &str {
        "the application's executor"
    }

    async fn open(&self) -> Result<()> {
        Ok(())
    }

    fn release(&self, _: ()) {}

    async fn conn(&self, _: &()) -> Result<ExecutorSession> {
        Ok(ExecutorSession {
            executor: self.executor.clone(),
            tx: None,
        })
    }

    async fn begin(&self, _: &()) -> Result<ExecutorTx> {
        // Run to its end even if the caller gives up meanwhile: a transaction
        // the executor opened for nobody is rolled back, never left holding
        // one of the application's connections.
        let executor = self.executor.clone();
        let (answer, answered) = tokio::sync::oneshot::channel();
        tokio::spawn(async move {
            let begun = run(&*executor, json!({"op": "begin"})).await;
            if let Err(Ok(id)) = answer.send(begun) {
                let _ = run(&*executor, json!({"op": "end", "tx": id, "commit": false})).await;
            }
        });
        let id = answered
            .await
            .map_err(|_| Error::Connection("the executor's begin was abandoned".into()))??;
        let id = id
            .as_u64()
            .ok_or_else(|| Error::Connection("the executor answered begin without an id".into()))?;
        Ok(ExecutorTx {
            session: ExecutorSession {
                executor: self.executor.clone(),
                tx: Some(id),
            },
            open: true,
        })
    }
}

/// A row as the executor's driver produced it, normalized at this boundary
/// (docs/api.md, "Row normalization"): integers may arrive as numbers or
/// decimal strings (int8 from node-postgres; bigints are sent as their
/// decimal text), JSON columns as text or already decoded.
pub struct JsonRow {
    columns: Arc<[String]>,
    values: Vec<Value>,
}

impl JsonRow {
    fn at(&self, index: usize) -> Result<&Value> {
        self.values
            .get(index)
            .ok_or_else(|| Error::Connection(format!("the executor's row has no column {index}")))
    }
}

fn mistyped(index: usize, wanted: &str, found: &Value) -> Error {
    Error::Connection(format!(
        "the executor's row has {found} in column {index}, where {wanted} was expected"
    ))
}

impl PgRow for JsonRow {
    fn column_name(&self, index: usize) -> Option<&str> {
        self.columns.get(index).map(String::as_str)
    }

    fn text(&self, index: usize) -> Result<String> {
        self.opt_text(index)?
            .ok_or_else(|| mistyped(index, "text", &Value::Null))
    }

    fn opt_text(&self, index: usize) -> Result<Option<String>> {
        match self.at(index)? {
            Value::Null => Ok(None),
            Value::String(s) => Ok(Some(s.clone())),
            other => Err(mistyped(index, "text", other)),
        }
    }

    fn int(&self, index: usize) -> Result<i64> {
        self.opt_int(index)?
            .ok_or_else(|| mistyped(index, "an integer", &Value::Null))
    }

    fn opt_int(&self, index: usize) -> Result<Option<i64>> {
        let value = self.at(index)?;
        match value {
            Value::Null => Ok(None),
            Value::Number(n) => n
                .as_i64()
                .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64))
                .map(Some)
                .ok_or_else(|| mistyped(index, "an integer", value)),
            Value::String(s) => s
                .trim()
                .parse()
                .map(Some)
                .map_err(|_| mistyped(index, "an integer", value)),
            other => Err(mistyped(index, "an integer", other)),
        }
    }

    fn opt_float(&self, index: usize) -> Result<Option<f64>> {
        let value = self.at(index)?;
        match value {
            Value::Null => Ok(None),
            Value::Number(n) => Ok(n.as_f64()),
            Value::String(s) => s
                .trim()
                .parse()
                .map(Some)
                .map_err(|_| mistyped(index, "a number", value)),
            other => Err(mistyped(index, "a number", other)),
        }
    }

    fn bool(&self, index: usize) -> Result<bool> {
        match self.at(index)? {
            Value::Bool(b) => Ok(*b),
            Value::String(s) if s == "t" || s == "true" => Ok(true),
            Value::String(s) if s == "f" || s == "false" => Ok(false),
            other => Err(mistyped(index, "a boolean", other)),
        }
    }

    fn opt_json(&self, index: usize) -> Result<Option<String>> {
        Ok(match self.at(index)? {
            Value::Null => None,
            // Text is the column's JSON as the server sent it (a driver
            // without a JSON parser); a decoded value is encoded again.
            Value::String(s) if serde_json::from_str::<serde::de::IgnoredAny>(s).is_ok() => {
                Some(s.clone())
            }
            other => Some(other.to_string()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unnamed(values: Vec<Value>) -> JsonRow {
        let columns: Vec<String> = (0..values.len()).map(|i| format!("c{i}")).collect();
        JsonRow {
            columns: columns.into(),
            values,
        }
    }

    #[test]
    fn integers_arrive_as_numbers_or_decimal_text() {
        let row = unnamed(vec![
            json!(5),
            json!("1733040000000"),
            json!(null),
            json!(3.0),
        ]);
        assert_eq!(row.int(0).unwrap(), 5);
        assert_eq!(row.int(1).unwrap(), 1_733_040_000_000);
        assert_eq!(row.opt_int(2).unwrap(), None);
        assert_eq!(row.int(3).unwrap(), 3);
        assert!(row.int(2).is_err());
        let bad = unnamed(vec![json!("12x"), json!(1.5), json!(true)]);
        assert!(bad.int(0).is_err() && bad.int(1).is_err() && bad.int(2).is_err());
    }

    #[test]
    fn json_columns_arrive_as_text_or_decoded() {
        let row = unnamed(vec![
            json!("{\"a\":1}"),
            json!({"a": 1}),
            json!([1, "x"]),
            json!(null),
            json!(7),
        ]);
        assert_eq!(row.opt_json(0).unwrap().as_deref(), Some("{\"a\":1}"));
        assert_eq!(row.opt_json(1).unwrap().as_deref(), Some("{\"a\":1}"));
        assert_eq!(row.opt_json(2).unwrap().as_deref(), Some("[1,\"x\"]"));
        assert_eq!(row.opt_json(3).unwrap(), None);
        assert_eq!(row.opt_json(4).unwrap().as_deref(), Some("7"));
    }

    #[test]
    fn task_rows_are_read_by_name_in_any_column_order() {
        use crate::store::postgres::conn::TaskColumns;
        use crate::task::COLUMNS;
        let value = |name: &str| match name {
            "status" => json!("queued"),
            "payload" | "metadata" => json!({}),
            "attempt" | "max_attempts" | "priority" => json!(1),
            "run_at_ms" | "created_at_ms" | "updated_at_ms" => json!("1733040000000"),
            "id" | "name" | "queue" => json!(format!("the {name}")),
            _ => Value::Null,
        };
        let mut names: Vec<String> = COLUMNS.iter().rev().map(|c| c.to_string()).collect();
        names.insert(5, "extra".into());
        let row = JsonRow {
            values: names.iter().map(|n| value(n)).collect(),
            columns: names.into(),
        };
        let task = TaskColumns::of(&row).unwrap().task(&row).unwrap();
        assert_eq!(
            (task.id.as_str(), task.name.as_str(), task.queue.as_str()),
            ("the id", "the name", "the queue")
        );
        assert_eq!((task.attempt, task.created_at_ms), (1, 1_733_040_000_000));

        let short = unnamed(vec![json!("x")]);
        assert!(TaskColumns::of(&short)
            .err()
            .is_some_and(|e| e.to_string().contains("no column id")));
    }

    #[test]
    fn refusals_keep_their_sqlstate() {
        struct Refusing;
        #[async_trait]
        impl Executor for Refusing {
            async fn call(&self, _: String) -> Result<String> {
                Ok(r#"{"error":{"code":"40001","message":"could not serialize"}}"#.into())
            }
        }
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let err = runtime
            .block_on(run(&Refusing, json!({"op": "begin"})))
            .unwrap_err();
        assert!(
            matches!(err, Error::Database { ref code, .. } if code == "40001"),
            "{err}"
        );
    }
}
