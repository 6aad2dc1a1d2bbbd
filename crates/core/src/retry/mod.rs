//! Retry policies per registration and per submit (docs/api.md, "Retry
//! policy"): `retry: {attempts, backoff, baseMs, maxMs}`. A submit's
//! `attempts` is the protocol's `max_attempts` column (shared with the
//! Python SDK); its backoff travels in the task's metadata
//! (`"cairnq.retry"`), which other SDKs' workers ignore. A registration's
//! `attempts` caps the attempts of its name's tasks in this worker. A
//! registration's `backoff` may be a function of the attempt and the error:
//! JS calls it where the handler runs and hands the core its value
//! (`function_delay_ms`); a submit's cannot be one, as it is stored.

use serde_json::{json, Value};

use crate::backoff::{Backoff, BackoffKind};
use crate::error::{Error, Result};
use crate::input::{at_least, integer_at_least_one, metadata_with, stored_ms, Options};
use crate::task::Task;

/// Where a task's metadata holds the backoff it was submitted with.
pub const RETRY_METADATA_KEY: &str = "cairnq.retry";

const KEYS: [&str; 4] = ["attempts", "backoff", "baseMs", "maxMs"];

/// `retry` as JS sends it; `None` = absent.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RetrySpec {
    pub attempts: Option<f64>,
    pub backoff: Option<String>,
    pub base_ms: Option<f64>,
    pub max_ms: Option<f64>,
    /// `backoff` is a function (JS keeps it; `lib/retry.js`).
    pub backoff_function: bool,
}

impl RetrySpec {
    /// The `retry` object of `options`, its keys refused as `retry.<key>`.
    pub fn read(options: &mut Options) -> Result<Option<RetrySpec>> {
        let Some(mut fields) = options.object("retry", &KEYS)? else {
            return Ok(None);
        };
        let backoff_function = fields.take_function("backoff");
        Ok(Some(RetrySpec {
            backoff_function,
            attempts: fields.number("attempts")?,
            backoff: fields.text("backoff")?,
            base_ms: fields.number("baseMs")?,
            max_ms: fields.number("maxMs")?,
        }))
    }

    /// Checked: the attempts (an integer >= 1) and, when any of `backoff`,
    /// `baseMs`, `maxMs` is given, the backoff, what is not given taken
    /// from `inherited`. A function computes the delay itself: `baseMs` and
    /// `maxMs` are refused beside it.
    pub fn check(&self, inherited: Backoff) -> Result<RetryPolicy> {
        let attempts = self
            .attempts
            .map(|v| integer_at_least_one("retry.attempts", v))
            .transpose()?;
        if self.backoff_function {
            if let Some(field) = [("baseMs", self.base_ms), ("maxMs", self.max_ms)]
                .iter()
                .find_map(|(field, v)| v.map(|_| field))
            {
                return Err(Error::Invalid(format!(
                    "retry.{field} does not apply to a backoff function: it returns the delay itself"
                )));
            }
        }
        let given = self.backoff.is_some() || self.base_ms.is_some() || self.max_ms.is_some();
        if !given {
            return Ok(RetryPolicy {
                attempts,
                backoff: None,
                function: self.backoff_function,
            });
        }
        let kind = match self.backoff.as_deref() {
            None => inherited.kind,
            Some(name) => BackoffKind::parse(name).ok_or_else(|| {
                Error::Invalid(format!(
                    "retry.backoff must be \"exponential\" or \"fixed\", got {}",
                    serde_json::to_string(name).expect("a string encodes")
                ))
            })?,
        };
        let ms = |name, v: Option<f64>, default: f64| -> Result<f64> {
            v.map_or(Ok(default), |v| stored_ms(name, v).map(|ms| ms as f64))
        };
        let backoff = Backoff {
            kind,
            base_ms: ms("retry.baseMs", self.base_ms, inherited.base_ms)?,
            max_ms: ms("retry.maxMs", self.max_ms, inherited.max_ms)?,
        };
        Ok(RetryPolicy {
            attempts,
            backoff: Some(backoff),
            function: false,
        })
    }
}

/// A checked `retry`: the attempts, and the backoff when it sets one.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RetryPolicy {
    pub attempts: Option<i64>,
    pub backoff: Option<Backoff>,
    /// The backoff is the registration's function (JS calls it).
    pub function: bool,
}

/// The delay a backoff function returned for a retry (JS hands over NaN for
/// a value that is not a number, or a function that threw): a stored
/// duration >= 0, else refused, naming what it returned.
pub fn function_delay_ms(v: f64) -> Result<i64> {
    let refused = |_| {
        Error::Invalid(format!(
            "retry.backoff returned {}: a delay must be a finite number of milliseconds >= 0",
            crate::error::js_number(v)
        ))
    };
    at_least("retry.backoff", v, 0.0).map_err(refused)?;
    stored_ms("retry.backoff", v).map_err(refused)
}

/// A submit's `max_attempts` and metadata under `retry` (`max_attempts` the
/// submit's own `maxAttempts`): refused, naming the field, when both set
/// the attempts, or when the metadata is not an object.
pub fn submitted(
    spec: Option<&RetrySpec>,
    max_attempts: Option<f64>,
    metadata: Option<String>,
) -> Result<(Option<f64>, Option<String>)> {
    let Some(spec) = spec else {
        return Ok((max_attempts, metadata));
    };
    if spec.backoff_function {
        return Err(Error::Invalid(
            "retry.backoff: a submit's retry is stored with the task and cannot hold a function; \
             give the function in worker.task's retry, where the handler runs"
                .into(),
        ));
    }
    let policy = spec.check(Backoff::default())?;
    if policy.attempts.is_some() && max_attempts.is_some() {
        return Err(Error::Invalid(
            "retry.attempts and maxAttempts both set the task's attempts: give one".into(),
        ));
    }
    let attempts = policy.attempts.map(|a| a as f64).or(max_attempts);
    let Some(backoff) = policy.backoff else {
        return Ok((attempts, metadata));
    };
    let stored = json!({
        "backoff": backoff.kind.as_str(),
        "baseMs": backoff.base_ms,
        "maxMs": backoff.max_ms,
    });
    let metadata = metadata_with(metadata, "retry", RETRY_METADATA_KEY, stored)?;
    Ok((attempts, metadata))
}

/// The backoff `task` was submitted with. Most metadata is `{}`: the
/// substring test keeps the JSON parse off the claim path.
pub fn submitted_backoff(task: &Task) -> Option<Backoff> {
    if !task.metadata.contains(RETRY_METADATA_KEY) {
        return None;
    }
    let metadata: Value = serde_json::from_str(&task.metadata).ok()?;
    let stored = metadata.get(RETRY_METADATA_KEY)?;
    Some(Backoff {
        kind: BackoffKind::parse(stored.get("backoff")?.as_str()?)?,
        base_ms: stored.get("baseMs")?.as_f64()?,
        max_ms: stored.get("maxMs")?.as_f64()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(attempts: Option<f64>, backoff: Option<&str>, base_ms: Option<f64>) -> RetrySpec {
        RetrySpec {
            attempts,
            backoff: backoff.map(Into::into),
            base_ms,
            max_ms: None,
            backoff_function: false,
        }
    }

    #[test]
    fn a_backoff_function_is_the_registrations_alone() {
        let function = RetrySpec {
            backoff_function: true,
            ..spec(Some(3.0), None, None)
        };
        let policy = function.check(Backoff::default()).unwrap();
        assert!(policy.function && policy.backoff.is_none());
        assert_eq!(policy.attempts, Some(3));
        let with_base = RetrySpec {
            backoff_function: true,
            ..spec(None, None, Some(5.0))
        };
        assert_eq!(
            with_base.check(Backoff::default()).unwrap_err().to_string(),
            "retry.baseMs does not apply to a backoff function: it returns the delay itself"
        );
        assert!(submitted(Some(&function), None, None)
            .unwrap_err()
            .to_string()
            .starts_with("retry.backoff: a submit's retry is stored with the task"));
        assert_eq!(function_delay_ms(250.4).unwrap(), 250);
        assert_eq!(function_delay_ms(0.0).unwrap(), 0);
        for bad in [-1.0, f64::NAN, f64::INFINITY] {
            assert!(function_delay_ms(bad)
                .unwrap_err()
                .to_string()
                .starts_with("retry.backoff returned "));
        }
    }

    #[test]
    fn a_policy_is_checked_and_fills_what_is_not_given() {
        let inherited = Backoff {
            base_ms: 200.0,
            ..Backoff::default()
        };
        assert_eq!(
            spec(Some(2.0), None, None).check(inherited).unwrap(),
            RetryPolicy {
                attempts: Some(2),
                backoff: None,
                function: false,
            }
        );
        let fixed = spec(None, Some("fixed"), None).check(inherited).unwrap();
        assert_eq!(
            fixed.backoff,
            Some(Backoff {
                kind: BackoffKind::Fixed,
                ..inherited
            })
        );
        let refused = |s: RetrySpec| s.check(inherited).unwrap_err().to_string();
        assert_eq!(
            refused(spec(Some(0.5), None, None)),
            "retry.attempts must be an integer >= 1, got 0.5"
        );
        assert_eq!(
            refused(spec(None, Some("linear"), None)),
            "retry.backoff must be \"exponential\" or \"fixed\", got \"linear\""
        );
        assert_eq!(
            refused(spec(None, None, Some(f64::INFINITY))),
            "retry.baseMs must be a finite number of milliseconds, at most 1e15 (about 31,700 years), got Infinity"
        );
    }

    #[test]
    fn a_submitted_policy_goes_to_the_column_and_the_metadata() {
        let given = spec(Some(5.0), Some("fixed"), Some(250.0));
        let (attempts, metadata) =
            submitted(Some(&given), None, Some(r#"{"a":1}"#.into())).unwrap();
        assert_eq!(attempts, Some(5.0));
        let task = Task {
            metadata: metadata.unwrap(),
            ..crate::task::tests::sample()
        };
        assert_eq!(
            submitted_backoff(&task),
            Some(Backoff {
                kind: BackoffKind::Fixed,
                base_ms: 250.0,
                max_ms: 30_000.0
            })
        );
        assert_eq!(
            submitted(Some(&spec(Some(2.0), None, None)), Some(3.0), None)
                .unwrap_err()
                .to_string(),
            "retry.attempts and maxAttempts both set the task's attempts: give one"
        );
        assert_eq!(
            submitted(Some(&spec(Some(2.0), None, None)), None, None).unwrap(),
            (Some(2.0), None),
            "attempts alone leave the metadata alone"
        );
        assert_eq!(submitted_backoff(&crate::task::tests::sample()), None);
    }
}
