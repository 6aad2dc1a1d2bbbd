//! The language-neutral conformance scenarios (conformance/README.md) run
//! against the core store: every scenario on a fresh SQLite file, and on Postgres when
//! `CAIRNQ_TEST_PG_DSN` names a server. The scenario files are read at test
//! time from the repository's `conformance/scenarios` (vendored; see
//! `conformance/README.md`), or from `CAIRNQ_CONFORMANCE_DIR`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use cairnq_core::store::{
    ClaimRequest, HeldTask, ListInput, Outcome, PurgeInput, SubmitInput, Target, TaskRef,
    DEFAULT_LEASE_MS,
};
use cairnq_core::{Error, Status, Store, Task};
use serde_json::{Map, Value};

const PG_DSN_ENV: &str = "CAIRNQ_TEST_PG_DSN";

// ---------------------------------------------------------------------------
// Scenario files
// ---------------------------------------------------------------------------

fn conformance_dir() -> PathBuf {
    match std::env::var_os("CAIRNQ_CONFORMANCE_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance/scenarios"),
    }
}

struct Scenario {
    file_stem: String,
    body: Value,
}

/// Every `*.json` file of the scenario directory, in file-name order.
fn load_scenarios() -> Vec<Scenario> {
    let dir = conformance_dir();
    let entries = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("reading the scenario directory {}: {e}", dir.display()));
    let mut paths: Vec<PathBuf> = entries
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
            let body = serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("parsing {}: {e}", path.display()));
            let file_stem = path.file_stem().unwrap().to_string_lossy().into_owned();
            Scenario { file_stem, body }
        })
        .collect()
}

// ---------------------------------------------------------------------------
// Values: `None` is "missing", which differs from JSON null for equality
// ---------------------------------------------------------------------------

/// Reads one member: an array by integer index, an object by property name;
/// anything read from a scalar, null or missing is missing.
fn member(value: Option<&Value>, segment: &str) -> Option<Value> {
    match value? {
        Value::Array(items) => index_of(segment).and_then(|i| items.get(i)).cloned(),
        Value::Object(fields) => fields.get(segment).cloned(),
        _ => None,
    }
}

/// A segment names an array element only when it is all decimal digits.
fn index_of(segment: &str) -> Option<usize> {
    if segment.is_empty() || !segment.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    segment.parse().ok()
}

fn deep_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        // 1 and 1.0 are one number (SQLite returns progress 1.0 as 1).
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(l, r)| deep_equal(l, r))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(key, l)| y.get(key).is_some_and(|r| deep_equal(l, r)))
        }
        _ => a == b,
    }
}

fn same(a: Option<&Value>, b: Option<&Value>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(x), Some(y)) => deep_equal(x, y),
        _ => false,
    }
}

fn is_nullish(value: Option<&Value>) -> bool {
    matches!(value, None | Some(Value::Null))
}

/// The number `greaterThanRef` compares: numbers as they are, null 0, booleans
/// 0/1, decimal strings parsed; anything else (and missing) is NaN, which
/// fails every comparison.
fn to_number(value: Option<&Value>) -> f64 {
    match value {
        Some(Value::Number(n)) => n.as_f64().unwrap_or(f64::NAN),
        Some(Value::Null) => 0.0,
        Some(Value::Bool(b)) => f64::from(u8::from(*b)),
        Some(Value::String(s)) => {
            let s = s.trim();
            if s.is_empty() {
                0.0
            } else if s
                .bytes()
                .all(|b| b.is_ascii_digit() || b"+-.eE".contains(&b))
            {
                s.parse().unwrap_or(f64::NAN)
            } else {
                f64::NAN
            }
        }
        _ => f64::NAN,
    }
}

fn show(value: Option<&Value>) -> String {
    value.map_or_else(|| "missing".to_string(), Value::to_string)
}

fn task_value(task: &Task) -> Value {
    serde_json::from_str(&task.to_json()).expect("a task row is a JSON object")
}

fn tasks_value(tasks: &[Task]) -> Value {
    Value::Array(tasks.iter().map(task_value).collect())
}

fn optional_task_value(task: Option<Task>) -> Value {
    task.as_ref().map_or(Value::Null, task_value)
}

/// `{id, status}`, or null when the probe found no task.
fn task_ref_value(found: Option<TaskRef>) -> Value {
    found.map_or(
        Value::Null,
        |found| serde_json::json!({"id": found.id, "status": found.status.as_str()}),
    )
}

// ---------------------------------------------------------------------------
// Step arguments
// ---------------------------------------------------------------------------

/// A step's resolved `args`. Absent and null both mean "not given" except
/// where an op says otherwise (`names`).
struct Args(Map<String, Value>);

impl Args {
    fn given(&self, key: &str) -> Option<&Value> {
        self.0.get(key).filter(|v| !v.is_null())
    }

    fn string(&self, key: &str) -> Result<Option<String>, String> {
        match self.given(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(format!("argument {key} must be a string, got {other}")),
        }
    }

    fn required_string(&self, key: &str) -> Result<String, String> {
        self.string(key)?
            .ok_or_else(|| format!("argument {key} is required"))
    }

    fn number(&self, key: &str) -> Result<Option<f64>, String> {
        match self.given(key) {
            None => Ok(None),
            Some(Value::Number(n)) => Ok(n.as_f64()),
            Some(other) => Err(format!("argument {key} must be a number, got {other}")),
        }
    }

    fn required_number(&self, key: &str) -> Result<f64, String> {
        self.number(key)?
            .ok_or_else(|| format!("argument {key} is required"))
    }

    fn integer(&self, key: &str, default: i64) -> Result<i64, String> {
        Ok(self.number(key)?.map_or(default, |v| v as i64))
    }

    fn flag(&self, key: &str) -> Result<bool, String> {
        match self.given(key) {
            None => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(other) => Err(format!("argument {key} must be a boolean, got {other}")),
        }
    }

    /// The value encoded as compact JSON text, `None` when not given.
    fn json(&self, key: &str) -> Option<String> {
        self.given(key).map(Value::to_string)
    }

    fn strings(&self, key: &str) -> Result<Option<Vec<String>>, String> {
        match self.given(key) {
            None => Ok(None),
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| match item {
                    Value::String(s) => Ok(s.clone()),
                    other => Err(format!("argument {key} must list strings, got {other}")),
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            Some(other) => Err(format!("argument {key} must be a list, got {other}")),
        }
    }

    fn required_strings(&self, key: &str) -> Result<Vec<String>, String> {
        self.strings(key)?
            .ok_or_else(|| format!("argument {key} is required"))
    }

    fn owned(&self) -> Result<HeldTask, String> {
        Ok(HeldTask {
            task_id: self.required_string("id")?,
            worker_id: self.required_string("worker_id")?,
        })
    }

    fn lease_ms(&self) -> Result<i64, String> {
        self.integer("lease_ms", DEFAULT_LEASE_MS)
    }
}

// ---------------------------------------------------------------------------
// The interpreter
// ---------------------------------------------------------------------------

/// Why an op produced no result: the store refused (an expected error may
/// match), or the scenario itself is malformed for this runner.
enum OpFailure {
    Store(Error),
    Scenario(String),
}

impl From<Error> for OpFailure {
    fn from(e: Error) -> Self {
        OpFailure::Store(e)
    }
}

impl From<String> for OpFailure {
    fn from(message: String) -> Self {
        OpFailure::Scenario(message)
    }
}

const STEP_KEYS: [&str; 5] = ["op", "args", "save", "expect", "expectError"];

struct Runner<'a> {
    store: &'a Store,
    saved: HashMap<String, Value>,
}

impl Runner<'_> {
    async fn run(&mut self, scenario: &Value) -> Result<(), String> {
        let steps = scenario
            .get("steps")
            .and_then(Value::as_array)
            .ok_or("the scenario has no steps array")?;
        for (index, step) in steps.iter().enumerate() {
            let op = step.get("op").and_then(Value::as_str).unwrap_or("<none>");
            self.step(step)
                .await
                .map_err(|mismatch| format!("step {index} ({op}): {mismatch}"))?;
        }
        Ok(())
    }

    async fn step(&mut self, step: &Value) -> Result<(), String> {
        let step = step.as_object().ok_or("a step must be an object")?;
        let op = step
            .get("op")
            .and_then(Value::as_str)
            .ok_or("a step needs a string op")?;
        if op == "expect" {
            let target = match step.get("target") {
                Some(target) => self.resolve(target)?,
                None => None,
            };
            let mut assertion = step.clone();
            assertion.remove("op");
            assertion.remove("target");
            return self.check(target.as_ref(), &assertion);
        }
        if let Some(key) = step.keys().find(|k| !STEP_KEYS.contains(&k.as_str())) {
            return Err(format!("unknown step key {key}"));
        }
        let args = match step.get("args") {
            None => Map::new(),
            Some(raw) => match self.resolve(raw)? {
                Some(Value::Object(args)) => args,
                _ => return Err("args must be an object".into()),
            },
        };
        let save = step.get("save").and_then(Value::as_str);
        let expected_error = match step.get("expectError") {
            None => None,
            Some(Value::String(name)) => Some(name.as_str()),
            Some(other) => return Err(format!("expectError must be a string, got {other}")),
        };
        let outcome = self.perform(op, &Args(args)).await;
        match (outcome, expected_error) {
            (Err(OpFailure::Scenario(message)), _) => Err(message),
            (Ok(_), Some(expected)) => Err(format!("expected error {expected}, got success")),
            (Err(OpFailure::Store(error)), Some(expected)) => {
                let name = error.class_name();
                if expected != name {
                    return Err(format!("expected error {expected}, got {name}: {error}"));
                }
                if let Some(alias) = save {
                    let task_id = error_task_id(&error).map_or(Value::Null, Value::from);
                    let saved = serde_json::json!({ "task_id": task_id, "type": name });
                    self.saved.insert(alias.to_string(), saved);
                }
                Ok(())
            }
            (Err(OpFailure::Store(error)), None) => {
                Err(format!("unexpected {}: {error}", error.class_name()))
            }
            (Ok(result), None) => {
                if let Some(alias) = save {
                    self.saved.insert(alias.to_string(), result.clone());
                }
                match step.get("expect") {
                    Some(Value::Object(assertion)) => self.check(Some(&result), assertion),
                    Some(_) => Err("expect must be an object".into()),
                    None => Ok(()),
                }
            }
        }
    }

    async fn perform(&self, op: &str, args: &Args) -> Result<Value, OpFailure> {
        let store = self.store;
        let value = match op {
            "submit" => {
                let input = SubmitInput {
                    name: args.required_string("name")?,
                    payload: args.json("payload"),
                    queue: args.string("queue")?,
                    key: args.string("key")?,
                    conflict: args.string("conflict")?,
                    max_attempts: args.number("max_attempts")?,
                    priority: args.number("priority")?,
                    metadata: args.json("metadata"),
                    parent_id: None,
                    root_id: None,
                    correlation_id: args.string("correlation_id")?,
                    run_at_delay_ms: args.number("run_at_delay_ms")?,
                    ..SubmitInput::default()
                };
                task_value(&store.submit(input).await?)
            }
            "get" => optional_task_value(store.get(id_target(args)?).await?),
            "get_by_key" => optional_task_value(store.get(key_target(args)?).await?),
            "list" => {
                let input = ListInput {
                    status: args.string("status")?,
                    queue: args.string("queue")?,
                    name: args.string("name")?,
                    root_id: args.string("root_id")?,
                    correlation_id: args.string("correlation_id")?,
                    limit: args.number("limit")?,
                    offset: args.number("offset")?,
                    bodies: None,
                };
                tasks_value(&store.list(input).await?)
            }
            "cancel" => optional_task_value(store.cancel(id_target(args)?).await?),
            "cancel_by_key" => optional_task_value(store.cancel(key_target(args)?).await?),
            "retry" => {
                let reset = args.flag("reset_attempt")?;
                optional_task_value(store.retry(id_target(args)?, reset).await?)
            }
            "retry_by_key" => {
                let reset = args.flag("reset_attempt")?;
                optional_task_value(store.retry(key_target(args)?, reset).await?)
            }
            "purge" => {
                let input = PurgeInput {
                    older_than_ms: args.number("older_than_ms")?,
                    keep_last: None,
                    queue: args.string("queue")?,
                    status: args.string("status")?,
                    name: args.string("name")?,
                    limit: args.number("limit")?,
                };
                Value::from(store.purge(input).await?)
            }
            "stats" => stats_value(&store.stats(args.string("queue")?).await?),
            "get_status" => task_ref_value(store.get_status(id_target(args)?).await?),
            "get_status_by_key" => task_ref_value(store.get_status(key_target(args)?).await?),
            "queue_depth" => {
                let queue = args.required_string("queue")?;
                let max_depth = args.required_number("max_depth")?;
                Value::from(store.queue_depth(queue, max_depth).await?)
            }
            "claim" => {
                let request = ClaimRequest {
                    queues: args.required_strings("queues")?,
                    worker_id: args.required_string("worker_id")?,
                    lease_ms: args.lease_ms()?,
                    // Absent and null both mean "any name"; [] stays an empty filter.
                    names: args.strings("names")?,
                };
                let limit = args.integer("limit", 1)?;
                tasks_value(&store.claim(request, limit).await?)
            }
            "heartbeat" => task_value(&store.heartbeat(args.owned()?, args.lease_ms()?).await?),
            "heartbeat_batch" => {
                let ids = args.required_strings("ids")?;
                let renewed: HashMap<String, bool> = store
                    .heartbeat_batch(
                        ids.clone(),
                        args.required_string("worker_id")?,
                        args.lease_ms()?,
                    )
                    .await?
                    .into_iter()
                    .collect();
                flatten_heartbeats(&ids, &renewed)
            }
            "progress" => {
                let task = store
                    .progress(
                        args.owned()?,
                        args.number("progress")?,
                        args.string("message")?,
                    )
                    .await?;
                task_value(&task)
            }
            "succeed" => {
                let outcome = Outcome::Succeed {
                    result: args.json("result"),
                };
                task_value(&store.finish(args.owned()?, outcome).await?)
            }
            "complete" => {
                let outcome = Outcome::Complete {
                    result: args.json("result"),
                };
                task_value(&store.finish(args.owned()?, outcome).await?)
            }
            "fail" => {
                let outcome = Outcome::Fail {
                    error: args.json("error").unwrap_or_else(|| "{}".to_string()),
                    // Only a literal false makes a failure permanent.
                    retryable: args.0.get("retryable") != Some(&Value::Bool(false)),
                    delay_ms: args.integer("delay_ms", 0)?,
                    dead_letter: Default::default(),
                };
                task_value(&store.finish(args.owned()?, outcome).await?)
            }
            "sleep" => {
                let ms = args.required_number("ms")?;
                tokio::time::sleep(Duration::from_secs_f64(ms.max(0.0) / 1000.0)).await;
                Value::Null
            }
            other => return Err(OpFailure::Scenario(format!("unknown op {other}"))),
        };
        Ok(value)
    }

    /// Resolves every `$reference` string at any depth. A missing member of an
    /// object drops its key; a missing array element becomes null.
    fn resolve(&self, value: &Value) -> Result<Option<Value>, String> {
        Ok(Some(match value {
            Value::String(s) if s.starts_with('$') => return self.resolve_reference(s),
            Value::Array(items) => Value::Array(
                items
                    .iter()
                    .map(|item| Ok(self.resolve(item)?.unwrap_or(Value::Null)))
                    .collect::<Result<_, String>>()?,
            ),
            Value::Object(fields) => {
                let mut resolved = Map::new();
                for (key, field) in fields {
                    if let Some(v) = self.resolve(field)? {
                        resolved.insert(key.clone(), v);
                    }
                }
                Value::Object(resolved)
            }
            literal => literal.clone(),
        }))
    }

    fn resolve_reference(&self, reference: &str) -> Result<Option<Value>, String> {
        let mut segments = reference[1..].split('.');
        let alias = segments.next().unwrap_or_default();
        let root = self
            .saved
            .get(alias)
            .ok_or_else(|| format!("{reference} refers to alias {alias}, never saved"))?;
        let mut current = Some(root.clone());
        for segment in segments {
            current = member(current.as_ref(), segment);
        }
        Ok(current)
    }

    fn check(&self, target: Option<&Value>, assertion: &Map<String, Value>) -> Result<(), String> {
        for (key, operand) in assertion {
            match key.as_str() {
                "equals" => {
                    let expected = operand.as_object().ok_or("equals takes an object")?;
                    for (field, want) in expected {
                        let want = self.resolve(want)?;
                        let got = member(target, field);
                        if !same(got.as_ref(), want.as_ref()) {
                            return Err(format!(
                                "equals: field {field} is {}, expected {}",
                                show(got.as_ref()),
                                show(want.as_ref())
                            ));
                        }
                    }
                }
                "equalsRef" | "notEqualsRef" => {
                    let other = self.resolve(operand)?;
                    let equal = same(target, other.as_ref());
                    if equal != (key == "equalsRef") {
                        return Err(format!(
                            "{key}: target {} vs {}",
                            show(target),
                            show(other.as_ref())
                        ));
                    }
                }
                "greaterThanRef" => {
                    let other = self.resolve(operand)?;
                    let greater = to_number(target) > to_number(other.as_ref());
                    if !greater {
                        return Err(format!(
                            "greaterThanRef: {} is not greater than {}",
                            show(target),
                            show(other.as_ref())
                        ));
                    }
                }
                "length" => {
                    let want = operand.as_f64().ok_or("length takes a number")?;
                    match target {
                        Some(Value::Array(items)) if items.len() as f64 == want => {}
                        _ => return Err(format!("length: expected {want}, got {}", show(target))),
                    }
                }
                "notNull" | "isNull" => {
                    let fields = operand
                        .as_array()
                        .ok_or_else(|| format!("{key} takes a list of field names"))?;
                    for field in fields {
                        let field = field.as_str().ok_or("field names are strings")?;
                        let got = member(target, field);
                        if is_nullish(got.as_ref()) != (key == "isNull") {
                            return Err(format!("{key}: field {field} is {}", show(got.as_ref())));
                        }
                    }
                }
                other => return Err(format!("unknown assertion key {other}")),
            }
        }
        Ok(())
    }
}

fn id_target(args: &Args) -> Result<Target, String> {
    Ok(Target::Id(args.required_string("id")?))
}

fn key_target(args: &Args) -> Result<Target, String> {
    Ok(Target::Key(args.required_string("key")?))
}

fn error_task_id(error: &Error) -> Option<&str> {
    match error {
        Error::LostLease { task_id } | Error::TaskTimeout { task_id, .. } => Some(task_id),
        _ => None,
    }
}

fn stats_value(stats: &cairnq_core::store::Stats) -> Value {
    let queues = stats.iter().map(|(queue, counts)| {
        let per_status = Status::ALL
            .iter()
            .zip(counts)
            .map(|(status, count)| (status.as_str().to_string(), Value::from(*count)));
        (queue.clone(), Value::Object(per_status.collect()))
    });
    Value::Object(queues.collect())
}

/// conformance/README.md ("What a runner has to know", `heartbeat_batch`):
/// the renewed map as `{id, cancel_requested}` rows in the order the ids were
/// asked for, leaving out ids that were not renewed.
fn flatten_heartbeats(ids: &[String], renewed: &HashMap<String, bool>) -> Value {
    ids.iter()
        .filter_map(|id| {
            renewed
                .get(id)
                .map(|cancel| serde_json::json!({ "id": id, "cancel_requested": cancel }))
        })
        .collect()
}

// ---------------------------------------------------------------------------
// Dialects
// ---------------------------------------------------------------------------

/// Where the scenarios run; each scenario gets a connected store holding no
/// tasks and no keys.
enum Dialect {
    /// A fresh file in a fresh temporary directory per scenario.
    Sqlite,
    /// One store for the suite, emptied through a second connection before
    /// each scenario.
    Postgres {
        store: Arc<Store>,
        admin: tokio_postgres::Client,
    },
}

impl Dialect {
    async fn postgres(dsn: &str) -> Result<Dialect, String> {
        let store = Store::postgres(dsn, None).map_err(|e| format!("Store::postgres: {e}"))?;
        // Connecting migrates, so the tables exist before the first TRUNCATE.
        store.connect().await.map_err(|e| format!("connect: {e}"))?;
        let (admin, connection) = tokio_postgres::connect(dsn, tokio_postgres::NoTls)
            .await
            .map_err(|e| format!("admin connection: {e}"))?;
        tokio::spawn(connection);
        Ok(Dialect::Postgres { store, admin })
    }

    fn label(&self) -> &'static str {
        match self {
            Dialect::Sqlite => "sqlite",
            Dialect::Postgres { .. } => "postgres",
        }
    }

    async fn open(&self) -> Result<Fixture, String> {
        match self {
            Dialect::Sqlite => {
                let dir = tempfile::tempdir().map_err(|e| format!("creating a temp dir: {e}"))?;
                let path = dir.path().join("cairnq.db");
                let store = Store::sqlite(path.to_str().expect("a UTF-8 temp path"), None);
                store.connect().await.map_err(|e| format!("connect: {e}"))?;
                Ok(Fixture {
                    store,
                    scenario_dir: Some(dir),
                })
            }
            Dialect::Postgres { store, admin } => {
                admin
                    .batch_execute("TRUNCATE cairnq_tasks, cairnq_task_keys")
                    .await
                    .map_err(|e| format!("truncate: {e}"))?;
                Ok(Fixture {
                    store: store.clone(),
                    scenario_dir: None,
                })
            }
        }
    }

    async fn shut_down(self) -> Result<(), String> {
        match self {
            Dialect::Sqlite => Ok(()),
            Dialect::Postgres { store, .. } => {
                store.close().await.map_err(|e| format!("close: {e}"))
            }
        }
    }
}

/// The store one scenario runs on.
struct Fixture {
    store: Arc<Store>,
    /// Set when the store was opened for this scenario alone (SQLite).
    scenario_dir: Option<tempfile::TempDir>,
}

impl Fixture {
    /// Closes a store opened for this scenario; a suite-wide one stays open.
    async fn release(self) -> Result<(), String> {
        if self.scenario_dir.is_some() {
            self.store
                .close()
                .await
                .map_err(|e| format!("close: {e}"))?;
        }
        Ok(())
    }
}

/// Runs every scenario on `dialect`, one line per scenario, and fails naming
/// each scenario that did not pass.
async fn run_suite(dialect: Dialect) {
    let scenarios = load_scenarios();
    assert!(
        !scenarios.is_empty(),
        "no scenarios in {}",
        conformance_dir().display()
    );
    let label = dialect.label();
    let mut failures = Vec::new();
    for scenario in &scenarios {
        let outcome = run_one(&dialect, &scenario.body).await;
        match &outcome {
            Ok(()) => println!("conformance[{label}] ok   {}", scenario.file_stem),
            Err(message) => {
                println!(
                    "conformance[{label}] FAIL {}: {message}",
                    scenario.file_stem
                );
                failures.push(format!("{}: {message}", scenario.file_stem));
            }
        }
    }
    if let Err(message) = dialect.shut_down().await {
        failures.push(message);
    }
    assert!(
        failures.is_empty(),
        "{} of {} {label} scenarios failed:\n{}",
        failures.len(),
        scenarios.len(),
        failures.join("\n")
    );
}

async fn run_one(dialect: &Dialect, scenario: &Value) -> Result<(), String> {
    let fixture = dialect.open().await?;
    let mut runner = Runner {
        store: &fixture.store,
        saved: HashMap::new(),
    };
    let outcome = runner.run(scenario).await;
    let released = fixture.release().await;
    outcome.and(released)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scenarios_on_sqlite() {
    run_suite(Dialect::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scenarios_on_postgres() {
    let Ok(dsn) = std::env::var(PG_DSN_ENV) else {
        println!("conformance[postgres] skipped: {PG_DSN_ENV} is not set");
        return;
    };
    let dialect = Dialect::postgres(&dsn)
        .await
        .unwrap_or_else(|e| panic!("opening the Postgres store: {e}"));
    run_suite(dialect).await;
}

// ---------------------------------------------------------------------------
// Checks that accompany the scenarios (conformance/README.md)
// ---------------------------------------------------------------------------

#[test]
fn scenario_directory_is_not_empty() {
    let scenarios = load_scenarios();
    assert!(
        !scenarios.is_empty(),
        "no scenarios in {}",
        conformance_dir().display()
    );
    for scenario in &scenarios {
        assert_eq!(
            scenario.body.get("name").and_then(Value::as_str),
            Some(scenario.file_stem.as_str()),
            "a scenario's name equals its file stem"
        );
    }
}

/// The values of the `status in (...)` CHECK constraint of the base migration.
fn migration_statuses() -> Vec<String> {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("protocol/sqlite/migrations/0001_init.sql");
    let sql = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let normalized = sql.split_whitespace().collect::<Vec<_>>().join(" ");
    let opening = "check ( status in (";
    let start = normalized
        .find(opening)
        .expect("the status CHECK constraint")
        + opening.len();
    let end = start
        + normalized[start..]
            .find(')')
            .expect("the end of the status list");
    normalized[start..end]
        .split(',')
        .map(|item| item.trim().trim_matches('\'').to_string())
        .collect()
}

#[test]
fn statuses_match_the_migration_check_constraint() {
    let from_migration = migration_statuses();
    let from_core: Vec<String> = Status::ALL.iter().map(|s| s.as_str().to_string()).collect();
    assert_eq!(from_core, from_migration);
    for status in Status::ALL.iter().filter(|s| s.is_terminal()) {
        assert!(from_migration.iter().any(|s| s == status.as_str()));
    }
}
