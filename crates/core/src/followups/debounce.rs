//! Debounced submit's checks (docs/api.md, "Debounce"): `debounceMs` and
//! `maxDelayMs` of a submit as the window a keyed insert applies
//! (docs/protocol.md, "Debounced submit"); and the release of the follow-ups
//! it holds back, which each worker's clock runs.

use super::window::Debounce;
use crate::error::{js_number, Error, Result};
use crate::input::{finite_at_least, stored_ms, FOREVER_MS};
use crate::store::backend::Backend;

/// A submit's fields that a debounce window involves.
pub struct DebounceInput<'a> {
    pub debounce_ms: Option<f64>,
    pub max_delay_ms: Option<f64>,
    pub key: Option<&'a str>,
    pub conflict: Option<&'a str>,
    pub run_at_delay_ms: Option<f64>,
}

/// The submit's debounce window, `None` for an ordinary submit. Refuses, naming
/// the field: `debounceMs` without `key`, with a `conflict` other than the
/// default or with `runAtDelayMs` (the window sets the start); either duration
/// not a finite number >= 1; `maxDelayMs` without `debounceMs` or below it.
pub fn debounce_of(input: &DebounceInput) -> Result<Option<Debounce>> {
    let Some(window) = input.debounce_ms else {
        return match input.max_delay_ms {
            Some(_) => Err(Error::Invalid("maxDelayMs requires debounceMs".into())),
            None => Ok(None),
        };
    };
    let window_ms = duration("debounceMs", window)?;
    if input.key.is_none() {
        return Err(Error::Invalid("debounceMs requires a key".into()));
    }
    if let Some(conflict) = input.conflict.filter(|c| *c != "reuse") {
        return Err(Error::Invalid(format!(
            "conflict cannot be {conflict} with debounceMs (a debounced submit has its own rule)"
        )));
    }
    if input.run_at_delay_ms.is_some() {
        return Err(Error::Invalid(
            "runAtDelayMs cannot be combined with debounceMs (the window sets the start)".into(),
        ));
    }
    let max_delay_ms = match input.max_delay_ms {
        None => FOREVER_MS as i64,
        Some(v) => {
            let max_delay_ms = duration("maxDelayMs", v)?;
            if max_delay_ms < window_ms {
                return Err(Error::Invalid(format!(
                    "maxDelayMs must be >= debounceMs ({window_ms}), got {}",
                    js_number(v)
                )));
            }
            max_delay_ms
        }
    };
    Ok(Some(Debounce {
        window_ms,
        max_delay_ms,
    }))
}

/// A worker's release of held-back follow-ups (docs/protocol.md, "Debounced
/// submit"): its clock runs it once a tick, so a follow-up starts within a
/// tick of the end of the task it follows, whoever ended it (any SDK's
/// worker, a cancel, lease recovery).
#[derive(Default)]
pub struct FollowupRelease {
    /// Once seen, the table stays; until then one catalog read a tick.
    installed: bool,
}

impl FollowupRelease {
    /// Release what is due; how many follow-ups became due.
    pub async fn run(&mut self, backend: &dyn Backend) -> Result<u64> {
        if !self.installed {
            self.installed = backend.followups_installed().await?;
            if !self.installed {
                return Ok(0);
            }
        }
        backend.release_followups().await
    }
}

/// A finite number of milliseconds >= 1 that the database can add to its clock.
fn duration(name: &str, v: f64) -> Result<i64> {
    finite_at_least(name, v, 1.0)?;
    stored_ms(name, v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(
        key: Option<&'static str>,
        debounce: Option<f64>,
        max_delay: Option<f64>,
    ) -> DebounceInput<'static> {
        DebounceInput {
            debounce_ms: debounce,
            max_delay_ms: max_delay,
            key,
            conflict: None,
            run_at_delay_ms: None,
        }
    }

    fn refusal(input: DebounceInput) -> String {
        debounce_of(&input).unwrap_err().to_string()
    }

    #[test]
    fn a_window_needs_a_key_and_sane_durations() {
        assert_eq!(debounce_of(&input(None, None, None)).unwrap(), None);
        assert_eq!(
            debounce_of(&input(Some("k"), Some(2000.0), Some(10_000.0))).unwrap(),
            Some(Debounce {
                window_ms: 2000,
                max_delay_ms: 10_000
            })
        );
        assert_eq!(
            debounce_of(&input(Some("k"), Some(5.0), None))
                .unwrap()
                .unwrap()
                .max_delay_ms,
            FOREVER_MS as i64
        );
        assert_eq!(
            refusal(input(None, Some(10.0), None)),
            "debounceMs requires a key"
        );
        assert_eq!(
            refusal(input(Some("k"), None, Some(10.0))),
            "maxDelayMs requires debounceMs"
        );
        assert_eq!(
            refusal(input(Some("k"), Some(0.0), None)),
            "debounceMs must be >= 1, got 0"
        );
        assert_eq!(
            refusal(input(Some("k"), Some(f64::INFINITY), None)),
            "debounceMs must be >= 1, got Infinity"
        );
        assert!(refusal(input(Some("k"), Some(1e300), None)).starts_with("debounceMs must be"));
        assert_eq!(
            refusal(input(Some("k"), Some(10.0), Some(f64::NAN))),
            "maxDelayMs must be >= 1, got NaN"
        );
        assert_eq!(
            refusal(input(Some("k"), Some(2000.0), Some(1000.0))),
            "maxDelayMs must be >= debounceMs (2000), got 1000"
        );
    }

    #[test]
    fn a_window_takes_no_other_conflict_rule_or_delay() {
        let mut replace = input(Some("k"), Some(10.0), None);
        replace.conflict = Some("replace");
        assert!(refusal(replace).starts_with("conflict cannot be replace with debounceMs"));
        let mut reuse = input(Some("k"), Some(10.0), None);
        reuse.conflict = Some("reuse");
        assert!(debounce_of(&reuse).unwrap().is_some());
        let mut delayed = input(Some("k"), Some(10.0), None);
        delayed.run_at_delay_ms = Some(5.0);
        assert!(refusal(delayed).starts_with("runAtDelayMs cannot be combined with debounceMs"));
    }
}
