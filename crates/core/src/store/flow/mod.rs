//! Flow control (docs/api.md, "Flow control"; docs/protocol.md, "Flow control
//! tables"): rate limits per task name or per group, and at most N running
//! tasks of one group, held across every process by the claim transaction.
//!
//! A task's group is its metadata's `"cairnq.group"` (`group`); a name's
//! limits are what its workers declare (`spec`), stored in a table of this
//! SDK's own, the latest declaration winning (`declare`); `draw` and `pick`
//! decide what a flow draw claims, `claim` runs it. Both are written once for
//! both dialects, whose backends (`sqlite/flow.rs`, `postgres/flow.rs`) only
//! run the statements of each step (`transaction`).

pub mod claim;
pub mod declare;
pub mod draw;
pub mod group;
pub mod pick;
pub mod spec;
pub mod transaction;

/// The table of declarations, as reports of its rows name it.
pub const LIMITS_TABLE: &str = "cairnq_flow_limits";

/// The metadata key holding a task's group.
pub const GROUP_METADATA_KEY: &str = "cairnq.group";

/// `rateLimit`: at most `max` starts in any window of `per_ms`, of the name as
/// a whole or, `per_group`, of each of its groups.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateLimit {
    pub max: i64,
    pub per_ms: i64,
    pub per_group: bool,
}

/// A name's limits: what a worker declares, and what the table holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowLimits {
    pub rate: Option<RateLimit>,
    /// `groupConcurrency`: running tasks per group, across every process.
    pub group_concurrency: Option<i64>,
}

impl FlowLimits {
    /// The limits stored as `cairnq_flow_limits`' columns.
    pub fn from_columns(
        rate_max: Option<i64>,
        rate_per_ms: Option<i64>,
        rate_per_group: i64,
        group_concurrency: Option<i64>,
    ) -> FlowLimits {
        let rate = match (rate_max, rate_per_ms) {
            (Some(max), Some(per_ms)) => Some(RateLimit {
                max,
                per_ms,
                per_group: rate_per_group != 0,
            }),
            _ => None,
        };
        FlowLimits {
            rate,
            group_concurrency,
        }
    }

    /// `rate_max`, `rate_per_ms`, `rate_per_group` (0/1), `group_concurrency`.
    pub fn columns(&self) -> (Option<i64>, Option<i64>, i64, Option<i64>) {
        (
            self.rate.map(|r| r.max),
            self.rate.map(|r| r.per_ms),
            self.rate.is_some_and(|r| r.per_group) as i64,
            self.group_concurrency,
        )
    }

    /// A rate over the name as a whole.
    pub fn name_rate(&self) -> Option<RateLimit> {
        self.rate.filter(|r| !r.per_group)
    }

    /// A rate per group.
    pub fn group_rate(&self) -> Option<RateLimit> {
        self.rate.filter(|r| r.per_group)
    }

    /// The options as a worker writes them, for messages.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(rate) = self.rate {
            let per_group = if rate.per_group {
                ", perGroup: true"
            } else {
                ""
            };
            parts.push(format!(
                "rateLimit {{ max: {}, perMs: {}{per_group} }}",
                rate.max, rate.per_ms
            ));
        }
        if let Some(n) = self.group_concurrency {
            parts.push(format!("groupConcurrency {n}"));
        }
        if parts.is_empty() {
            "no limits".into()
        } else {
            parts.join(", ")
        }
    }
}

/// One worker's declaration of a name's limits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Declaration {
    pub name: String,
    pub limits: FlowLimits,
}

/// A declaration as the table holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Declared {
    pub limits: FlowLimits,
    /// The declaring worker's id.
    pub by: String,
    pub at_ms: i64,
}

/// A declaration that replaced a different one of another time or worker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replaced {
    pub name: String,
    pub limits: FlowLimits,
    pub previous: Declared,
}

impl Replaced {
    /// What the declaring worker logs, once (docs/api.md, "Flow control").
    pub fn notice(&self) -> String {
        format!(
            "task \"{}\": this worker declares {}, replacing {} declared by {} at {}; the latest declaration wins for every worker that declares limits for \"{}\"",
            self.name,
            self.limits.describe(),
            self.previous.limits.describe(),
            self.previous.by,
            chrono::DateTime::from_timestamp_millis(self.previous.at_ms)
                .map_or_else(|| self.previous.at_ms.to_string(), |at| at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)),
            self.name,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_round_trip_through_their_columns() {
        let limits = FlowLimits {
            rate: Some(RateLimit {
                max: 20,
                per_ms: 1_000,
                per_group: true,
            }),
            group_concurrency: Some(2),
        };
        let (max, per_ms, per_group, n) = limits.columns();
        assert_eq!(FlowLimits::from_columns(max, per_ms, per_group, n), limits);
        assert_eq!(
            FlowLimits::from_columns(None, None, 0, None),
            FlowLimits::default()
        );
        assert_eq!(
            limits.describe(),
            "rateLimit { max: 20, perMs: 1000, perGroup: true }, groupConcurrency 2"
        );
        assert_eq!(limits.group_rate(), limits.rate);
        assert_eq!(limits.name_rate(), None);
    }
}
