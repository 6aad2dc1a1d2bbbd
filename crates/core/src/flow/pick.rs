//! Which of a chunk's scanned rows a flow draw claims (docs/api.md, "Flow
//! control"): the rules in one place, given the rows a backend read in claim
//! order and the counts of their groups.

use std::collections::HashMap;

use super::draw::GroupLimits;

/// A due queued row as a chunk read it: its id and group (`""`: none).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scanned {
    pub id: String,
    pub group: String,
}

/// What already counts against each group of the scanned rows: its running
/// rows of the name (under a group concurrency) and its starts in the window
/// (under a per-group rate, `""` being the tasks without a group). A group
/// missing from a map counts 0.
#[derive(Clone, Debug, Default)]
pub struct GroupCounts {
    pub running: HashMap<String, i64>,
    pub started: HashMap<String, i64>,
}

/// The ids to claim of `scanned` (in claim order), at most `limit`, in the
/// order claimed: in turns, every group's first before any group's second,
/// ties in claim order. A group's n-th row has room when the group's running
/// rows plus n stay within `groups.concurrency` (grouped rows only: the tasks
/// without a group have no concurrency limit) and its starts plus n within
/// `groups.rate_max` (the tasks without a group being one group).
pub fn pick(
    scanned: &[Scanned],
    counts: &GroupCounts,
    groups: &GroupLimits,
    limit: i64,
) -> Vec<String> {
    let count = |map: &HashMap<String, i64>, group: &str| map.get(group).copied().unwrap_or(0);
    let mut turns: HashMap<&str, i64> = HashMap::new();
    let mut chosen: Vec<(i64, usize)> = Vec::new();
    for (position, row) in scanned.iter().enumerate() {
        let turn = turns.entry(row.group.as_str()).or_insert(0);
        *turn += 1;
        let has_room = groups.concurrency.is_none_or(|max| {
            row.group.is_empty() || *turn + count(&counts.running, &row.group) <= max
        }) && groups
            .rate_max
            .is_none_or(|max| *turn + count(&counts.started, &row.group) <= max);
        if has_room {
            chosen.push((*turn, position));
        }
    }
    chosen.sort_unstable();
    chosen
        .into_iter()
        .take(usize::try_from(limit).unwrap_or(0))
        .map(|(_, position)| scanned[position].id.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(spec: &[(&str, &str)]) -> Vec<Scanned> {
        spec.iter()
            .map(|(id, group)| Scanned {
                id: (*id).into(),
                group: (*group).into(),
            })
            .collect()
    }

    fn counts(running: &[(&str, i64)], started: &[(&str, i64)]) -> GroupCounts {
        let map = |pairs: &[(&str, i64)]| pairs.iter().map(|(g, n)| ((*g).into(), *n)).collect();
        GroupCounts {
            running: map(running),
            started: map(started),
        }
    }

    const CONCURRENCY_2: GroupLimits = GroupLimits {
        concurrency: Some(2),
        rate_max: None,
        since: 0,
    };

    #[test]
    fn every_groups_first_before_any_second_ties_in_claim_order() {
        let scanned = rows(&[
            ("a1", "a"),
            ("a2", "a"),
            ("b1", "b"),
            ("a3", "a"),
            ("c1", "c"),
        ]);
        let none = GroupCounts::default();
        assert_eq!(
            pick(&scanned, &none, &CONCURRENCY_2, 10),
            ["a1", "b1", "c1", "a2"]
        );
        assert_eq!(pick(&scanned, &none, &CONCURRENCY_2, 2), ["a1", "b1"]);
        assert!(pick(&scanned, &none, &CONCURRENCY_2, 0).is_empty());
    }

    #[test]
    fn running_rows_take_a_groups_room() {
        let scanned = rows(&[("a1", "a"), ("a2", "a"), ("b1", "b"), ("b2", "b")]);
        let running = counts(&[("a", 1), ("b", 2), ("other", 5)], &[]);
        assert_eq!(pick(&scanned, &running, &CONCURRENCY_2, 10), ["a1"]);
    }

    #[test]
    fn ungrouped_rows_have_no_concurrency_limit() {
        let scanned = rows(&[("u1", ""), ("u2", ""), ("u3", ""), ("a1", "a")]);
        let running = counts(&[("", 9)], &[]);
        assert_eq!(
            pick(&scanned, &running, &CONCURRENCY_2, 10),
            ["u1", "a1", "u2", "u3"]
        );
    }

    #[test]
    fn a_group_rate_counts_starts_ungrouped_rows_as_one_group() {
        let limits = GroupLimits {
            concurrency: None,
            rate_max: Some(2),
            since: 0,
        };
        let scanned = rows(&[
            ("u1", ""),
            ("u2", ""),
            ("a1", "a"),
            ("a2", "a"),
            ("b1", "b"),
        ]);
        let started = counts(&[], &[("", 1), ("a", 2)]);
        assert_eq!(pick(&scanned, &started, &limits, 10), ["u1", "b1"]);
    }

    #[test]
    fn both_limits_hold_together() {
        let limits = GroupLimits {
            concurrency: Some(1),
            rate_max: Some(3),
            since: 0,
        };
        let scanned = rows(&[
            ("a1", "a"),
            ("a2", "a"),
            ("b1", "b"),
            ("u1", ""),
            ("u2", ""),
        ]);
        let both = counts(&[("b", 0)], &[("", 2), ("b", 3)]);
        assert_eq!(pick(&scanned, &both, &limits, 10), ["a1", "u1"]);
    }

    #[test]
    fn without_group_limits_every_row_is_claimed_in_turns() {
        let limits = GroupLimits {
            concurrency: None,
            rate_max: None,
            since: 0,
        };
        let scanned = rows(&[("a1", "a"), ("a2", "a"), ("b1", "b")]);
        assert_eq!(
            pick(&scanned, &GroupCounts::default(), &limits, 10),
            ["a1", "b1", "a2"]
        );
    }
}
