//! A registration's flow options (docs/api.md, "Flow control"): `rateLimit`
//! and `groupConcurrency` checked, each refusal naming its field, before
//! anything is declared.

use super::{FlowLimits, RateLimit};
use crate::error::Result;
use crate::input::{at_least, integer_at_least_one, name_field, stored_ms, Options};

/// The keys `rateLimit` may have.
const RATE_LIMIT_KEYS: [&str; 4] = ["key", "max", "perMs", "perGroup"];

/// The options that declare limits.
pub const KEYS: [&str; 2] = ["rateLimit", "groupConcurrency"];

/// `rateLimit` and `groupConcurrency` of a registration's options. `None`
/// when it declares neither.
pub fn read(fields: &mut Options) -> Result<Option<FlowLimits>> {
    let (rate, rate_key) = match fields.object("rateLimit", &RATE_LIMIT_KEYS)? {
        None => (None, None),
        Some(mut rate) => {
            let key = rate.text("key")?;
            if let Some(key) = &key {
                name_field("rateLimit.key", key)?;
            }
            (Some(rate_limit(&mut rate)?), key)
        }
    };
    let group_concurrency = match fields.number("groupConcurrency")? {
        None => None,
        Some(v) => Some(integer_at_least_one("groupConcurrency", v)?),
    };
    if rate.is_none() && group_concurrency.is_none() {
        return Ok(None);
    }
    Ok(Some(FlowLimits {
        rate,
        rate_key,
        group_concurrency,
    }))
}

fn rate_limit(fields: &mut Options) -> Result<RateLimit> {
    let max = integer_at_least_one("rateLimit.max", fields.required_number("max")?)?;
    let per_ms = fields.required_number("perMs")?;
    let per_ms = stored_ms("rateLimit.perMs", at_least("rateLimit.perMs", per_ms, 1.0)?)?;
    let per_group = fields.bool("perGroup")?.unwrap_or(false);
    Ok(RateLimit {
        max,
        per_ms,
        per_group,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(options: &str) -> Result<Option<FlowLimits>> {
        read(&mut Options::parse("registration options", options, &KEYS)?)
    }

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
                rate_key: None,
                group_concurrency: Some(2),
            }
        );
        let keyed = parse(r#"{"rateLimit":{"key":"openai","max":5,"perMs":60000}}"#)
            .unwrap()
            .unwrap();
        assert_eq!(keyed.rate_key.as_deref(), Some("openai"));
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
                r#"{"rateLimit":{"max":{"cairnq.nonFinite":"NaN"},"perMs":1000}}"#,
                "rateLimit.max must be an integer >= 1, got NaN",
            ),
            (
                r#"{"rateLimit":{"max":"5","perMs":1000}}"#,
                "rateLimit.max must be a number, got \"5\"",
            ),
            (
                r#"{"rateLimit":{"perMs":1000}}"#,
                "rateLimit.max must be a number, got undefined",
            ),
            (
                r#"{"rateLimit":{"max":5,"perMs":0.5}}"#,
                "rateLimit.perMs must be >= 1, got 0.5",
            ),
            (
                r#"{"rateLimit":{"max":5,"perMs":{"cairnq.nonFinite":"NaN"}}}"#,
                "rateLimit.perMs must be >= 1, got NaN",
            ),
            (
                r#"{"rateLimit":{"max":5,"perMs":{"cairnq.nonFinite":"Infinity"}}}"#,
                "rateLimit.perMs must be a finite number of milliseconds, at most 1e15 (about 31,700 years), got Infinity",
            ),
            (
                r#"{"rateLimit":{"max":5}}"#,
                "rateLimit.perMs must be a number, got undefined",
            ),
            (
                r#"{"rateLimit":{"max":5,"perMs":10,"perGroup":"yes"}}"#,
                "rateLimit.perGroup must be a boolean, got \"yes\"",
            ),
            (
                r#"{"rateLimit":{"max":5,"perMs":10,"window":3}}"#,
                "unknown key \"window\" in rateLimit (known: key, max, perMs, perGroup)",
            ),
            (
                r#"{"rateLimit":{"key":"","max":5,"perMs":10}}"#,
                "rateLimit.key must be a non-empty string, got \"\"",
            ),
            (
                r#"{"rateLimit":{"key":7,"max":5,"perMs":10}}"#,
                "rateLimit.key must be a string, got 7",
            ),
            (
                r#"{"rateLimit":{"key":"openai","max":0,"perMs":10}}"#,
                "rateLimit.max must be an integer >= 1, got 0",
            ),
            (
                r#"{"rateLimit":60}"#,
                "rateLimit must be an object, got 60",
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
                "groupConcurrency must be a number, got \"2\"",
            ),
            (
                r#"{"groupConcurrency":{"cairnq.nonFinite":"Infinity"}}"#,
                "groupConcurrency must be an integer >= 1, got Infinity",
            ),
        ] {
            assert_eq!(refusal(options), message, "{options}");
        }
    }
}
