//! Input as JavaScript hands it over: numbers are `f64` with NaN and the
//! infinities, and options are checked here, in one wording (the value
//! echoed as JS prints it, `error::js_number`).

use std::time::Duration;

use crate::error::{js_number, Error, Result};

mod metadata;
mod options;
mod refusal;
pub use metadata::metadata_with;
pub use options::{array_of, Options, NON_FINITE_TAG};
use refusal::invalid;

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

/// `name` must be an integer >= 1.
pub fn integer_at_least_one(name: &str, v: f64) -> Result<i64> {
    if v.fract() == 0.0 && v >= 1.0 {
        Ok(saturating_i64(v))
    } else {
        Err(invalid(name, "an integer >= 1", v))
    }
}

/// `name` must be a point in time as epoch milliseconds (JS sends a `Date`
/// as its `getTime()`).
pub fn epoch_ms(name: &str, v: f64) -> Result<i64> {
    // 8.64e15: the latest time a JS Date holds.
    if v.fract() == 0.0 && (0.0..=8.64e15).contains(&v) {
        Ok(v as i64)
    } else {
        Err(invalid(
            name,
            "a valid Date or epoch milliseconds (an integer >= 0)",
            v,
        ))
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

/// `name` must be a number > 0 (NaN is not; Infinity passes).
pub fn positive(name: &str, v: f64) -> Result<f64> {
    if v > 0.0 {
        Ok(v)
    } else {
        Err(invalid(name, "> 0", v))
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
