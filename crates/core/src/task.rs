//! The task row (docs/protocol.md, "Schema") and its JSON form for the bindings.

use std::fmt;
use std::str::FromStr;

/// The five statuses, in the order `STATUSES` exports them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Status {
    Queued,
    Running,
    Succeeded,
    Failed,
    Canceled,
}

impl Status {
    pub const ALL: [Status; 5] = [
        Status::Queued,
        Status::Running,
        Status::Succeeded,
        Status::Failed,
        Status::Canceled,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Status::Queued => "queued",
            Status::Running => "running",
            Status::Succeeded => "succeeded",
            Status::Failed => "failed",
            Status::Canceled => "canceled",
        }
    }

    pub fn is_terminal(self) -> bool {
        matches!(self, Status::Succeeded | Status::Failed | Status::Canceled)
    }
}

/// Input that is not a status or not a task row; an `Error::Invalid` to callers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotATask(pub String);

impl fmt::Display for NotATask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl FromStr for Status {
    type Err = NotATask;
    fn from_str(s: &str) -> Result<Self, NotATask> {
        Status::ALL
            .into_iter()
            .find(|status| status.as_str() == s)
            .ok_or_else(|| NotATask(format!("unknown status filter: {s}")))
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One row of `cairnq_tasks`. JSON columns are kept as the JSON text the
/// database holds: nothing in the core looks inside a payload, and the JS side
/// parses the whole row in one `JSON.parse`.
#[derive(Clone, Debug, PartialEq)]
pub struct Task {
    pub id: String,
    pub name: String,
    pub queue: String,
    pub status: Status,
    pub payload: String,
    pub result: Option<String>,
    pub error: Option<String>,
    pub metadata: String,
    pub progress: Option<f64>,
    pub message: Option<String>,
    pub attempt: i64,
    pub max_attempts: i64,
    pub priority: i64,
    pub worker_id: Option<String>,
    pub lease_until_ms: Option<i64>,
    pub run_at_ms: i64,
    pub cancel_requested_at_ms: Option<i64>,
    pub parent_id: Option<String>,
    pub root_id: Option<String>,
    pub correlation_id: Option<String>,
    pub created_at_ms: i64,
    pub updated_at_ms: i64,
    pub completed_at_ms: Option<i64>,
}

/// The column names in table order; a task object's keys come in this order.
pub const COLUMNS: [&str; 23] = [
    "id",
    "name",
    "queue",
    "status",
    "payload",
    "result",
    "error",
    "metadata",
    "progress",
    "message",
    "attempt",
    "max_attempts",
    "priority",
    "worker_id",
    "lease_until_ms",
    "run_at_ms",
    "cancel_requested_at_ms",
    "parent_id",
    "root_id",
    "correlation_id",
    "created_at_ms",
    "updated_at_ms",
    "completed_at_ms",
];

impl Task {
    pub fn cancel_requested(&self) -> bool {
        self.cancel_requested_at_ms.is_some()
    }

    /// The row as a claim leaves it (docs/protocol.md, "Claim"), for a draw
    /// that read it before marking it (SQLite's `claim_ids.sql` writes the
    /// same): running, held by `worker_id` until `now + lease_ms`, one more
    /// attempt, updated at `now`.
    pub fn claimed(self, worker_id: &str, now: i64, lease_ms: i64) -> Task {
        Task {
            status: Status::Running,
            worker_id: Some(worker_id.to_string()),
            lease_until_ms: Some(now + lease_ms),
            attempt: self.attempt + 1,
            updated_at_ms: now,
            ..self
        }
    }

    /// A row from its JSON object form (as `to_json` writes it, or as a caller
    /// built it by hand); JSON columns are re-encoded as text.
    pub fn from_json(text: &str) -> Result<Task, NotATask> {
        use serde_json::Value;
        let bad = |what: &str| NotATask(format!("not a task object: {what}"));
        let row: serde_json::Map<String, Value> =
            serde_json::from_str(text).map_err(|e| bad(&e.to_string()))?;
        let text_of = |key: &str| row.get(key).and_then(Value::as_str).map(str::to_string);
        let int_of = |key: &str| row.get(key).and_then(Value::as_f64).map(|v| v as i64);
        let json_of = |key: &str| row.get(key).filter(|v| !v.is_null()).map(Value::to_string);
        Ok(Task {
            id: text_of("id").ok_or_else(|| bad("missing id"))?,
            name: text_of("name").unwrap_or_default(),
            queue: text_of("queue").unwrap_or_else(|| "default".into()),
            status: text_of("status").as_deref().unwrap_or("running").parse()?,
            payload: json_of("payload").unwrap_or_else(|| "{}".into()),
            result: json_of("result"),
            error: json_of("error"),
            metadata: json_of("metadata").unwrap_or_else(|| "{}".into()),
            progress: row.get("progress").and_then(Value::as_f64),
            message: text_of("message"),
            attempt: int_of("attempt").unwrap_or(0),
            max_attempts: int_of("max_attempts").unwrap_or(3),
            priority: int_of("priority").unwrap_or(0),
            worker_id: text_of("worker_id"),
            lease_until_ms: int_of("lease_until_ms"),
            run_at_ms: int_of("run_at_ms").unwrap_or(0),
            cancel_requested_at_ms: int_of("cancel_requested_at_ms"),
            parent_id: text_of("parent_id"),
            root_id: text_of("root_id"),
            correlation_id: text_of("correlation_id"),
            created_at_ms: int_of("created_at_ms").unwrap_or(0),
            updated_at_ms: int_of("updated_at_ms").unwrap_or(0),
            completed_at_ms: int_of("completed_at_ms"),
        })
    }

    /// The row as one JSON object, keys in table order, JSON columns embedded
    /// as they are stored.
    pub fn to_json(&self) -> String {
        let mut out = JsonWriter::with_capacity(
            384 + self.payload.len()
                + self.metadata.len()
                + self.result.as_ref().map_or(0, String::len)
                + self.error.as_ref().map_or(0, String::len),
        );
        self.write_json(&mut out);
        out.finish()
    }

    /// What a handler's context reads of its task (docs/api.md,
    /// "TaskContext": id, name, queue, attempt, payload, metadata and the
    /// lineage a child submit inherits), as one JSON object: the rest of the
    /// row stays in Rust, where the lease and settlement live.
    /// How long (ms) the task has been due at `now` (0 before it is).
    pub fn queue_wait_ms(&self, now: i64) -> i64 {
        (now - self.run_at_ms).max(0)
    }

    /// What a handler's context reads, and the queue wait at `now`.
    /// `backoff_fn` is set only where JS is to call the registration's
    /// backoff function when the task fails.
    pub(crate) fn write_handler_json(
        &self,
        out: &mut JsonWriter,
        now: i64,
        max_attempts: i64,
        backoff_function: bool,
    ) {
        out.open();
        out.string_field("id", Some(&self.id));
        out.string_field("name", Some(&self.name));
        out.string_field("queue", Some(&self.queue));
        out.raw_field("payload", Some(&self.payload));
        out.raw_field("metadata", Some(&self.metadata));
        out.int_field("attempt", Some(self.attempt));
        out.int_field("max_attempts", Some(max_attempts));
        out.string_field("root_id", self.root_id.as_deref());
        out.string_field("correlation_id", self.correlation_id.as_deref());
        out.int_field("queue_wait_ms", Some(self.queue_wait_ms(now)));
        if backoff_function {
            out.bool_field("backoff_fn", true);
        }
        out.close();
    }

    pub(crate) fn write_json(&self, out: &mut JsonWriter) {
        self.write_fields(out, true);
    }

    /// The row's JSON object; without `bodies`, the keys of `BODY_COLUMNS`
    /// are left out (a listing's summary).
    fn write_fields(&self, out: &mut JsonWriter, bodies: bool) {
        out.open();
        out.string_field("id", Some(&self.id));
        out.string_field("name", Some(&self.name));
        out.string_field("queue", Some(&self.queue));
        out.string_field("status", Some(self.status.as_str()));
        if bodies {
            out.raw_field("payload", Some(&self.payload));
            out.raw_field("result", self.result.as_deref());
            out.raw_field("error", self.error.as_deref());
            out.raw_field("metadata", Some(&self.metadata));
        }
        out.float_field("progress", self.progress);
        out.string_field("message", self.message.as_deref());
        out.int_field("attempt", Some(self.attempt));
        out.int_field("max_attempts", Some(self.max_attempts));
        out.int_field("priority", Some(self.priority));
        out.string_field("worker_id", self.worker_id.as_deref());
        out.int_field("lease_until_ms", self.lease_until_ms);
        out.int_field("run_at_ms", Some(self.run_at_ms));
        out.int_field("cancel_requested_at_ms", self.cancel_requested_at_ms);
        out.string_field("parent_id", self.parent_id.as_deref());
        out.string_field("root_id", self.root_id.as_deref());
        out.string_field("correlation_id", self.correlation_id.as_deref());
        out.int_field("created_at_ms", Some(self.created_at_ms));
        out.int_field("updated_at_ms", Some(self.updated_at_ms));
        out.int_field("completed_at_ms", self.completed_at_ms);
        out.close();
    }
}

/// The columns that hold JSON bodies, as large as callers made them: a
/// listing's summary rows leave them out (`summaries_to_json`).
pub const BODY_COLUMNS: [&str; 4] = ["payload", "result", "error", "metadata"];

/// Several rows as one JSON array.
pub fn tasks_to_json<'a>(tasks: impl IntoIterator<Item = &'a Task>) -> String {
    rows_to_json(tasks, true)
}

/// Several rows as one JSON array of summaries: every column but the
/// `BODY_COLUMNS`.
pub fn summaries_to_json<'a>(tasks: impl IntoIterator<Item = &'a Task>) -> String {
    rows_to_json(tasks, false)
}

fn rows_to_json<'a>(tasks: impl IntoIterator<Item = &'a Task>, bodies: bool) -> String {
    let tasks = tasks.into_iter();
    let mut out = JsonWriter::with_capacity(tasks.size_hint().0 * ROW_JSON_BYTES + 2);
    out.array(tasks, |out, task| task.write_fields(out, bodies));
    out.finish()
}

/// About what one row's JSON takes with a small payload: a buffer's first guess.
const ROW_JSON_BYTES: usize = 512;

/// A minimal JSON writer: the row shape is fixed, so this is cheaper than
/// building a `serde_json::Value` per task, and what it writes needs no
/// second pass to be checked or copied.
pub(crate) struct JsonWriter {
    buf: Vec<u8>,
    first: bool,
}

impl JsonWriter {
    pub(crate) fn with_capacity(n: usize) -> Self {
        JsonWriter {
            buf: Vec::with_capacity(n),
            first: true,
        }
    }

    pub(crate) fn open(&mut self) {
        self.buf.push(b'{');
        self.first = true;
    }

    pub(crate) fn close(&mut self) {
        self.buf.push(b'}');
        // A value was written: the enclosing object's next key needs a comma.
        self.first = false;
    }

    /// A JSON array of `items`, each written by `write`.
    pub(crate) fn array<T>(
        &mut self,
        items: impl IntoIterator<Item = T>,
        mut write: impl FnMut(&mut Self, T),
    ) {
        self.buf.push(b'[');
        for (i, item) in items.into_iter().enumerate() {
            if i > 0 {
                self.buf.push(b',');
            }
            write(self, item);
        }
        self.buf.push(b']');
        self.first = false;
    }

    pub(crate) fn key(&mut self, key: &str) {
        if !self.first {
            self.buf.push(b',');
        }
        self.first = false;
        self.buf.push(b'"');
        self.buf.extend_from_slice(key.as_bytes());
        self.buf.extend_from_slice(b"\":");
    }

    fn null_or<T>(&mut self, key: &str, value: Option<T>, write: impl FnOnce(&mut Vec<u8>, T)) {
        self.key(key);
        match value {
            Some(v) => write(&mut self.buf, v),
            None => self.buf.extend_from_slice(b"null"),
        }
    }

    pub(crate) fn string_field(&mut self, key: &str, value: Option<&str>) {
        self.null_or(key, value, |buf, v| {
            serde_json::to_writer(buf, v).expect("writing to a Vec cannot fail")
        });
    }

    fn raw_field(&mut self, key: &str, value: Option<&str>) {
        self.null_or(key, value, |buf, v| buf.extend_from_slice(v.as_bytes()));
    }

    pub(crate) fn int_field(&mut self, key: &str, value: Option<i64>) {
        self.null_or(key, value, |buf, v| {
            serde_json::to_writer(buf, &v).expect("writing to a Vec cannot fail")
        });
    }

    pub(crate) fn bool_field(&mut self, key: &str, value: bool) {
        self.key(key);
        self.buf
            .extend_from_slice(if value { b"true" } else { b"false" });
    }

    fn float_field(&mut self, key: &str, value: Option<f64>) {
        self.null_or(key, value.filter(|v| v.is_finite()), |buf, v| {
            serde_json::to_writer(buf, &v).expect("writing to a Vec cannot fail")
        });
    }

    pub(crate) fn finish(self) -> String {
        // Everything written is UTF-8: keys are ASCII, strings come from serde_json,
        // and raw JSON columns were read from the database as Rust strings.
        String::from_utf8(self.buf).expect("task JSON is UTF-8")
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn queue_wait_counts_from_run_at_and_never_below_zero() {
        let task = Task {
            run_at_ms: 5_000,
            ..sample()
        };
        assert_eq!(task.queue_wait_ms(7_500), 2_500);
        assert_eq!(task.queue_wait_ms(4_000), 0);
    }

    pub fn sample() -> Task {
        Task {
            id: "task_1".into(),
            name: "n\"q".into(),
            queue: "default".into(),
            status: Status::Running,
            payload: r#"{"a":[1,null],"é":"\u00e9"}"#.into(),
            result: None,
            error: None,
            metadata: "{}".into(),
            progress: Some(0.5),
            message: None,
            attempt: 1,
            max_attempts: 3,
            priority: 0,
            worker_id: Some("w1".into()),
            lease_until_ms: Some(1_700_000_000_000),
            run_at_ms: 1,
            cancel_requested_at_ms: None,
            parent_id: None,
            root_id: Some("task_1".into()),
            correlation_id: None,
            created_at_ms: 1,
            updated_at_ms: 2,
            completed_at_ms: None,
        }
    }

    #[test]
    fn columns_follow_the_protocol() {
        let fixture: serde_json::Value =
            serde_json::from_str(include_str!("../tests/fixtures/task-columns.json"))
                .expect("task-columns.json is JSON");
        assert_eq!(serde_json::json!(COLUMNS), fixture["columns"]);
    }

    #[test]
    fn json_has_every_column_in_table_order() {
        let json = sample().to_json();
        let value: serde_json::Value = serde_json::from_str(&json).unwrap();
        let keys: Vec<_> = value.as_object().unwrap().keys().cloned().collect();
        let mut expected: Vec<_> = COLUMNS.iter().map(|s| s.to_string()).collect();
        let mut sorted = keys.clone();
        sorted.sort();
        expected.sort();
        assert_eq!(sorted, expected);
        assert!(json.starts_with(r#"{"id":"task_1","name":"n\"q","queue":"default","status":"running","payload":{"a":[1,null]"#));
        assert_eq!(value["payload"]["é"], "é");
        assert_eq!(value["progress"], 0.5);
        assert_eq!(value["result"], serde_json::Value::Null);
    }

    #[test]
    fn rows_read_back_from_their_json() {
        let task = sample();
        let back = Task::from_json(&task.to_json()).unwrap();
        assert_eq!(back.id, task.id);
        assert_eq!(back.attempt, 1);
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&back.payload).unwrap()["a"][0],
            1
        );
        assert!(Task::from_json("{}").is_err());
    }

    #[test]
    fn arrays_of_rows() {
        assert_eq!(tasks_to_json(&[]), "[]");
        let v: serde_json::Value =
            serde_json::from_str(&tasks_to_json(&[sample(), sample()])).unwrap();
        assert_eq!(v.as_array().unwrap().len(), 2);
    }

    #[test]
    fn summaries_leave_the_bodies_out() {
        let v: serde_json::Value = serde_json::from_str(&summaries_to_json(&[sample()])).unwrap();
        let row = v[0].as_object().unwrap();
        for column in COLUMNS {
            assert_eq!(
                row.contains_key(column),
                !BODY_COLUMNS.contains(&column),
                "{column}"
            );
        }
    }

    #[test]
    fn status_names_round_trip() {
        for s in Status::ALL {
            assert_eq!(s.as_str().parse::<Status>().unwrap(), s);
        }
        assert!("done".parse::<Status>().is_err());
        assert!(!Status::Running.is_terminal() && Status::Canceled.is_terminal());
    }
}
