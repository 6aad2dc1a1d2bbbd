//! Retry backoff (docs/api.md, "Retry backoff"): exponential windows with equal
//! jitter, or a fixed delay.
//!
//! The window doubles per attempt up to a ceiling and the delay lands in its
//! upper half, so a fleet whose tasks failed together does not retry in
//! lockstep, while no delay is ever shorter than half the plain exponential one.

pub const DEFAULT_RETRY_BACKOFF_MS: i64 = 1_000;
pub const DEFAULT_RETRY_BACKOFF_MAX_MS: i64 = 30_000;

/// How the delay grows with the attempts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BackoffKind {
    /// Doubling windows up to `max_ms`, equal jitter.
    #[default]
    Exponential,
    /// `base_ms` before every retry, no jitter.
    Fixed,
}

impl BackoffKind {
    /// The kind named as the API spells it (`"exponential"`, `"fixed"`).
    pub fn parse(name: &str) -> Option<BackoffKind> {
        match name {
            "exponential" => Some(BackoffKind::Exponential),
            "fixed" => Some(BackoffKind::Fixed),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            BackoffKind::Exponential => "exponential",
            BackoffKind::Fixed => "fixed",
        }
    }
}

/// The backoff settings a worker and its task contexts share.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Backoff {
    pub kind: BackoffKind,
    pub base_ms: f64,
    pub max_ms: f64,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff {
            kind: BackoffKind::Exponential,
            base_ms: DEFAULT_RETRY_BACKOFF_MS as f64,
            max_ms: DEFAULT_RETRY_BACKOFF_MAX_MS as f64,
        }
    }
}

impl Backoff {
    /// Delay before retry number `attempt` (the attempt that just failed, 1-based),
    /// with `unit` a uniform draw from [0, 1).
    pub fn retry_delay_ms(&self, attempt: i64, unit: f64) -> i64 {
        if self.base_ms <= 0.0 {
            return 0;
        }
        if self.kind == BackoffKind::Fixed {
            return self.base_ms as i64;
        }
        let exponent = (attempt - 1).clamp(0, 1023) as i32;
        let window = self.max_ms.min(self.base_ms * 2f64.powi(exponent));
        let floor = (window / 2.0).floor();
        (floor + (unit * (window - floor)).floor()) as i64
    }

    /// The delay a `fail` write carries: permanent failures are never re-run.
    pub fn fail_delay_ms(&self, attempt: i64, retryable: bool) -> i64 {
        if retryable {
            self.retry_delay_ms(attempt, rand::random::<f64>())
        } else {
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_double_up_to_the_ceiling() {
        let b = Backoff::default();
        assert_eq!(b.retry_delay_ms(1, 1.0), 1000);
        assert_eq!(b.retry_delay_ms(2, 1.0), 2000);
        assert_eq!(b.retry_delay_ms(3, 1.0), 4000);
        assert_eq!(b.retry_delay_ms(20, 1.0), 30_000);
        assert_eq!(b.retry_delay_ms(3, 0.0), 2000);
        assert_eq!(b.retry_delay_ms(3, 0.5), 3000);
    }

    #[test]
    fn zero_base_disables_and_permanent_failures_never_wait() {
        let off = Backoff {
            base_ms: 0.0,
            ..Backoff::default()
        };
        assert_eq!(off.retry_delay_ms(5, 0.9), 0);
        assert_eq!(Backoff::default().fail_delay_ms(4, false), 0);
        let fixed = Backoff {
            kind: BackoffKind::Fixed,
            base_ms: 5_000.0,
            max_ms: 1_000.0,
        };
        assert_eq!(fixed.retry_delay_ms(7, 0.3), 5_000, "no growth, no jitter");
        for _ in 0..100 {
            let d = Backoff::default().fail_delay_ms(2, true);
            assert!((1000..2000).contains(&d), "{d}");
        }
    }
}
