//! Retention (docs/api.md, "Retention"): delete finished tasks past their
//! rule's cutoff on a schedule, rule by rule in bounded batches, for as long as
//! the handle that owns it is open.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use tokio::sync::Notify;
use tokio::task::JoinHandle;

use crate::error::{Error, Result};
use crate::input::{duration_ms, finite_at_least, Options};
use crate::store::{PurgeFilter, PurgeInput, Store, DEFAULT_PURGE_LIMIT};

/// Hourly: a day of retention then never carries more than an hour of extra rows.
pub const DEFAULT_INTERVAL_MS: f64 = 3_600_000.0;

/// A rule form (`olderThanMs`'s or `keepLast`'s), the per-status map already
/// turned into rules (in key order).
#[derive(Clone, Debug)]
pub enum Cutoffs {
    /// One cutoff for every finished task (0.7.0's form); `None` when absent.
    Uniform(Option<f64>),
    /// Each rule is one purge input (its `limit` is the sweeper's).
    Rules(Vec<PurgeInput>),
}

#[derive(Clone, Debug)]
pub struct RetentionOptions {
    pub older_than_ms: Cutoffs,
    /// Retention by count; `None` when absent. Its number form is one rule.
    pub keep_last: Option<Vec<PurgeInput>>,
    pub interval_ms: Option<f64>,
    pub limit: Option<f64>,
}

impl RetentionOptions {
    /// The options as JS sends them (`input::Options`): `olderThanMs` and
    /// `keepLast` each a number, a map of status to value (one rule per
    /// entry) or a list of rules.
    pub fn read(options: &str) -> Result<RetentionOptions> {
        let mut fields = Options::parse(
            "retention options",
            options,
            &["olderThanMs", "keepLast", "intervalMs", "limit"],
        )?
        .named_under("retention.");
        let older_than_ms = match rule_forms(&mut fields, "olderThanMs", |rule, cutoff| {
            rule.older_than_ms = Some(cutoff)
        })? {
            Some(rules) => Cutoffs::Rules(rules),
            None => Cutoffs::Uniform(fields.number("olderThanMs")?),
        };
        let keep_last =
            match rule_forms(&mut fields, "keepLast", |rule, n| rule.keep_last = Some(n))? {
                Some(rules) => Some(rules),
                None => fields.number("keepLast")?.map(|n| {
                    vec![PurgeInput {
                        keep_last: Some(n),
                        ..PurgeInput::default()
                    }]
                }),
            };
        Ok(RetentionOptions {
            older_than_ms,
            keep_last,
            interval_ms: fields.number("intervalMs")?,
            limit: fields.number("limit")?,
        })
    }
}

/// `key`'s list of rules, or its map of status to value (`set` on a rule of
/// that status); `None` when it holds neither.
fn rule_forms(
    fields: &mut Options,
    key: &str,
    set: fn(&mut PurgeInput, f64),
) -> Result<Option<Vec<PurgeInput>>> {
    if fields.holds_array(key) {
        let rules = fields.objects(key, &PurgeInput::KEYS)?.unwrap_or_default();
        // A rule's own `limit` is read as a purge input's and dropped: the sweeper's applies.
        let read = rules.into_iter().map(|mut rule| {
            Ok(PurgeInput {
                limit: None,
                ..PurgeInput::of(&mut rule)?
            })
        });
        return read.collect::<Result<_>>().map(Some);
    }
    if fields.holds_object(key) {
        let by_status = fields.numbers_by_name(key)?.unwrap_or_default();
        let rules = by_status.into_iter().map(|(status, value)| {
            let mut rule = PurgeInput {
                status: Some(status),
                ..PurgeInput::default()
            };
            set(&mut rule, value);
            rule
        });
        return Ok(Some(rules.collect()));
    }
    Ok(None)
}

/// The rules to sweep, checked in the API's order: the uniform form alone
/// keeps 0.7.0's messages and checks `olderThanMs` before `intervalMs`;
/// otherwise `intervalMs` comes first, then that each form given names a
/// rule, then each rule as `purge` would (`olderThanMs`'s first, then
/// `keepLast`'s), all before anything runs.
fn rules(opts: &RetentionOptions) -> Result<(Vec<PurgeFilter>, f64)> {
    let interval = || {
        finite_at_least(
            "retention.intervalMs",
            opts.interval_ms.unwrap_or(DEFAULT_INTERVAL_MS),
            1.0,
        )
    };
    let limit = Some(opts.limit.unwrap_or(DEFAULT_PURGE_LIMIT as f64));
    let uniform = |older_than_ms: f64| -> Result<PurgeInput> {
        Ok(PurgeInput {
            older_than_ms: Some(finite_at_least(
                "retention.olderThanMs",
                older_than_ms,
                0.0,
            )?),
            ..PurgeInput::default()
        })
    };
    let (given, interval_ms) = match (&opts.older_than_ms, &opts.keep_last) {
        (Cutoffs::Uniform(None), None) => {
            return Err(Error::Invalid(
                "retention.olderThanMs must be >= 0, got undefined".into(),
            ))
        }
        (Cutoffs::Uniform(Some(older_than_ms)), None) => {
            let rule = uniform(*older_than_ms)?;
            (vec![rule], interval()?)
        }
        (older, keep_last) => {
            let interval_ms = interval()?;
            let mut given = match older {
                Cutoffs::Uniform(None) => Vec::new(),
                Cutoffs::Uniform(Some(older_than_ms)) => vec![uniform(*older_than_ms)?],
                Cutoffs::Rules(rules) if rules.is_empty() => return Err(no_rule("olderThanMs")),
                Cutoffs::Rules(rules) => rules.clone(),
            };
            match keep_last {
                Some(rules) if rules.is_empty() => return Err(no_rule("keepLast")),
                Some(rules) => given.extend(rules.iter().cloned()),
                None => {}
            }
            (given, interval_ms)
        }
    };
    Ok((checked(given, limit)?, interval_ms))
}

fn no_rule(key: &str) -> Error {
    Error::Invalid(format!("retention.{key} must name at least one rule"))
}

/// Each rule checked as `purge` checks it, with the sweeper's `limit`.
fn checked(given: Vec<PurgeInput>, limit: Option<f64>) -> Result<Vec<PurgeFilter>> {
    given
        .into_iter()
        .map(|rule| PurgeInput { limit, ..rule }.validate())
        .collect()
}

pub type ErrorHook = Arc<dyn Fn(Error) + Send + Sync>;

/// What the sweeper deletes through: a store of this package, or (from the
/// binding) an application's object with a `purge` method. Returns the ids
/// one batch deleted.
#[async_trait]
pub trait Purger: Send + Sync {
    async fn purge(&self, filter: PurgeFilter) -> Result<Vec<String>>;
}

#[async_trait]
impl Purger for Store {
    async fn purge(&self, filter: PurgeFilter) -> Result<Vec<String>> {
        self.purge_filtered(filter).await
    }
}

pub struct RetentionSweeper {
    inner: Arc<Inner>,
    running: Mutex<Option<JoinHandle<()>>>,
}

struct Inner {
    store: Arc<dyn Purger>,
    rules: Vec<PurgeFilter>,
    interval: Duration,
    on_error: Option<ErrorHook>,
    stopping: AtomicBool,
    wake: Notify,
}

impl RetentionSweeper {
    pub fn new(
        store: Arc<dyn Purger>,
        opts: RetentionOptions,
        on_error: Option<ErrorHook>,
    ) -> Result<RetentionSweeper> {
        let (rules, interval_ms) = rules(&opts)?;
        Ok(RetentionSweeper {
            inner: Arc::new(Inner {
                store,
                rules,
                interval: duration_ms(interval_ms),
                on_error,
                stopping: AtomicBool::new(false),
                wake: Notify::new(),
            }),
            running: Mutex::new(None),
        })
    }

    /// Start the schedule on `runtime` (no-op while it runs). It sleeps first:
    /// a process that restarts often must not purge on every boot.
    pub fn start(&self, runtime: &tokio::runtime::Handle) {
        let mut running = self.running.lock().expect("sweeper lock");
        if running.as_ref().is_some_and(|h| !h.is_finished()) {
            return;
        }
        self.inner.stopping.store(false, Ordering::SeqCst);
        let inner = self.inner.clone();
        *running = Some(runtime.spawn(async move {
            loop {
                tokio::select! {
                    _ = tokio::time::sleep(inner.interval) => {}
                    _ = inner.wake.notified() => {}
                }
                if inner.stopping.load(Ordering::SeqCst) {
                    return;
                }
                if let Err(err) = inner.sweep().await {
                    if let Some(hook) = &inner.on_error {
                        hook(err);
                    }
                }
            }
        }));
    }

    /// Stop the schedule and wait for a sweep in flight, so no purge outlives the store.
    pub async fn stop(&self) {
        self.inner.stopping.store(true, Ordering::SeqCst);
        self.inner.wake.notify_one();
        let handle = self.running.lock().expect("sweeper lock").take();
        if let Some(handle) = handle {
            let _ = handle.await;
        }
    }

    /// Purge what each rule matches now, rule by rule and batch by batch;
    /// returns the count. A stop ends it after the batch in flight.
    pub async fn sweep(&self) -> Result<usize> {
        self.inner.sweep().await
    }
}

impl Inner {
    async fn sweep(&self) -> Result<usize> {
        let mut deleted = 0;
        for rule in &self.rules {
            loop {
                let ids = self.store.purge(rule.clone()).await?;
                deleted += ids.len();
                if self.stopping.load(Ordering::SeqCst) {
                    return Ok(deleted);
                }
                if (ids.len() as i64) < rule.limit {
                    break;
                }
                // Between batches, let the rest of the process (and other writers) in.
                tokio::task::yield_now().await;
            }
        }
        Ok(deleted)
    }
}
