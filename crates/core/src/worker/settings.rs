//! `WorkerOptions` (docs/api.md, "Worker options") as JS passes them, checked
//! and resolved to the units the worker uses.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use super::report::ErrorHook;
use crate::backoff::Backoff;
use crate::error::Result;
use crate::input::{
    above_zero, duration_ms, integer_at_least_one, stored_ms, stored_ms_or, Options,
};
use crate::store::backpressure::BackpressureOptions;
use crate::timeouts::TimeLimit;

const DEFAULT_POLL_INTERVAL_MS: f64 = 500.0;

/// A worker's lease when `leaseMs` is absent (docs/api.md, "Worker options"):
/// a SIGKILLed worker's task is claimable again at most this long after its
/// last beat, so another worker polling every 500 ms runs it within 4.5 s.
/// The native heartbeat does not wait on the event loop, so a blocked loop
/// cannot make it late; what can is a beat delayed by the database or a
/// starved CPU. The store methods' lease (`store::DEFAULT_LEASE_MS`) stays
/// the protocol's 30 s.
pub const DEFAULT_WORKER_LEASE_MS: i64 = 4_000;

/// The beat period with the default lease (else `leaseMs / 3`, as 0.7.0):
/// a beat may come 3 s late before the lease runs out.
pub const DEFAULT_WORKER_HEARTBEAT_MS: f64 = 1_000.0;

/// `WorkerOptions` (docs/api.md, "Worker options") as JS numbers; `None` =
/// absent.
#[derive(Clone, Default)]
pub struct WorkerOptions {
    pub concurrency: Option<f64>,
    pub lease_ms: Option<f64>,
    pub heartbeat_interval_ms: Option<f64>,
    pub poll_interval_ms: Option<f64>,
    pub claim_batch: Option<f64>,
    pub retry_backoff_ms: Option<f64>,
    pub retry_backoff_max_ms: Option<f64>,
    pub max_run_ms: Option<f64>,
    pub max_in_flight_bytes: Option<f64>,
    /// In the order the caller listed them (validation reports the first bad one).
    pub resources: Vec<(String, f64)>,
    pub on_error: Option<ErrorHook>,
    /// `maxQueueDepth` and friends: installed on the store at construction.
    pub backpressure: Option<BackpressureOptions>,
}

/// Options resolved to the units the loop uses.
pub(crate) struct Settings {
    pub(crate) concurrency: Option<f64>,
    pub(crate) lease_ms: i64,
    pub(crate) heartbeat_interval_ms: i64,
    pub(crate) heartbeat_every: Duration,
    pub(crate) poll_every: Duration,
    pub(crate) claim_batch: Option<f64>,
    pub(crate) backoff: Backoff,
    pub(crate) max_run: Option<TimeLimit>,
    pub(crate) max_in_flight_bytes: Option<f64>,
    pub(crate) resources: Arc<HashMap<String, i64>>,
}

/// The options `WorkerOptions::read` takes besides backpressure's.
const KEYS: [&str; 10] = [
    "concurrency",
    "leaseMs",
    "heartbeatIntervalMs",
    "pollIntervalMs",
    "claimBatch",
    "retryBackoffMs",
    "retryBackoffMaxMs",
    "maxRunMs",
    "maxInFlightBytes",
    "resources",
];

impl WorkerOptions {
    /// The options as JS sends them (`input::Options`); `on_error` is the
    /// binding's to set.
    pub fn read(options: &str) -> Result<WorkerOptions> {
        let known: Vec<&str> = KEYS
            .iter()
            .chain(&BackpressureOptions::KEYS)
            .copied()
            .collect();
        let mut fields = Options::parse("worker options", options, &known)?;
        Ok(WorkerOptions {
            concurrency: fields.number("concurrency")?,
            lease_ms: fields.number("leaseMs")?,
            heartbeat_interval_ms: fields.number("heartbeatIntervalMs")?,
            poll_interval_ms: fields.number("pollIntervalMs")?,
            claim_batch: fields.number("claimBatch")?,
            retry_backoff_ms: fields.number("retryBackoffMs")?,
            retry_backoff_max_ms: fields.number("retryBackoffMaxMs")?,
            max_run_ms: fields.number("maxRunMs")?,
            max_in_flight_bytes: fields.number("maxInFlightBytes")?,
            resources: fields.numbers_by_name("resources")?.unwrap_or_default(),
            on_error: None,
            backpressure: BackpressureOptions::read(&mut fields)?,
        })
    }
}

impl Settings {
    pub(crate) fn resolve(options: &WorkerOptions) -> Result<Settings> {
        if let Some(v) = options.max_run_ms {
            above_zero("maxRunMs", v)?;
        }
        if let Some(v) = options.max_in_flight_bytes {
            above_zero("maxInFlightBytes", v)?;
        }
        let mut resources = HashMap::new();
        for (name, capacity) in &options.resources {
            let quoted = serde_json::to_string(name).expect("a string encodes");
            let capacity = integer_at_least_one(&format!("resources[{quoted}]"), *capacity)?;
            resources.insert(name.clone(), capacity);
        }
        let lease_ms = stored_ms_or("leaseMs", options.lease_ms, DEFAULT_WORKER_LEASE_MS)?;
        let heartbeat_ms = match (options.heartbeat_interval_ms, options.lease_ms) {
            (Some(ms), _) => ms,
            (None, None) => DEFAULT_WORKER_HEARTBEAT_MS,
            (None, Some(_)) => (lease_ms / 3).max(50) as f64,
        };
        Ok(Settings {
            concurrency: options.concurrency,
            lease_ms,
            heartbeat_interval_ms: heartbeat_ms as i64,
            // A zero period would spin; a JS timer would not fire sooner than 1 ms either.
            heartbeat_every: duration_ms(heartbeat_ms).max(Duration::from_millis(1)),
            poll_every: duration_ms(options.poll_interval_ms.unwrap_or(DEFAULT_POLL_INTERVAL_MS)),
            claim_batch: options.claim_batch,
            backoff: retry_backoff(options.retry_backoff_ms, options.retry_backoff_max_ms)?,
            max_run: options.max_run_ms.map(|ms| TimeLimit::new("maxRunMs", ms)),
            max_in_flight_bytes: options.max_in_flight_bytes,
            resources: Arc::new(resources),
        })
    }
}

/// `retryBackoffMs` / `retryBackoffMaxMs` (defaults when absent): the delays
/// they give are added to the clock, so both are stored durations.
pub fn retry_backoff(base_ms: Option<f64>, max_ms: Option<f64>) -> Result<Backoff> {
    let defaults = Backoff::default();
    let check = |name, v: Option<f64>, default: f64| -> Result<f64> {
        v.map_or(Ok(default), |v| stored_ms(name, v).map(|_| v))
    };
    Ok(Backoff {
        kind: defaults.kind,
        base_ms: check("retryBackoffMs", base_ms, defaults.base_ms)?,
        max_ms: check("retryBackoffMaxMs", max_ms, defaults.max_ms)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn invalid(options: WorkerOptions) -> String {
        Settings::resolve(&options)
            .err()
            .expect("rejected")
            .to_string()
    }

    #[test]
    fn options_are_validated_in_order_with_the_api_messages() {
        let resources = vec![("ok".to_string(), 2.0), ("gpu \"x\"".to_string(), 1.5)];
        assert_eq!(
            invalid(WorkerOptions {
                max_run_ms: Some(0.0),
                max_in_flight_bytes: Some(-1.0),
                ..Default::default()
            }),
            "maxRunMs must be > 0, got 0"
        );
        assert_eq!(
            invalid(WorkerOptions {
                max_in_flight_bytes: Some(-1.0),
                resources: resources.clone(),
                ..Default::default()
            }),
            "maxInFlightBytes must be > 0, got -1"
        );
        assert_eq!(
            invalid(WorkerOptions {
                resources,
                ..Default::default()
            }),
            r#"resources["gpu \"x\""] must be an integer >= 1, got 1.5"#
        );
    }

    #[test]
    fn stored_durations_must_be_finite() {
        assert_eq!(
            invalid(WorkerOptions {
                lease_ms: Some(f64::INFINITY),
                ..Default::default()
            }),
            "leaseMs must be a finite number of milliseconds, at most 1e15 (about 31,700 years), got Infinity"
        );
        assert_eq!(
            invalid(WorkerOptions {
                retry_backoff_max_ms: Some(1e300),
                ..Default::default()
            }),
            "retryBackoffMaxMs must be a finite number of milliseconds, at most 1e15 (about 31,700 years), got 1e+300"
        );
        assert!(retry_backoff(Some(f64::NAN), None).is_err());
        assert_eq!(retry_backoff(None, None).unwrap(), Backoff::default());
    }

    #[test]
    fn defaults_follow_the_lease() {
        let defaults = Settings::resolve(&WorkerOptions::default()).unwrap();
        assert_eq!(defaults.lease_ms, 4_000);
        assert_eq!(defaults.heartbeat_interval_ms, 1_000);
        assert_eq!(defaults.poll_every, Duration::from_millis(500));
        assert_eq!(defaults.backoff, Backoff::default());
        let short = Settings::resolve(&WorkerOptions {
            lease_ms: Some(100.0),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(short.heartbeat_every, Duration::from_millis(50));
    }
}
