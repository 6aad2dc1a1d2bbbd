//! What a worker measures of its calls, per task name, for the metrics
//! (docs/api.md, "Metrics"): each task's queue wait (its handler's start −
//! `run_at_ms`) and each call's run time (handler start to end).

use std::collections::BTreeMap;
use std::time::Duration;

use super::call::Call;
use crate::metrics::histogram::{Histogram, QUEUE_WAIT_BUCKETS, RUN_TIME_BUCKETS};

#[derive(Clone, Debug, PartialEq)]
pub struct NameTimings {
    pub queue_wait: Histogram,
    pub run_time: Histogram,
}

impl Default for NameTimings {
    fn default() -> NameTimings {
        NameTimings {
            queue_wait: Histogram::new(QUEUE_WAIT_BUCKETS),
            run_time: Histogram::new(RUN_TIME_BUCKETS),
        }
    }
}

/// Task name → its timings.
pub type Timings = BTreeMap<String, NameTimings>;

/// A call's handlers start `now`: each task has waited since it was due.
pub(crate) fn started(timings: &mut Timings, call: &Call, now: i64) {
    let name = of_name(timings, &call.name);
    for context in &call.contexts {
        let waited = context.task().queue_wait_ms(now);
        name.queue_wait.observe(waited as f64 / 1000.0);
    }
}

/// `name`'s timings, created on its first call (its name copied only then).
fn of_name<'a>(timings: &'a mut Timings, name: &str) -> &'a mut NameTimings {
    if !timings.contains_key(name) {
        timings.insert(name.to_string(), NameTimings::default());
    }
    timings.get_mut(name).expect("inserted above")
}

/// A call's handler ran for `took`.
pub(crate) fn ran(timings: &mut Timings, name: &str, took: Duration) {
    of_name(timings, name).run_time.observe(took.as_secs_f64());
}

/// Adds `other`'s timings into `into`, name by name.
pub fn merge(into: &mut Timings, other: &Timings) {
    for (name, timings) in other {
        let mine = of_name(into, name);
        mine.queue_wait.merge(&timings.queue_wait);
        mine.run_time.merge(&timings.run_time);
    }
}
