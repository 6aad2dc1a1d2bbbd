//! A store's clock (docs/api.md, "Testing"): every time a SQLite statement
//! binds and every time the worker compares with a task's times. The host's
//! clock by default; a test clock stands still until a test moves it, so
//! sleeps, backoffs, schedules, debounces and leases follow `advance`
//! instead of real time. Each store has its own: two stores in one process
//! never share a test clock.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::ids;
use crate::input::{epoch_ms, non_negative_integer, Options};

#[derive(Clone, Debug, Default)]
pub enum Clock {
    /// The host's wall clock (`ids::now_ms`): nothing to share, no lock.
    #[default]
    Host,
    /// Epoch milliseconds that change only by `advance`.
    Test(Arc<AtomicI64>),
}

/// The clock of a backend that has no clock of its own to offer.
pub static HOST_CLOCK: Clock = Clock::Host;

/// The largest step `advance` takes: a JS Date's range, so the sum stays one.
const MAX_STEP_MS: i64 = 8_640_000_000_000_000;

impl Clock {
    /// A test clock standing at `start_ms` (epoch milliseconds; the field
    /// named `name` when refused).
    pub fn test_at(name: &str, start_ms: f64) -> Result<Clock> {
        Ok(Clock::Test(Arc::new(AtomicI64::new(epoch_ms(
            name, start_ms,
        )?))))
    }

    /// A test clock standing at the host's time now.
    pub fn test_now() -> Clock {
        Clock::Test(Arc::new(AtomicI64::new(ids::now_ms())))
    }

    /// Epoch milliseconds now, on this clock.
    #[inline]
    pub fn now_ms(&self) -> i64 {
        match self {
            Clock::Host => ids::now_ms(),
            Clock::Test(now) => now.load(Ordering::SeqCst),
        }
    }

    pub fn is_test(&self) -> bool {
        matches!(self, Clock::Test(_))
    }

    /// Move a test clock `ms` forward (an integer >= 0); its time after.
    pub fn advance(&self, ms: f64) -> Result<i64> {
        let step = non_negative_integer("ms", ms)?.min(MAX_STEP_MS);
        match self {
            Clock::Host => Err(Error::Invalid(
                "the store's clock is the host's: only a test store's clock moves (cairnq/testing)"
                    .into(),
            )),
            Clock::Test(now) => Ok(now.fetch_add(step, Ordering::SeqCst).saturating_add(step)),
        }
    }
}

/// `clock.advance(ms)`'s argument as JS sends it, `{"ms": …}`: a number
/// (`advance` checks the rest).
pub fn step_of(options_json: &str) -> Result<f64> {
    Options::parse("clock.advance", options_json, &["ms"])?.required_number("ms")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_test_clock_stands_still_until_advanced() {
        let clock = Clock::test_at("now", 1_000.0).unwrap();
        assert_eq!(clock.now_ms(), 1_000);
        assert_eq!(clock.advance(86_400_000.0).unwrap(), 86_401_000);
        assert_eq!(clock.now_ms(), 86_401_000);
        assert_eq!(clock.clone().now_ms(), 86_401_000, "clones share the time");
    }

    #[test]
    fn two_test_clocks_do_not_share_a_time() {
        let (a, b) = (Clock::test_now(), Clock::test_now());
        a.advance(60_000.0).unwrap();
        assert!(a.now_ms() - b.now_ms() >= 60_000 - 5);
    }

    #[test]
    fn bad_steps_and_the_host_clock_are_refused() {
        let clock = Clock::test_at("now", 0.0).unwrap();
        for bad in [-1.0, 1.5, f64::NAN] {
            let err = clock.advance(bad).unwrap_err().to_string();
            assert!(
                err.starts_with("ms must be a non-negative integer, got"),
                "{err}"
            );
        }
        assert_eq!(clock.now_ms(), 0, "a refused step moves nothing");
        assert!(Clock::Host.advance(1.0).is_err());
        assert_eq!(step_of(r#"{"ms":250}"#).unwrap(), 250.0);
        let err = step_of(r#"{"ms":"x"}"#).unwrap_err().to_string();
        assert!(err.contains("ms must be a number"), "{err}");
        assert!(Clock::test_at("now", -5.0)
            .unwrap_err()
            .to_string()
            .starts_with("now must be"));
    }
}
