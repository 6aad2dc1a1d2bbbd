//! The options reader: an options object as JS hands it over
//! (`lib/json.js`, `encodeOptions`), read field by field in the one wording
//! of `input`'s refusals.

use serde_json::{Map, Value};

use super::refusal::{invalid, refused};
use crate::error::{js_number, Error, Result};

/// How JS sends a number JSON cannot carry (`lib/json.js`, `encodeOptions`):
/// `{"cairnq.nonFinite": "NaN"}`, so a number option names it in its refusal
/// and a text option refuses it as the number it is.
pub const NON_FINITE_TAG: &str = "cairnq.nonFinite";

/// How JS sends a function where an option takes one (`lib/retry.js`):
/// `{"cairnq.function": true}`, which JSON would otherwise drop unseen.
pub const FUNCTION_TAG: &str = "cairnq.function";

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

    /// Whether `key` is given (not absent, not `null`).
    pub fn holds(&self, key: &str) -> bool {
        self.fields.get(key).is_some_and(|v| !v.is_null())
    }

    /// Whether `key` holds a function as JS tagged it (`FUNCTION_TAG`); the
    /// tag is taken out.
    pub fn take_function(&mut self, key: &str) -> bool {
        let tagged = matches!(self.fields.get(key), Some(Value::Object(tag))
            if tag.len() == 1 && tag.get(FUNCTION_TAG) == Some(&Value::Bool(true)));
        if tagged {
            self.fields.remove(key);
        }
        tagged
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
