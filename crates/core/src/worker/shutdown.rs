//! `stop({ timeoutMs })` and `serve({ shutdownTimeoutMs })` (docs/api.md,
//! "Time limits and aborts"): the shutdown deadline, after which the drain
//! abandons the calls still in flight and hands their tasks back.

use std::sync::Mutex;
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

use crate::error::Result;
use crate::input::{at_least, duration_ms, Options};

/// A worker's shutdown deadline, and `serve`'s timeout for a stop without one.
pub(crate) struct Shutdown {
    at: watch::Sender<Option<Instant>>,
    default_timeout: Mutex<Option<Duration>>,
}

impl Shutdown {
    pub(crate) fn new() -> Shutdown {
        Shutdown {
            at: watch::channel(None).0,
            default_timeout: Mutex::new(None),
        }
    }

    /// A `stop`'s options (`{timeoutMs}` as JS sends them): with a timeout
    /// (its own, else `serve`'s), the deadline that long from now; the
    /// earliest deadline given wins.
    pub(crate) fn on_stop(&self, options: &str) -> Result<()> {
        let timeout = timeout(options, "stop options", "timeoutMs")?
            .or(*self.default_timeout.lock().expect("shutdown timeout"));
        if let Some(timeout) = timeout {
            let at = Instant::now() + timeout;
            self.at.send_modify(|deadline| {
                *deadline = Some(deadline.map_or(at, |d| d.min(at)));
            });
        }
        Ok(())
    }

    /// `serve`'s options (`{shutdownTimeoutMs}`): the timeout of every later
    /// stop without one of its own.
    pub(crate) fn on_serve(&self, options: &str) -> Result<()> {
        let timeout = timeout(options, "serve options", "shutdownTimeoutMs")?;
        *self.default_timeout.lock().expect("shutdown timeout") = timeout;
        Ok(())
    }

    /// The deadline as it is set now and from now on.
    pub(crate) fn deadline(&self) -> watch::Receiver<Option<Instant>> {
        self.at.subscribe()
    }
}

/// The timeout `field` of `options` (`what`): a number of milliseconds >= 0
/// when given.
fn timeout(options: &str, what: &str, field: &str) -> Result<Option<Duration>> {
    let mut fields = Options::parse(what, options, &[field])?;
    let Some(ms) = fields.number(field)? else {
        return Ok(None);
    };
    Ok(Some(duration_ms(at_least(field, ms, 0.0)?)))
}

/// Sleeps until `at`, or forever without one.
pub(crate) async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_earliest_deadline_wins_and_serve_sets_the_default() {
        let shutdown = Shutdown::new();
        assert_eq!(
            shutdown
                .on_stop(r#"{"timeoutMs":-1}"#)
                .unwrap_err()
                .to_string(),
            "timeoutMs must be >= 0, got -1"
        );
        assert_eq!(
            shutdown
                .on_serve(r#"{"shutdownTimeoutMs":"soon"}"#)
                .unwrap_err()
                .to_string(),
            "shutdownTimeoutMs must be a number, got \"soon\""
        );
        shutdown.on_stop("{}").unwrap();
        assert_eq!(
            *shutdown.deadline().borrow(),
            None,
            "no timeout, no deadline"
        );
        shutdown.on_serve(r#"{"shutdownTimeoutMs":60000}"#).unwrap();
        shutdown.on_stop("{}").unwrap();
        let serves = shutdown.deadline().borrow().expect("serve's timeout");
        shutdown.on_stop(r#"{"timeoutMs":10}"#).unwrap();
        let sooner = shutdown.deadline().borrow().expect("the stop's own");
        assert!(sooner < serves);
        shutdown.on_stop(r#"{"timeoutMs":120000}"#).unwrap();
        assert_eq!(*shutdown.deadline().borrow(), Some(sooner));
    }
}
