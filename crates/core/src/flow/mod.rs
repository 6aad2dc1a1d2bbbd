//! Flow control (docs/api.md, "Flow control"; docs/protocol.md, "Flow control
//! tables"): rate limits per task name or per group, and at most N running
//! tasks of one group, held across every process by the claim transaction.
//!
//! A task's group is its metadata's `"cairnq.group"` (`group`); a name's
//! limits are what its workers declare (`spec`), stored in a table of this
//! SDK's own, the latest declaration winning (`declare`); a rate with a `key`
//! draws from the key's budget, which every name declaring the key shares,
//! its limit the latest declared for the key; `draw` and `pick`
//! decide what a flow draw claims, `claim` runs it. Both are written once for
//! both dialects, whose backends (`sqlite/flow.rs`, `postgres/flow.rs`) only
//! run the statements of each step (`transaction`); `backend` is the seam
//! they implement outside a claim.

pub mod backend;
pub mod claim;
pub mod declare;
pub mod draw;
pub mod group;
pub mod pick;
pub mod spec;
pub mod transaction;

/// The table of declarations, as reports of its rows name it.
pub const LIMITS_TABLE: &str = "cairnq_flow_limits";

/// The table of shared keys' rates, as reports of its rows name it.
pub const KEYS_TABLE: &str = "cairnq_flow_keys";

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

impl RateLimit {
    /// The rate stored as columns (`rate_max`, `rate_per_ms`, `rate_per_group`).
    pub fn from_columns(
        rate_max: Option<i64>,
        rate_per_ms: Option<i64>,
        rate_per_group: i64,
    ) -> Option<RateLimit> {
        match (rate_max, rate_per_ms) {
            (Some(max), Some(per_ms)) => Some(RateLimit {
                max,
                per_ms,
                per_group: rate_per_group != 0,
            }),
            _ => None,
        }
    }

    /// As a worker writes it, for messages: `{ max: 20, perMs: 1000 }`.
    pub fn describe(&self) -> String {
        let per_group = if self.per_group {
            ", perGroup: true"
        } else {
            ""
        };
        format!("{{ max: {}, perMs: {}{per_group} }}", self.max, self.per_ms)
    }
}

/// Whose starts a rate counts: a name's own (`id` the task name), or a
/// `rateLimit.key`'s, shared by every name declaring it (`shared`). Stored
/// as `cairnq_flow_starts`' `name` and `shared_key`, so a key never counts a
/// task name's starts however the two are spelled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Budget {
    pub id: String,
    pub shared: bool,
}

impl Budget {
    /// `shared_key` as the statements bind it (0/1).
    pub fn shared_column(&self) -> i64 {
        self.shared as i64
    }
}

/// A name's limits: what a worker declares, and what the table holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FlowLimits {
    pub rate: Option<RateLimit>,
    /// `rateLimit.key`: the rate is the key's budget, shared by every name
    /// that declares it.
    pub rate_key: Option<String>,
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
        rate_key: Option<String>,
    ) -> FlowLimits {
        let rate = RateLimit::from_columns(rate_max, rate_per_ms, rate_per_group);
        FlowLimits {
            rate,
            rate_key: rate_key.filter(|_| rate.is_some()),
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

    /// The budget the rate of `name` draws from.
    pub fn budget(&self, name: &str) -> Budget {
        match &self.rate_key {
            Some(key) => Budget {
                id: key.clone(),
                shared: true,
            },
            None => Budget {
                id: name.to_string(),
                shared: false,
            },
        }
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
            match &self.rate_key {
                Some(key) => parts.push(format!(
                    "rateLimit {{ key: {key:?}, {}",
                    &rate.describe()[2..]
                )),
                None => parts.push(format!("rateLimit {}", rate.describe())),
            }
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
    /// The key's stored rate, when the name's rate has a key.
    pub key: Option<KeyDeclared>,
}

impl Declared {
    /// What a draw enforces: the name's limits, its rate the key's when
    /// the name draws from a key.
    pub fn enforced(&self) -> FlowLimits {
        let mut limits = self.limits.clone();
        if let Some(key) = &self.key {
            limits.rate = Some(key.rate);
        }
        limits
    }
}

/// A key's rate as `cairnq_flow_keys` holds it: the latest declared.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyDeclared {
    pub rate: RateLimit,
    /// The declaring worker's id.
    pub by: String,
    pub at_ms: i64,
}

/// A stored declaration a different one replaced: of a name's limits, or of
/// a key's rate (`key`), which every name sharing the key then draws by.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Replaced {
    Name {
        name: String,
        limits: FlowLimits,
        previous: Declared,
    },
    Key {
        key: String,
        /// The name whose declaration replaced it.
        name: String,
        rate: RateLimit,
        previous: KeyDeclared,
    },
}

fn iso_ms(at_ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(at_ms).map_or_else(
        || at_ms.to_string(),
        |at| at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
    )
}

impl Replaced {
    /// The worker that declared what was replaced.
    pub fn previous_by(&self) -> &str {
        match self {
            Replaced::Name { previous, .. } => &previous.by,
            Replaced::Key { previous, .. } => &previous.by,
        }
    }

    /// What the declaring worker logs, once (docs/api.md, "Flow control").
    pub fn notice(&self) -> String {
        match self {
            Replaced::Name {
                name,
                limits,
                previous,
            } => format!(
                "task \"{name}\": this worker declares {}, replacing {} declared by {} at {}; the latest declaration wins for every worker that declares limits for \"{name}\"",
                limits.describe(),
                previous.limits.describe(),
                previous.by,
                iso_ms(previous.at_ms),
            ),
            Replaced::Key {
                key,
                name,
                rate,
                previous,
            } => format!(
                "rateLimit key \"{key}\": this worker declares {} (task \"{name}\"), replacing {} declared by {} at {}; the latest declaration wins for every task name that declares the key",
                rate.describe(),
                previous.rate.describe(),
                previous.by,
                iso_ms(previous.at_ms),
            ),
        }
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
            rate_key: None,
            group_concurrency: Some(2),
        };
        let (max, per_ms, per_group, n) = limits.columns();
        assert_eq!(
            FlowLimits::from_columns(max, per_ms, per_group, n, None),
            limits
        );
        assert_eq!(
            FlowLimits::from_columns(None, None, 0, None, Some("k".into())),
            FlowLimits::default()
        );
        assert_eq!(
            limits.describe(),
            "rateLimit { max: 20, perMs: 1000, perGroup: true }, groupConcurrency 2"
        );
        assert_eq!(limits.group_rate(), limits.rate);
        assert_eq!(limits.name_rate(), None);
        assert_eq!(
            limits.budget("a"),
            Budget {
                id: "a".into(),
                shared: false
            }
        );
        let keyed = FlowLimits {
            rate_key: Some("openai".into()),
            ..limits
        };
        assert_eq!(
            keyed.describe(),
            "rateLimit { key: \"openai\", max: 20, perMs: 1000, perGroup: true }, groupConcurrency 2"
        );
        assert_eq!(
            keyed.budget("a"),
            Budget {
                id: "openai".into(),
                shared: true
            }
        );
    }
}
