//! Handler registrations and the claim sources they produce (docs/api.md,
//! "Registrations").

use std::collections::HashMap;
use std::sync::Arc;

use crate::backoff::Backoff;
use crate::deadletter::checked_queue;
use crate::error::{Error, Result};
use crate::flow::{self, Declaration, FlowLimits, RateLimit};
use crate::input::{integer_at_least_one, Options};
use crate::retry::{RetryPolicy, RetrySpec};
use crate::timeouts::{registration_timeout, TimeLimit};

/// `worker.task(name, {batch, concurrency, resource, rateLimit,
/// groupConcurrency, timeoutMs}, fn)` options; all absent for the plain
/// `(ctx, payload)` form.
#[derive(Clone, Debug, Default)]
pub struct Registration {
    pub batch: Option<f64>,
    pub concurrency: Option<f64>,
    pub resource: Option<String>,
    /// `rateLimit` and `groupConcurrency`, checked when read.
    pub flow: Option<FlowLimits>,
    /// The name's time limit per call (docs/api.md, "Time limits and aborts").
    pub timeout_ms: Option<f64>,
    /// The name's retry policy (docs/api.md, "Retry policy").
    pub retry: Option<RetrySpec>,
    /// The queue its tasks' failures for good go to (docs/api.md, "Dead letters").
    pub dead_letter: Option<String>,
}

impl Registration {
    /// The options object as JS sends it (`input::Options`).
    pub fn read(options: &str) -> Result<Registration> {
        let keys = [
            "batch",
            "concurrency",
            "resource",
            flow::spec::KEYS[0],
            flow::spec::KEYS[1],
            "timeoutMs",
            "retry",
            "deadLetter",
        ];
        let mut fields = Options::parse("task options", options, &keys)?;
        Ok(Registration {
            batch: fields.number("batch")?,
            concurrency: fields.number("concurrency")?,
            resource: fields.text("resource")?,
            flow: flow::spec::read(&mut fields)?,
            timeout_ms: fields.number("timeoutMs")?,
            retry: RetrySpec::read(&mut fields)?,
            dead_letter: fields.text("deadLetter")?,
        })
    }
}

/// A validated registration.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Handler {
    pub name: String,
    pub batch: Option<i64>,
    pub concurrency: Option<i64>,
    pub resource: Option<String>,
    /// The limits this worker declares for the name.
    pub flow: Option<FlowLimits>,
    /// Its calls' time limit, over the worker's `maxRunMs`.
    pub timeout: Option<TimeLimit>,
    /// Its attempts cap and backoff, over the worker's backoff.
    pub retry: RetryPolicy,
    /// Its dead-letter queue, under a submit's.
    pub dead_letter: Option<String>,
}

impl Handler {
    /// The key and rate of a rate limit with a key.
    fn shared_rate(&self) -> Option<(&str, RateLimit)> {
        let flow = self.flow.as_ref()?;
        Some((flow.rate_key.as_deref()?, flow.rate?))
    }

    /// Whether the name declares a rate limit (`ctx.retryAfter`'s `limit`).
    pub fn rate_limited(&self) -> bool {
        self.flow.as_ref().is_some_and(|f| f.rate.is_some())
    }

    /// Names with a batch size, a concurrency cap, a resource or declared
    /// limits draw alone.
    fn has_own_source(&self) -> bool {
        self.batch.is_some()
            || self.concurrency.is_some()
            || self.resource.is_some()
            || self.flow.is_some()
    }
}

fn positive_integer(what: &str, value: Option<f64>) -> Result<Option<i64>> {
    value.map(|v| integer_at_least_one(what, v)).transpose()
}

/// Checks `options` against docs/api.md, "Registrations"; `resources` are the
/// worker's declared resource names, `backoff` its retry backoff.
pub(crate) fn validate(
    name: &str,
    options: Registration,
    resources: &HashMap<String, i64>,
    backoff: Backoff,
) -> Result<Handler> {
    let batch = positive_integer("batch", options.batch)?;
    let concurrency = positive_integer("concurrency", options.concurrency)?;
    let timeout = registration_timeout(options.timeout_ms)?;
    let dead_letter = checked_queue(options.dead_letter)?;
    let retry = match &options.retry {
        Some(spec) => spec.check(backoff)?,
        None => RetryPolicy::default(),
    };
    if let Some(resource) = &options.resource {
        if !resources.contains_key(resource) {
            let mut declared: Vec<&str> = resources.keys().map(String::as_str).collect();
            declared.sort_unstable();
            let declared = if declared.is_empty() {
                "none".to_string()
            } else {
                declared.join(", ")
            };
            return Err(Error::Invalid(format!(
                "task \"{name}\" declares resource \"{resource}\", which is not in WorkerOptions.resources; declared: {declared}"
            )));
        }
    }
    Ok(Handler {
        name: name.to_string(),
        batch,
        concurrency,
        resource: options.resource,
        flow: options.flow,
        timeout,
        retry,
        dead_letter,
    })
}

/// Registrations in registration order, plus the claim sources derived from them.
#[derive(Default)]
pub(crate) struct Registry {
    handlers: Vec<Handler>,
    claim_sources: Option<Arc<ClaimSources>>,
}

impl Registry {
    /// Adds a handler, or replaces the one of the same name in its place.
    /// Refused: a rate with a key another name of this worker declares with
    /// another rate (docs/api.md, "Flow control").
    pub fn register(&mut self, handler: Handler) -> Result<()> {
        if let Some((key, rate)) = handler.shared_rate() {
            let other = self
                .handlers
                .iter()
                .filter(|h| h.name != handler.name)
                .find_map(|h| {
                    h.shared_rate()
                        .filter(|(k, r)| *k == key && *r != rate)
                        .map(|(_, r)| (h, r))
                });
            if let Some((other, other_rate)) = other {
                return Err(Error::Invalid(format!(
                    "task \"{}\" declares rateLimit key \"{key}\" as {}, but task \"{}\" of this worker declares it as {}: the names sharing a key declare the same max, perMs and perGroup",
                    handler.name,
                    rate.describe(),
                    other.name,
                    other_rate.describe(),
                )));
            }
        }
        match self.handlers.iter_mut().find(|h| h.name == handler.name) {
            Some(slot) => *slot = handler,
            None => self.handlers.push(handler),
        }
        self.claim_sources = None;
        Ok(())
    }

    pub fn claim_sources(&mut self) -> Arc<ClaimSources> {
        self.claim_sources
            .get_or_insert_with(|| Arc::new(ClaimSources::new(&self.handlers)))
            .clone()
    }
}

/// One source of draws: a name of its own, or the names sharing a draw.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Source {
    pub names: Vec<String>,
    /// Rows per call.
    pub batch: i64,
    /// Per-name concurrency cap (own sources only).
    pub concurrency: Option<i64>,
    pub resource: Option<String>,
    /// Its one name's declared limits apply (a flow draw).
    pub flow: bool,
}

/// The registrations as a poll claims for them: the sources of its draws,
/// each name's handler, the name filter and the limits to declare. Derived
/// again whenever a registration changes. (Recurring schedules are
/// `crate::schedule`'s.)
#[derive(Debug)]
pub(crate) struct ClaimSources {
    pub handlers: HashMap<String, Handler>,
    /// Own sources in registration order, then the shared source if any.
    pub sources: Vec<Source>,
    /// Every registered name: the session's name filter.
    pub names: Vec<String>,
    /// The limits this worker declares, in registration order.
    pub declarations: Vec<Declaration>,
}

impl ClaimSources {
    fn new(handlers: &[Handler]) -> ClaimSources {
        let mut sources: Vec<Source> = handlers
            .iter()
            .filter(|h| h.has_own_source())
            .map(|h| Source {
                names: vec![h.name.clone()],
                batch: h.batch.unwrap_or(1),
                concurrency: h.concurrency,
                resource: h.resource.clone(),
                flow: h.flow.is_some(),
            })
            .collect();
        let shared: Vec<String> = handlers
            .iter()
            .filter(|h| !h.has_own_source())
            .map(|h| h.name.clone())
            .collect();
        if !shared.is_empty() {
            sources.push(Source {
                names: shared,
                batch: 1,
                concurrency: None,
                resource: None,
                flow: false,
            });
        }
        ClaimSources {
            handlers: handlers
                .iter()
                .map(|h| (h.name.clone(), h.clone()))
                .collect(),
            sources,
            names: handlers.iter().map(|h| h.name.clone()).collect(),
            declarations: handlers
                .iter()
                .filter_map(|h| {
                    h.flow.clone().map(|limits| Declaration {
                        name: h.name.clone(),
                        limits,
                    })
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resources(names: &[&str]) -> HashMap<String, i64> {
        names.iter().map(|n| (n.to_string(), 1)).collect()
    }

    fn message(result: Result<Handler>) -> String {
        result.unwrap_err().to_string()
    }

    #[test]
    fn options_are_validated_with_the_api_messages() {
        let none = resources(&[]);
        let bad_batch = Registration {
            batch: Some(1.5),
            concurrency: Some(0.0),
            ..Default::default()
        };
        assert_eq!(
            message(validate("a", bad_batch, &none, Backoff::default())),
            "batch must be an integer >= 1, got 1.5"
        );
        let bad_concurrency = Registration {
            concurrency: Some(0.0),
            ..Default::default()
        };
        assert_eq!(
            message(validate("a", bad_concurrency, &none, Backoff::default())),
            "concurrency must be an integer >= 1, got 0"
        );
        assert_eq!(
            Registration::read(r#"{"batch":"2"}"#)
                .unwrap_err()
                .to_string(),
            "batch must be a number, got \"2\""
        );
        let undeclared = Registration {
            resource: Some("gpu".into()),
            ..Default::default()
        };
        assert_eq!(
            message(validate("a", undeclared.clone(), &none, Backoff::default())),
            "task \"a\" declares resource \"gpu\", which is not in WorkerOptions.resources; declared: none"
        );
        assert_eq!(
            message(validate("a", undeclared, &resources(&["net", "db"]), Backoff::default())),
            "task \"a\" declares resource \"gpu\", which is not in WorkerOptions.resources; declared: db, net"
        );
    }

    fn handler(name: &str, batch: Option<i64>, resource: Option<&str>) -> Handler {
        Handler {
            name: name.into(),
            batch,
            concurrency: None,
            resource: resource.map(Into::into),
            flow: None,
            timeout: None,
            retry: RetryPolicy::default(),
            dead_letter: None,
        }
    }

    #[test]
    fn own_sources_come_first_in_registration_order_then_the_shared_one() {
        let mut registry = Registry::default();
        registry.register(handler("plain1", None, None)).unwrap();
        registry
            .register(handler("batched", Some(4), None))
            .unwrap();
        registry.register(handler("plain2", None, None)).unwrap();
        registry
            .register(handler("limited", None, Some("gpu")))
            .unwrap();
        let claim_sources = registry.claim_sources();
        let names: Vec<_> = claim_sources
            .sources
            .iter()
            .map(|s| s.names.clone())
            .collect();
        assert_eq!(
            names,
            [vec!["batched"], vec!["limited"], vec!["plain1", "plain2"]]
        );
        assert_eq!(claim_sources.sources[0].batch, 4);
        assert_eq!(
            claim_sources.names,
            ["plain1", "batched", "plain2", "limited"]
        );
    }

    #[test]
    fn replacing_keeps_the_position_and_refreshes_the_claim_sources() {
        let mut registry = Registry::default();
        registry.register(handler("a", None, None)).unwrap();
        registry.register(handler("b", Some(2), None)).unwrap();
        let before = registry.claim_sources();
        registry.register(handler("a", Some(3), None)).unwrap();
        let after = registry.claim_sources();
        assert_eq!(before.sources.len(), 2);
        let names: Vec<_> = after.sources.iter().map(|s| s.names.clone()).collect();
        assert_eq!(names, [vec!["a"], vec!["b"]]);
        assert_eq!(after.names, ["a", "b"]);
    }
}
