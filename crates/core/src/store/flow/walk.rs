//! What a flow draw claims (docs/protocol.md, "Flow control tables"): the
//! decisions both dialects share. A backend reads, in its claim transaction,
//! the name's limits, its rate window and its running tasks per group, then
//! walks the name's due queued tasks in claim order, chunk by chunk, skipping
//! the groups with no room; this module says how many it may start, which
//! groups to skip, which locks to take (Postgres) and which tasks to claim.

use std::collections::{HashMap, HashSet};

use super::{FlowLimits, RateLimit};

/// The fewest candidates a chunk reads.
const MIN_CHUNK: i64 = 32;

/// One due queued task of the name, as the candidates statement reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    pub id: String,
    /// Its group, `""` when it has none.
    pub group: String,
    pub priority: i64,
    pub run_at_ms: i64,
}

/// The starts of one group (`""`: the name as a whole, or no group) inside
/// the window.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WindowCount {
    pub group: String,
    pub count: i64,
    pub oldest_ms: i64,
}

/// How many tasks a name-wide rate lets a draw start now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Allowance {
    Starts(i64),
    /// None until the oldest start in the window leaves it, in `retry_in_ms`.
    /// Starts are only ever added, so no other process can open it sooner.
    Full {
        retry_in_ms: i64,
    },
}

/// The window's lower bound at `now`: starts after it count.
pub fn window_since(rate: &RateLimit, now: i64) -> i64 {
    now - rate.per_ms
}

/// `rate` over the name as a whole (the window's `""` row) at `now`.
pub fn name_allowance(rate: &RateLimit, window: &[WindowCount], now: i64) -> Allowance {
    let whole = window.iter().find(|w| w.group.is_empty());
    let count = whole.map_or(0, |w| w.count);
    if count < rate.max {
        return Allowance::Starts(rate.max - count);
    }
    let oldest = whole.map_or(now, |w| w.oldest_ms);
    Allowance::Full {
        retry_in_ms: (oldest + rate.per_ms - now).max(1),
    }
}

/// The transaction-scoped lock a Postgres claimer takes before it counts and
/// claims under a key: the name's (`group` `None`) for a name-wide rate, a
/// group's for group concurrency and per-group rates.
pub fn lock_key(name: &str, group: Option<&str>) -> String {
    let key = match group {
        None => serde_json::json!([name]),
        Some(group) => serde_json::json!([name, group]),
    };
    format!("cairnq.flow:{key}")
}

/// One flow draw's walk over the candidates.
#[derive(Debug)]
pub struct Walk {
    name: String,
    limits: FlowLimits,
    want: usize,
    /// Running tasks per group.
    running: HashMap<String, i64>,
    /// Starts in the window per group (per-group rate).
    started: HashMap<String, i64>,
    /// Picked in this draw per group.
    taken: HashMap<String, i64>,
    /// Postgres: groups whose lock this transaction holds, and groups another
    /// claimer holds (skipped for this draw). `None` where the write lock
    /// serializes claimers (SQLite).
    locks: Option<(HashSet<String>, HashSet<String>)>,
    picks: Vec<String>,
}

impl Walk {
    /// A walk that picks up to `want` tasks; `locking` when claimers run
    /// concurrently and each group must be locked before it is counted.
    pub fn new(name: &str, limits: FlowLimits, want: i64, locking: bool) -> Walk {
        Walk {
            name: name.to_string(),
            limits,
            want: want.max(0) as usize,
            running: HashMap::new(),
            started: HashMap::new(),
            taken: HashMap::new(),
            locks: locking.then(Default::default),
            picks: Vec::new(),
        }
    }

    /// Whether the walk needs the running tasks per group.
    pub fn counts_running(&self) -> bool {
        self.limits.group_concurrency.is_some()
    }

    /// The per-group rate, when the walk needs the starts per group.
    pub fn group_rate(&self) -> Option<RateLimit> {
        self.limits.group_rate()
    }

    /// The running tasks per group, read after the groups were locked.
    pub fn set_running(&mut self, running: impl IntoIterator<Item = (String, i64)>) {
        self.running = running.into_iter().collect();
    }

    /// The window's starts per group, read after the groups were locked.
    pub fn set_started(&mut self, window: &[WindowCount]) {
        self.started = window.iter().map(|w| (w.group.clone(), w.count)).collect();
    }

    pub fn done(&self) -> bool {
        self.picks.len() >= self.want
    }

    /// How many candidates the next chunk reads.
    pub fn chunk_size(&self) -> i64 {
        (((self.want - self.picks.len()) * 2) as i64).max(MIN_CHUNK)
    }

    /// Whether `group` is limited at all: group concurrency holds grouped
    /// tasks; a per-group rate holds every task, `""` being one more group.
    fn limited(&self, group: &str) -> bool {
        (self.limits.group_concurrency.is_some() && !group.is_empty())
            || self.limits.group_rate().is_some()
    }

    /// How many more tasks of `group` this draw may start.
    fn room(&self, group: &str) -> i64 {
        let taken = self.taken.get(group).copied().unwrap_or(0);
        let mut room = i64::MAX;
        if let Some(cap) = self.limits.group_concurrency.filter(|_| !group.is_empty()) {
            room = room.min(cap - self.running.get(group).copied().unwrap_or(0) - taken);
        }
        if let Some(rate) = self.limits.group_rate() {
            room = room.min(rate.max - self.started.get(group).copied().unwrap_or(0) - taken);
        }
        room
    }

    /// The groups the candidates statement skips: no room left, or held by
    /// another claimer.
    pub fn excluded(&self) -> Vec<String> {
        let groups = self.running.keys().chain(self.started.keys());
        let mut excluded: HashSet<&String> = groups
            .chain(self.taken.keys())
            .filter(|g| self.limited(g) && self.room(g) <= 0)
            .collect();
        if let Some((_, refused)) = &self.locks {
            excluded.extend(refused);
        }
        let mut excluded: Vec<String> = excluded.into_iter().cloned().collect();
        excluded.sort_unstable();
        excluded
    }

    /// The lock keys of the chunk's limited groups this transaction neither
    /// holds nor was refused, each once, in the chunk's order (empty where
    /// nothing is locked).
    pub fn locks_wanted(&self, chunk: &[Candidate]) -> Vec<String> {
        let Some((held, refused)) = &self.locks else {
            return Vec::new();
        };
        let mut seen = HashSet::new();
        chunk
            .iter()
            .filter(|c| self.limited(&c.group))
            .filter(|c| !held.contains(&c.group) && !refused.contains(&c.group))
            .filter(|c| seen.insert(c.group.clone()))
            .map(|c| lock_key(&self.name, Some(&c.group)))
            .collect()
    }

    /// The answer to `locks_wanted`: `granted` are the keys taken.
    pub fn locked(&mut self, wanted: &[String], granted: &[String]) {
        let name = self.name.clone();
        let Some((held, refused)) = &mut self.locks else {
            return;
        };
        let granted: HashSet<&String> = granted.iter().collect();
        for key in wanted {
            let Some(group) = group_of_key(&name, key) else {
                continue;
            };
            if granted.contains(key) {
                held.insert(group);
            } else {
                refused.insert(group);
            }
        }
    }

    /// Pick from a chunk, in its order (claim order), each group up to its room.
    pub fn offer(&mut self, chunk: &[Candidate]) {
        for candidate in chunk {
            if self.done() {
                return;
            }
            let group = &candidate.group;
            if self.limited(group) {
                if let Some((held, _)) = &self.locks {
                    if !held.contains(group) {
                        continue;
                    }
                }
                if self.room(group) <= 0 {
                    continue;
                }
            }
            *self.taken.entry(group.clone()).or_default() += 1;
            self.picks.push(candidate.id.clone());
        }
    }

    /// The ids to claim.
    pub fn picks(&self) -> &[String] {
        &self.picks
    }
}

/// The group a `lock_key(name, Some(group))` names.
fn group_of_key(name: &str, key: &str) -> Option<String> {
    let json = key.strip_prefix("cairnq.flow:")?;
    match serde_json::from_str::<Vec<String>>(json).ok()?.as_slice() {
        [n, group] if n == name => Some(group.clone()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn candidate(id: &str, group: &str) -> Candidate {
        Candidate {
            id: id.into(),
            group: group.into(),
            priority: 0,
            run_at_ms: 0,
        }
    }

    fn limits(rate: Option<(i64, bool)>, group_concurrency: Option<i64>) -> FlowLimits {
        FlowLimits {
            rate: rate.map(|(max, per_group)| RateLimit {
                max,
                per_ms: 1_000,
                per_group,
            }),
            group_concurrency,
        }
    }

    #[test]
    fn a_full_name_window_says_when_it_opens() {
        let rate = RateLimit {
            max: 2,
            per_ms: 1_000,
            per_group: false,
        };
        let window = |count| {
            vec![WindowCount {
                group: String::new(),
                count,
                oldest_ms: 10_300,
            }]
        };
        assert_eq!(name_allowance(&rate, &[], 11_000), Allowance::Starts(2));
        assert_eq!(
            name_allowance(&rate, &window(1), 11_000),
            Allowance::Starts(1)
        );
        assert_eq!(
            name_allowance(&rate, &window(2), 11_000),
            Allowance::Full { retry_in_ms: 300 }
        );
        assert_eq!(window_since(&rate, 11_000), 10_000);
    }

    #[test]
    fn busy_groups_are_skipped_and_the_others_claimed_in_order() {
        let mut walk = Walk::new("export", limits(None, Some(1)), 10, false);
        walk.set_running([("a".to_string(), 1)]);
        assert_eq!(walk.excluded(), ["a"]);
        walk.offer(&[
            candidate("1", "a"),
            candidate("2", "b"),
            candidate("3", "b"),
            candidate("4", ""),
            candidate("5", ""),
            candidate("6", "c"),
        ]);
        assert_eq!(walk.picks(), ["2", "4", "5", "6"]);
        assert_eq!(walk.excluded(), ["a", "b", "c"]);
        assert!(!walk.done());
    }

    #[test]
    fn a_group_takes_up_to_its_free_slots_and_the_walk_stops_at_want() {
        let mut walk = Walk::new("export", limits(None, Some(3)), 3, false);
        walk.set_running([("a".to_string(), 1)]);
        walk.offer(&[
            candidate("1", "a"),
            candidate("2", "a"),
            candidate("3", "a"),
            candidate("4", "b"),
            candidate("5", "c"),
        ]);
        assert_eq!(walk.picks(), ["1", "2", "4"]);
        assert!(walk.done());
    }

    #[test]
    fn a_per_group_rate_counts_the_window_and_ungrouped_tasks_share_one() {
        let mut walk = Walk::new("embed", limits(Some((2, true)), None), 10, false);
        walk.set_started(&[
            WindowCount {
                group: "a".into(),
                count: 2,
                oldest_ms: 0,
            },
            WindowCount {
                group: String::new(),
                count: 1,
                oldest_ms: 0,
            },
        ]);
        assert_eq!(walk.excluded(), ["a"]);
        walk.offer(&[
            candidate("1", "a"),
            candidate("2", ""),
            candidate("3", ""),
            candidate("4", "b"),
            candidate("5", "b"),
            candidate("6", "b"),
        ]);
        assert_eq!(walk.picks(), ["2", "4", "5"]);
    }

    #[test]
    fn with_locks_only_held_groups_are_claimed() {
        let mut walk = Walk::new("export", limits(None, Some(1)), 10, true);
        let chunk = [
            candidate("1", "a"),
            candidate("2", "b"),
            candidate("3", "a"),
            candidate("4", ""),
        ];
        let wanted = walk.locks_wanted(&chunk);
        assert_eq!(
            wanted,
            [lock_key("export", Some("a")), lock_key("export", Some("b"))]
        );
        walk.locked(&wanted, &wanted[..1]);
        assert_eq!(walk.excluded(), ["b"]);
        walk.offer(&chunk);
        assert_eq!(walk.picks(), ["1", "4"]);
        assert!(walk.locks_wanted(&chunk).is_empty());
        assert_eq!(walk.excluded(), ["a", "b"]);
    }

    #[test]
    fn without_limits_the_walk_takes_the_head() {
        let mut walk = Walk::new("plain", FlowLimits::default(), 2, true);
        let chunk = [
            candidate("1", "a"),
            candidate("2", "a"),
            candidate("3", "b"),
        ];
        assert!(walk.locks_wanted(&chunk).is_empty());
        walk.offer(&chunk);
        assert_eq!(walk.picks(), ["1", "2"]);
        assert!(walk.excluded().is_empty());
        assert_eq!(walk.chunk_size(), MIN_CHUNK);
    }

    #[test]
    fn lock_keys_name_the_group_unambiguously() {
        assert_eq!(lock_key("a", None), r#"cairnq.flow:["a"]"#);
        assert_eq!(lock_key("a", Some("b\"c")), r#"cairnq.flow:["a","b\"c"]"#);
        assert_eq!(
            group_of_key("a", &lock_key("a", Some("x:1"))),
            Some("x:1".into())
        );
        assert_eq!(group_of_key("b", &lock_key("a", Some("x"))), None);
    }
}
