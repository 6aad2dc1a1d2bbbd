//! A registration's flow options (docs/api.md, "Flow control"): `rateLimit`
//! and `groupConcurrency` checked, each refusal naming its field, before
//! anything is declared.

use serde_json::{Map, Value};

use super::{FlowLimits, RateLimit};
use crate::error::{js_number, Error, Result};
use crate::input::{integer_at_least_one, stored_ms};

/// The keys `rateLimit` may have.
const RATE_LIMIT_KEYS: [&str; 3] = ["max", "perMs", "perGroup"];

/// `options` is the JSON object `{rateLimit?, groupConcurrency?}` as the JS
/// layer encodes it (non-finite numbers spelled as text: `"NaN"`,
/// `"Infinity"`). `None` when it declares neither.
pub fn parse(options: &str) -> Result<Option<FlowLimits>> {
    let fields: Map<String, Value> = serde_json::from_str(options)
        .map_err(|e| Error::Invalid(format!("flow options must be an object: {e}")))?;
    let rate = match fields.get("rateLimit") {
        None | Some(Value::Null) => None,
        Some(Value::Object(rate)) => Some(rate_limit(rate)?),
        Some(other) => {
            return Err(Error::Invalid(format!(
                "rateLimit must be an object {{ max, perMs, perGroup? }}, got {}",
                shown(other)
            )))
        }
    };
    let group_concurrency = match fields.get("groupConcurrency") {
        None | Some(Value::Null) => None,
        Some(value) => Some(integer_at_least_one(
            "groupConcurrency",
            number("groupConcurrency", value, "an integer >= 1")?,
        )?),
    };
    if rate.is_none() && group_concurrency.is_none() {
        return Ok(None);
    }
    Ok(Some(FlowLimits {
        rate,
        group_concurrency,
    }))
}

fn rate_limit(fields: &Map<String, Value>) -> Result<RateLimit> {
    if let Some(unknown) = fields
        .keys()
        .find(|key| !RATE_LIMIT_KEYS.contains(&key.as_str()))
    {
        return Err(Error::Invalid(format!(
            "rateLimit has an unknown key \"{unknown}\" (known: max, perMs, perGroup)"
        )));
    }
    let required = |key: &str, rule: &str| -> Result<f64> {
        match fields.get(key) {
            None | Some(Value::Null) => Err(Error::Invalid(format!(
                "rateLimit.{key} must be {rule}, got undefined"
            ))),
            Some(value) => number(&format!("rateLimit.{key}"), value, rule),
        }
    };
    let max = integer_at_least_one("rateLimit.max", required("max", "an integer >= 1")?)?;
    let per_ms = required("perMs", ">= 1")?;
    if per_ms.is_nan() || per_ms < 1.0 {
        return Err(Error::Invalid(format!(
            "rateLimit.perMs must be >= 1, got {}",
            js_number(per_ms)
        )));
    }
    let per_ms = stored_ms("rateLimit.perMs", per_ms)?;
    let per_group = match fields.get("perGroup") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(per_group)) => *per_group,
        Some(other) => {
            return Err(Error::Invalid(format!(
                "rateLimit.perGroup must be a boolean, got {}",
                shown(other)
            )))
        }
    };
    Ok(RateLimit {
        max,
        per_ms,
        per_group,
    })
}

/// A number as JS gave it (non-finite ones spelled), else a refusal naming
/// `field` and its `rule`.
fn number(field: &str, value: &Value, rule: &str) -> Result<f64> {
    match value {
        Value::Number(n) => Ok(n.as_f64().unwrap_or(f64::NAN)),
        Value::String(s) if s == "NaN" => Ok(f64::NAN),
        Value::String(s) if s == "Infinity" => Ok(f64::INFINITY),
        Value::String(s) if s == "-Infinity" => Ok(f64::NEG_INFINITY),
        other => Err(Error::Invalid(format!(
            "{field} must be {rule}, got {}",
            shown(other)
        ))),
    }
}

/// A value in a message: numbers as JS prints them, anything else as JSON.
fn shown(value: &Value) -> String {
    match value {
        Value::Number(n) => js_number(n.as_f64().unwrap_or(f64::NAN)),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(options: &str) -> String {
        parse(options).unwrap_err().to_string()
    }

    #[test]
    fn options_are_read_with_their_defaults() {
        assert_eq!(parse("{}").unwrap(), None);
        assert_eq!(parse(r#"{"rateLimit":null}"#).unwrap(), None);
        let limits = parse(r#"{"rateLimit":{"max":20,"perMs":1000.7},"groupConcurrency":2}"#)
            .unwrap()
            .unwrap();
        assert_eq!(
            limits,
            FlowLimits {
                rate: Some(RateLimit {
                    max: 20,
                    per_ms: 1_000,
                    per_group: false
                }),
                group_concurrency: Some(2),
            }
        );
        let per_group = parse(r#"{"rateLimit":{"max":1,"perMs":1,"perGroup":true}}"#)
            .unwrap()
            .unwrap();
        assert!(per_group.rate.unwrap().per_group);
    }

    #[test]
    fn bad_options_are_refused_naming_the_field() {
        for (options, message) in [
            (
                r#"{"rateLimit":{"max":0,"perMs":1000}}"#,
                "rateLimit.max must be an integer >= 1, got 0",
            ),
            (
                r#"{"rateLimit":{"max":-3,"perMs":1000}}"#,
                "rateLimit.max must be an integer >= 1, got -3",
            ),
            (
                r#"{"rateLimit":{"max":1.5,"perMs":1000}}"#,
                "rateLimit.max must be an integer >= 1, got 1.5",
            ),
            (
                r#"{"rateLimit":{"max":"NaN","perMs":1000}}"#,
                "rateLimit.max must be an integer >= 1, got NaN",
            ),
            (
                r#"{"rateLimit":{"max":"5","perMs":1000}}"#,
                "rateLimit.max must be an integer >= 1, got \"5\"",
            ),
            (
                r#"{"rateLimit":{"perMs":1000}}"#,
                "rateLimit.max must be an integer >= 1, got undefined",
            ),
            (
                r#"{"rateLimit":{"max":5,"perMs":0.5}}"#,
                "rateLimit.perMs must be >= 1, got 0.5",
            ),
            (
                r#"{"rateLimit":{"max":5,"perMs":"NaN"}}"#,
                "rateLimit.perMs must be >= 1, got NaN",
            ),
            (
                r#"{"rateLimit":{"max":5,"perMs":"Infinity"}}"#,
                "rateLimit.perMs must be a finite number of milliseconds, at most 1e15 (about 31,700 years), got Infinity",
            ),
            (
                r#"{"rateLimit":{"max":5}}"#,
                "rateLimit.perMs must be >= 1, got undefined",
            ),
            (
                r#"{"rateLimit":{"max":5,"perMs":10,"perGroup":"yes"}}"#,
                "rateLimit.perGroup must be a boolean, got \"yes\"",
            ),
            (
                r#"{"rateLimit":{"max":5,"perMs":10,"window":3}}"#,
                "rateLimit has an unknown key \"window\" (known: max, perMs, perGroup)",
            ),
            (
                r#"{"rateLimit":60}"#,
                "rateLimit must be an object { max, perMs, perGroup? }, got 60",
            ),
            (
                r#"{"groupConcurrency":0}"#,
                "groupConcurrency must be an integer >= 1, got 0",
            ),
            (
                r#"{"groupConcurrency":2.5}"#,
                "groupConcurrency must be an integer >= 1, got 2.5",
            ),
            (
                r#"{"groupConcurrency":"2"}"#,
                "groupConcurrency must be an integer >= 1, got \"2\"",
            ),
            (
                r#"{"groupConcurrency":"Infinity"}"#,
                "groupConcurrency must be an integer >= 1, got Infinity",
            ),
        ] {
            assert_eq!(refusal(options), message, "{options}");
        }
    }
}
