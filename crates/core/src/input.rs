//! Input as JavaScript hands it over: numbers are `f64` with NaN and the
//! infinities, and options are checked here, in one wording (the value
//! echoed as JS prints it, `error::js_number`).

use std::time::Duration;

use serde_json::{Map, Value};

use crate::error::{js_number, Error, Result};

/// Milliseconds past this are "forever" (about 31,700 years). It is also the
/// largest duration a stored time is computed from (`stored_ms`): added to the
/// clock it stays an exact integer for SQLite, Postgres' bigint, JS numbers
/// and JS dates.
pub const FOREVER_MS: f64 = 1e15;
/// The longest delay a JS timer holds (2^31 − 1 ms).
const TIMER_MAX_MS: f64 = 2_147_483_647.0;

/// Milliseconds as a duration: NaN and negatives are zero, huge values and
/// Infinity mean "forever".
pub fn duration_ms(ms: f64) -> Duration {
    if ms.is_nan() || ms <= 0.0 {
        Duration::ZERO
    } else {
        Duration::from_secs_f64(ms.min(FOREVER_MS) / 1000.0)
    }
}

/// A delay as a JS timer takes it: what a timer cannot hold (NaN, negatives,
/// Infinity, more than 2^31 − 1 ms) fires at once.
pub fn timer_ms(ms: f64) -> Duration {
    if ms.is_finite() && ms > 0.0 && ms <= TIMER_MAX_MS {
        Duration::from_secs_f64(ms / 1000.0)
    } else {
        Duration::ZERO
    }
}

/// A JS number as an `i64`, truncated and saturated.
pub fn saturating_i64(v: f64) -> i64 {
    v.min(i64::MAX as f64) as i64
}

/// `name`, a duration the database adds to its clock (a delay, a lease, a
/// backoff), as whole milliseconds: it must be finite and at most
/// `FOREVER_MS` either way, else the stored time would overflow the integer
/// column (SQLite would keep a REAL there, Postgres refuses the bigint).
/// Fractions are dropped, as before.
pub fn stored_ms(name: &str, v: f64) -> Result<i64> {
    if v.is_finite() && v.abs() <= FOREVER_MS {
        Ok(v as i64)
    } else {
        Err(invalid(
            name,
            "a finite number of milliseconds, at most 1e15 (about 31,700 years)",
            v,
        ))
    }
}

/// `stored_ms` of an optional value, `default` when absent.
pub fn stored_ms_or(name: &str, v: Option<f64>, default: i64) -> Result<i64> {
    v.map_or(Ok(default), |v| stored_ms(name, v))
}

fn invalid(name: &str, rule: &str, v: f64) -> Error {
    refused(name, rule, &js_number(v))
}

/// The refusal of `name`'s value, spelled as JS prints it.
fn refused(name: &str, rule: &str, spelled: &str) -> Error {
    Error::Invalid(format!("{name} must be {rule}, got {spelled}"))
}

/// The longest task name, queue name or step id the API takes, in bytes of
/// UTF-8 (docs/api.md, "Values and JSON"): these are shown whole in lists and
/// metrics, and indexed (Postgres refuses a B-tree entry past about 2.7 KB).
pub const MAX_NAME_BYTES: usize = 512;

/// `field`, a name the API stores and shows (a task name, a queue, a step
/// id), must be a non-empty string of at most `MAX_NAME_BYTES` bytes. O(1):
/// a string knows its length.
pub fn name_field(field: &str, value: &str) -> Result<()> {
    if value.is_empty() {
        return Err(Error::Invalid(format!(
            "{field} must be a non-empty string, got \"\""
        )));
    }
    if value.len() > MAX_NAME_BYTES {
        return Err(Error::Invalid(format!(
            "{field} must be at most {MAX_NAME_BYTES} bytes of UTF-8, got {} bytes",
            value.len()
        )));
    }
    Ok(())
}

/// The range of the protocol's `priority` column (a 32-bit integer on
/// Postgres; both dialects keep one rule, since they share databases).
const PRIORITY_RANGE: (f64, f64) = (i32::MIN as f64, i32::MAX as f64);

/// `priority` as stored: a number in the column's range, its fraction
/// dropped (as before).
pub fn priority(v: f64) -> Result<i64> {
    let (min, max) = PRIORITY_RANGE;
    if v.trunc() >= min && v.trunc() <= max {
        Ok(v as i64)
    } else {
        Err(invalid(
            "priority",
            &format!("a number from {} to {}", js_number(min), js_number(max)),
            v,
        ))
    }
}

/// A value JS gave where a number belongs: the number, or any other value
/// as `String(value)` spells it (never valid: its refusal echoes that).
#[derive(Clone, Debug, PartialEq)]
pub enum NumberArg {
    Number(f64),
    Other(String),
}

impl From<f64> for NumberArg {
    fn from(v: f64) -> Self {
        NumberArg::Number(v)
    }
}

/// `name` must be an integer >= 1.
pub fn integer_at_least_one(name: &str, v: f64) -> Result<i64> {
    if v.fract() == 0.0 && v >= 1.0 {
        Ok(saturating_i64(v))
    } else {
        Err(invalid(name, "an integer >= 1", v))
    }
}

/// `name`, whatever JS value it was given as, must be an integer >= 1.
pub fn integer_arg_at_least_one(name: &str, arg: &NumberArg) -> Result<i64> {
    match arg {
        NumberArg::Number(v) => integer_at_least_one(name, *v),
        NumberArg::Other(spelled) => Err(refused(name, "an integer >= 1", spelled)),
    }
}

/// `name` must be an integer >= 0.
pub fn non_negative_integer(name: &str, v: f64) -> Result<i64> {
    if v.fract() == 0.0 && v >= 0.0 {
        Ok(saturating_i64(v))
    } else {
        Err(invalid(name, "a non-negative integer", v))
    }
}

/// `name` must be >= `min` (NaN is not); Infinity passes.
pub fn at_least(name: &str, v: f64, min: f64) -> Result<f64> {
    if v >= min {
        Ok(v)
    } else {
        Err(invalid(name, &format!(">= {}", js_number(min)), v))
    }
}

/// `name` must be a finite number >= `min`.
pub fn finite_at_least(name: &str, v: f64, min: f64) -> Result<f64> {
    if v.is_finite() {
        at_least(name, v, min)
    } else {
        Err(invalid(name, &format!(">= {}", js_number(min)), v))
    }
}

/// `name` must not be <= 0 (as the API words it, NaN is not refused).
pub fn above_zero(name: &str, v: f64) -> Result<f64> {
    if v <= 0.0 {
        Err(invalid(name, "> 0", v))
    } else {
        Ok(v)
    }
}

/// How JS sends a number JSON cannot carry (`lib/json.js`, `encodeOptions`):
/// `{"cairnq.nonFinite": "NaN"}`, so a number option names it in its refusal
/// and a text option refuses it as the number it is.
pub const NON_FINITE_TAG: &str = "cairnq.nonFinite";

/// An options object as JS hands it over (`lib/json.js`, `encodeOptions`):
/// every option path reads through it, so each refusal is worded once.
/// `null` is absent (as `undefined` is); a key the reader does not know is
/// refused, naming it. Accessors take their key out, so a value is read once.
#[derive(Debug, Default)]
pub struct Options {
    /// Prepended to each field's name in refusals ("rateLimit.").
    prefix: String,
    fields: Map<String, Value>,
}

impl Options {
    /// `text`, a JSON object whose keys are all in `known`.
    pub fn parse(what: &str, text: &str, known: &[&str]) -> Result<Options> {
        let value: Value = serde_json::from_str(text)
            .map_err(|e| Error::Invalid(format!("{what} must be an object: {e}")))?;
        Options::of_value(what, value, known)
    }

    /// `value`, a JSON object whose keys are all in `known`.
    pub fn of_value(what: &str, value: Value, known: &[&str]) -> Result<Options> {
        match value {
            Value::Object(fields) => Options::of(what, "", fields, known),
            other => Err(refused(what, "an object", &shown(Some(&other)))),
        }
    }

    fn of(what: &str, prefix: &str, fields: Map<String, Value>, known: &[&str]) -> Result<Options> {
        if let Some(unknown) = fields.keys().find(|key| !known.contains(&key.as_str())) {
            return Err(Error::Invalid(format!(
                "unknown key \"{unknown}\" in {what} (known: {})",
                known.join(", ")
            )));
        }
        Ok(Options {
            prefix: prefix.to_string(),
            fields,
        })
    }

    /// The field's name as a refusal shows it.
    pub fn field(&self, key: &str) -> String {
        format!("{}{key}", self.prefix)
    }

    /// The value of `key`, `None` when absent or `null`.
    fn take(&mut self, key: &str) -> Option<Value> {
        self.fields.remove(key).filter(|v| !v.is_null())
    }

    fn wrong(&self, key: &str, kind: &str, value: Option<&Value>) -> Error {
        refused(&self.field(key), kind, &shown(value))
    }

    pub fn text(&mut self, key: &str) -> Result<Option<String>> {
        match self.take(key) {
            None => Ok(None),
            Some(Value::String(text)) => Ok(Some(text)),
            Some(other) => Err(self.wrong(key, "a string", Some(&other))),
        }
    }

    /// A JS number: NaN and the infinities included (each check decides).
    pub fn number(&mut self, key: &str) -> Result<Option<f64>> {
        match self.take(key) {
            None => Ok(None),
            Some(value) => number_of(&value)
                .map(Some)
                .ok_or_else(|| self.wrong(key, "a number", Some(&value))),
        }
    }

    /// A number with no fraction (the integers JS numbers hold exactly).
    pub fn integer(&mut self, key: &str) -> Result<Option<i64>> {
        match self.number(key)? {
            None => Ok(None),
            Some(v) if v.fract() == 0.0 && v.abs() <= MAX_SAFE_INTEGER => Ok(Some(v as i64)),
            Some(v) => Err(invalid(&self.field(key), "an integer", v)),
        }
    }

    pub fn bool(&mut self, key: &str) -> Result<Option<bool>> {
        match self.take(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(b)),
            Some(other) => Err(self.wrong(key, "a boolean", Some(&other))),
        }
    }

    /// A nested options object, read by the same rules; its fields named
    /// `key.field` in refusals.
    pub fn object(&mut self, key: &str, known: &[&str]) -> Result<Option<Options>> {
        match self.take(key) {
            None => Ok(None),
            Some(Value::Object(fields)) if non_finite(&fields).is_none() => {
                let field = self.field(key);
                Options::of(&field, &format!("{field}."), fields, known).map(Some)
            }
            Some(other) => Err(self.wrong(key, "an object", Some(&other))),
        }
    }

    /// An array of strings.
    pub fn texts(&mut self, key: &str) -> Result<Option<Vec<String>>> {
        match self.take(key) {
            None => Ok(None),
            Some(Value::Array(items)) => items
                .into_iter()
                .enumerate()
                .map(|(i, item)| match item {
                    Value::String(text) => Ok(text),
                    other => Err(refused(
                        &format!("{}[{i}]", self.field(key)),
                        "a string",
                        &shown(Some(&other)),
                    )),
                })
                .collect::<Result<Vec<String>>>()
                .map(Some),
            Some(other) => Err(self.wrong(key, "an array of strings", Some(&other))),
        }
    }

    /// An object of numbers by name (`resources`, a per-queue
    /// `maxQueueDepth`), each refusal naming `key["name"]`.
    pub fn numbers_by_name(&mut self, key: &str) -> Result<Option<Vec<(String, f64)>>> {
        let field = self.field(key);
        match self.take(key) {
            None => Ok(None),
            Some(Value::Object(entries)) if non_finite(&entries).is_none() => entries
                .into_iter()
                .map(|(name, value)| {
                    let quoted = Value::from(name.as_str()).to_string();
                    match number_of(&value) {
                        Some(v) => Ok((name, v)),
                        None => Err(refused(
                            &format!("{field}[{quoted}]"),
                            "a number",
                            &shown(Some(&value)),
                        )),
                    }
                })
                .collect::<Result<Vec<_>>>()
                .map(Some),
            Some(other) => Err(refused(&field, "an object", &shown(Some(&other)))),
        }
    }

    /// A list of options objects (retention's rules), each read by the same
    /// rules, its fields named `key[i].field`.
    pub fn objects(&mut self, key: &str, known: &[&str]) -> Result<Option<Vec<Options>>> {
        let field = self.field(key);
        match self.take(key) {
            None => Ok(None),
            Some(Value::Array(items)) => items
                .into_iter()
                .enumerate()
                .map(|(i, item)| {
                    let at = format!("{field}[{i}]");
                    match item {
                        Value::Object(fields) if non_finite(&fields).is_none() => {
                            Options::of(&at, &format!("{at}."), fields, known)
                        }
                        other => Err(refused(&at, "an object", &shown(Some(&other)))),
                    }
                })
                .collect::<Result<Vec<_>>>()
                .map(Some),
            Some(other) => Err(refused(&field, "an array", &shown(Some(&other)))),
        }
    }

    /// These options with each field named `prefix` + its key in refusals
    /// (`retention.intervalMs`).
    pub fn named_under(mut self, prefix: &str) -> Options {
        self.prefix = prefix.to_string();
        self
    }

    /// Whether `key` holds an array: for options that take a list or
    /// another form.
    pub fn holds_array(&self, key: &str) -> bool {
        matches!(self.fields.get(key), Some(Value::Array(_)))
    }

    /// Whether `key` holds an object (not a number JSON cannot carry): for
    /// options that take a number or an object of numbers.
    pub fn holds_object(&self, key: &str) -> bool {
        matches!(self.fields.get(key), Some(Value::Object(fields)) if non_finite(fields).is_none())
    }

    /// `text` that must be given (`null` is refused as given).
    pub fn required_text(&mut self, key: &str) -> Result<String> {
        match self.fields.remove(key) {
            Some(Value::String(text)) => Ok(text),
            other => Err(self.wrong(key, "a string", other.as_ref())),
        }
    }

    /// `number` that must be given (`null` is refused as given).
    pub fn required_number(&mut self, key: &str) -> Result<f64> {
        match self.fields.get(key) {
            None | Some(Value::Null) => {
                let given = self.fields.remove(key);
                Err(self.wrong(key, "a number", given.as_ref()))
            }
            Some(_) => Ok(self.number(key)?.expect("present")),
        }
    }
}

/// 2^53 − 1: past it a JS number no longer holds every integer.
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// A JS number: a JSON number, or one JSON cannot carry as JS sent it.
fn number_of(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64(),
        Value::Object(tag) => match non_finite(tag)? {
            "NaN" => Some(f64::NAN),
            "Infinity" => Some(f64::INFINITY),
            "-Infinity" => Some(f64::NEG_INFINITY),
            _ => None,
        },
        _ => None,
    }
}

/// The spelling of a number JSON cannot carry, if `tag` is one.
fn non_finite(tag: &Map<String, Value>) -> Option<&str> {
    if tag.len() == 1 {
        tag.get(NON_FINITE_TAG)?.as_str()
    } else {
        None
    }
}

/// `value`, a JSON array (`submitMany`'s items), refused in the one wording.
pub fn array_of(what: &str, value: Value) -> Result<Vec<Value>> {
    match value {
        Value::Array(items) => Ok(items),
        other => Err(refused(what, "an array", &shown(Some(&other)))),
    }
}

/// A value in a refusal as JS would print it: numbers as `String(n)`,
/// strings quoted, objects and arrays by their kind (they may be large).
fn shown(value: Option<&Value>) -> String {
    match value {
        None => "undefined".into(),
        Some(value) => match number_of(value) {
            Some(v) => js_number(v),
            None => match value {
                Value::Array(_) => "an array".into(),
                Value::Object(_) => "an object".into(),
                scalar => scalar.to_string(),
            },
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(text: &str) -> Options {
        Options::parse("test options", text, &["a", "b", "rate"]).unwrap()
    }

    #[test]
    fn options_read_each_kind_with_null_as_absent() {
        let mut o =
            options(r#"{"a":"x","b":null,"rate":{"a":2.5,"b":{"cairnq.nonFinite":"-Infinity"}}}"#);
        assert_eq!(o.text("a").unwrap(), Some("x".into()));
        assert_eq!(o.number("b").unwrap(), None);
        assert_eq!(o.bool("missing").unwrap(), None);
        let mut rate = o.object("rate", &["a", "b"]).unwrap().unwrap();
        assert_eq!(rate.number("a").unwrap(), Some(2.5));
        assert_eq!(rate.number("b").unwrap(), Some(f64::NEG_INFINITY));
        let mut o = options(r#"{"a":{"cairnq.nonFinite":"NaN"},"b":[ "q" ]}"#);
        assert!(o.number("a").unwrap().unwrap().is_nan());
        assert_eq!(o.texts("b").unwrap(), Some(vec!["q".to_string()]));
        assert_eq!(options(r#"{"a":7}"#).integer("a").unwrap(), Some(7));
        assert_eq!(options(r#"{"a":true}"#).bool("a").unwrap(), Some(true));
    }

    #[test]
    fn options_word_every_refusal_alike() {
        let refusal = |text: &str, read: Read| read(&mut options(text)).unwrap_err().to_string();
        type Read = fn(&mut Options) -> Result<()>;
        let cases: [(&str, Read, &str); 13] = [
            (
                r#"{"a":5}"#,
                |o| o.text("a").map(drop),
                "a must be a string, got 5",
            ),
            (
                r#"{"a":{"cairnq.nonFinite":"NaN"}}"#,
                |o| o.text("a").map(drop),
                "a must be a string, got NaN",
            ),
            (
                r#"{"a":"3"}"#,
                |o| o.number("a").map(drop),
                "a must be a number, got \"3\"",
            ),
            (
                r#"{"a":true}"#,
                |o| o.number("a").map(drop),
                "a must be a number, got true",
            ),
            (
                r#"{"a":1.5}"#,
                |o| o.integer("a").map(drop),
                "a must be an integer, got 1.5",
            ),
            (
                r#"{"a":{"cairnq.nonFinite":"Infinity"}}"#,
                |o| o.integer("a").map(drop),
                "a must be an integer, got Infinity",
            ),
            (
                r#"{"a":"yes"}"#,
                |o| o.bool("a").map(drop),
                "a must be a boolean, got \"yes\"",
            ),
            (
                r#"{"a":[1]}"#,
                |o| o.object("a", &[]).map(drop),
                "a must be an object, got an array",
            ),
            (
                r#"{"rate":{"c":1}}"#,
                |o| o.object("rate", &["a"]).map(drop),
                "unknown key \"c\" in rate (known: a)",
            ),
            (
                r#"{"rate":{"a":"x"}}"#,
                |o| o.object("rate", &["a"])?.unwrap().number("a").map(drop),
                "rate.a must be a number, got \"x\"",
            ),
            (
                r#"{"a":null}"#,
                |o| o.required_text("a").map(drop),
                "a must be a string, got null",
            ),
            (
                r#"{"b":["x",2]}"#,
                |o| o.texts("b").map(drop),
                "b[1] must be a string, got 2",
            ),
            (
                r#"{"b":{"gpu":"2"}}"#,
                |o| o.numbers_by_name("b").map(drop),
                "b[\"gpu\"] must be a number, got \"2\"",
            ),
        ];
        for (text, read, message) in cases {
            assert_eq!(refusal(text, read), message, "{text}");
        }
        assert_eq!(
            Options::parse("test options", r#"{"z":1}"#, &["a"])
                .unwrap_err()
                .to_string(),
            "unknown key \"z\" in test options (known: a)"
        );
        assert_eq!(
            Options::parse("test options", "[]", &["a"])
                .unwrap_err()
                .to_string(),
            "test options must be an object, got an array"
        );
    }

    #[test]
    fn durations_follow_one_rule_each() {
        assert_eq!(duration_ms(f64::NAN), Duration::ZERO);
        assert_eq!(duration_ms(-5.0), Duration::ZERO);
        assert_eq!(duration_ms(250.0), Duration::from_millis(250));
        assert!(duration_ms(f64::INFINITY) > Duration::from_secs(1_000_000_000));
        assert_eq!(timer_ms(f64::INFINITY), Duration::ZERO);
        assert_eq!(timer_ms(3e9), Duration::ZERO);
        assert_eq!(timer_ms(20.0), Duration::from_millis(20));
    }

    #[test]
    fn stored_durations_are_finite_and_bounded() {
        assert_eq!(stored_ms("leaseMs", 1500.9).unwrap(), 1500);
        assert_eq!(stored_ms("leaseMs", -5.0).unwrap(), -5);
        assert_eq!(
            stored_ms("leaseMs", FOREVER_MS).unwrap(),
            1_000_000_000_000_000
        );
        for bad in [
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            1e300,
            FOREVER_MS + 1.0,
        ] {
            let message = stored_ms("runAtDelayMs", bad).unwrap_err().to_string();
            assert_eq!(
                message,
                format!(
                    "runAtDelayMs must be a finite number of milliseconds, at most 1e15 (about 31,700 years), got {}",
                    js_number(bad)
                )
            );
        }
        assert_eq!(stored_ms_or("delayMs", None, 7).unwrap(), 7);
    }

    #[test]
    fn checks_word_their_refusals_alike() {
        let message = |r: Result<i64>| r.unwrap_err().to_string();
        assert_eq!(
            message(integer_at_least_one("batch", 1.5)),
            "batch must be an integer >= 1, got 1.5"
        );
        assert_eq!(
            message(non_negative_integer("maxDepth", -1.0)),
            "maxDepth must be a non-negative integer, got -1"
        );
        assert_eq!(
            at_least("maxAttempts", f64::NAN, 1.0)
                .unwrap_err()
                .to_string(),
            "maxAttempts must be >= 1, got NaN"
        );
        assert!(at_least("olderThanMs", f64::INFINITY, 0.0).is_ok());
        assert_eq!(
            finite_at_least("retention.intervalMs", f64::INFINITY, 1.0)
                .unwrap_err()
                .to_string(),
            "retention.intervalMs must be >= 1, got Infinity"
        );
        assert_eq!(
            above_zero("maxRunMs", 0.0).unwrap_err().to_string(),
            "maxRunMs must be > 0, got 0"
        );
        assert!(above_zero("maxRunMs", f64::NAN).is_ok());
    }

    #[test]
    fn names_are_non_empty_and_bounded_in_bytes() {
        assert!(name_field("name", "send").is_ok());
        assert!(name_field("queue", &"é".repeat(MAX_NAME_BYTES / 2)).is_ok());
        assert_eq!(
            name_field("queue", "").unwrap_err().to_string(),
            "queue must be a non-empty string, got \"\""
        );
        assert_eq!(
            name_field("step id", &"é".repeat(MAX_NAME_BYTES / 2 + 1))
                .unwrap_err()
                .to_string(),
            "step id must be at most 512 bytes of UTF-8, got 514 bytes"
        );
    }

    #[test]
    fn priorities_fit_the_column() {
        assert_eq!(priority(2.7).unwrap(), 2);
        assert_eq!(priority(-2147483648.5).unwrap(), -2147483648);
        assert_eq!(priority(2147483647.0).unwrap(), 2147483647);
        for bad in [99999999999.0, -2147483649.0, f64::NAN, f64::INFINITY] {
            assert_eq!(
                priority(bad).unwrap_err().to_string(),
                format!(
                    "priority must be a number from -2147483648 to 2147483647, got {}",
                    js_number(bad)
                )
            );
        }
    }
}
