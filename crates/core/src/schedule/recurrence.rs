//! When a schedule's occurrences fall (docs/api.md, "Schedules"): a cron
//! expression in its zone, or a fixed interval (`every`). An interval has no
//! calendar: its occurrences are a known one (the pending occurrence, or the
//! start) plus whole periods, so every answer takes that `anchor`.

use super::cron::Occurrences;
use crate::error::Result;

#[derive(Clone, Debug)]
pub enum Recurrence {
    Cron(Box<Occurrences>),
    /// Every this many milliseconds.
    Every(i64),
}

impl Recurrence {
    /// A stored schedule's recurrence: its interval when it has one, else
    /// its cron in its zone.
    pub fn of(cron: &str, tz: &str, every_ms: Option<i64>) -> Result<Recurrence> {
        match every_ms {
            Some(every) => Ok(Recurrence::Every(every)),
            None => Occurrences::parse(cron, tz).map(|parsed| Recurrence::Cron(Box::new(parsed))),
        }
    }

    /// The first occurrence strictly after `ms`.
    pub fn next_after(&self, anchor: i64, ms: i64) -> Result<i64> {
        match self {
            Recurrence::Cron(occurrences) => occurrences.next_after(ms),
            Recurrence::Every(every) => Ok(anchor + ((ms - anchor).div_euclid(*every) + 1) * every),
        }
    }

    /// The last occurrence at or before `ms`, if any.
    pub fn last_at_or_before(&self, anchor: i64, ms: i64) -> Option<i64> {
        match self {
            Recurrence::Cron(occurrences) => occurrences.last_at_or_before(ms),
            Recurrence::Every(every) => Some(anchor + (ms - anchor).div_euclid(*every) * every),
        }
    }

    /// Up to `cap` of the latest occurrences in `[from, to]`, ascending, and
    /// whether earlier ones in the range were left out.
    pub fn latest_in(&self, anchor: i64, from: i64, to: i64, cap: usize) -> (Vec<i64>, bool) {
        match self {
            Recurrence::Cron(occurrences) => occurrences.latest_in(from, to, cap),
            Recurrence::Every(every) => {
                let mut found = Vec::new();
                let mut cursor = self.last_at_or_before(anchor, to);
                while let Some(at) = cursor.filter(|&at| at >= from) {
                    if found.len() == cap {
                        found.reverse();
                        return (found, true);
                    }
                    found.push(at);
                    cursor = Some(at - every);
                }
                found.reverse();
                (found, false)
            }
        }
    }

    /// The first occurrence of a schedule set at `now` that starts at
    /// `start` (if given): after `now`, and not before `start`. An interval
    /// counts its periods from the start, else from `now`.
    pub fn first(&self, start: Option<i64>, now: i64) -> Result<i64> {
        let after = start.map_or(now, |start| now.max(start - 1));
        self.next_after(start.unwrap_or(now), after)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interval_counts_whole_periods_from_its_anchor() {
        let every = Recurrence::Every(1_000);
        assert_eq!(every.next_after(500, 500).unwrap(), 1_500);
        assert_eq!(every.next_after(500, 1_499).unwrap(), 1_500);
        assert_eq!(every.next_after(500, 1_500).unwrap(), 2_500);
        // Before the anchor too: the periods run both ways.
        assert_eq!(every.next_after(5_500, 100).unwrap(), 500);
        assert_eq!(every.last_at_or_before(500, 2_499), Some(1_500));
        assert_eq!(every.last_at_or_before(500, 2_500), Some(2_500));
    }

    #[test]
    fn an_interval_catches_up_like_a_cron() {
        let every = Recurrence::Every(1_000);
        assert_eq!(
            every.latest_in(0, 0, 3_500, 10),
            (vec![0, 1_000, 2_000, 3_000], false)
        );
        assert_eq!(every.latest_in(0, 0, 3_500, 2), (vec![2_000, 3_000], true));
        assert_eq!(every.latest_in(0, 4_000, 3_500, 2), (vec![], false));
    }

    #[test]
    fn the_first_occurrence_waits_for_the_start() {
        let every = Recurrence::Every(60_000);
        // No start: one period from now.
        assert_eq!(every.first(None, 1_000).unwrap(), 61_000);
        // A start ahead: the start itself.
        assert_eq!(every.first(Some(10_000), 1_000).unwrap(), 10_000);
        // A start behind: the periods counted from it, the first after now.
        assert_eq!(every.first(Some(0), 130_000).unwrap(), 180_000);
        let cron = Recurrence::of("* * * * *", "UTC", None).unwrap();
        assert_eq!(cron.first(None, 1_000).unwrap(), 60_000);
        assert_eq!(cron.first(Some(120_000), 1_000).unwrap(), 120_000);
        assert_eq!(cron.first(Some(120_001), 1_000).unwrap(), 180_000);
    }
}
