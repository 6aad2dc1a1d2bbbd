//! A schedule's occurrences: a cron expression read by `croner` in an IANA
//! zone from `chrono-tz` (docs/api.md, "Schedules"). Occurrences are whole
//! seconds, kept as epoch milliseconds.
//!
//! `croner` walks the zone's wall clock as if it never changed; the rule for
//! a wall time a DST change skips or repeats is Vixie/ISC cron's, one rule
//! for every expression (`Timing`): minute and hour fields that hold no `*`
//! and no step name fixed wall times, which run once at the first instant
//! after a gap and once in a repeated hour; any other expression follows
//! real time, so a skipped time has no occurrence and a repeated one has one
//! in each pass.

use std::str::FromStr;

use chrono::{DateTime, LocalResult, Offset, TimeZone, Utc};
use chrono_tz::Tz;
use croner::errors::CronError;
use croner::parser::{CronParser, Seconds, Year};
use croner::Cron;

use crate::error::{Error, Result};

/// The nicknames `croner` reads, as their five fields would say it.
const NICKNAMES: [(&str, &str); 6] = [
    ("@yearly", "0 0 1 1 *"),
    ("@annually", "0 0 1 1 *"),
    ("@monthly", "0 0 1 * *"),
    ("@weekly", "0 0 * * 0"),
    ("@daily", "0 0 * * *"),
    ("@hourly", "0 * * * *"),
];

/// Longer than any DST shift: how far a change near an instant is looked for.
const LONGEST_SHIFT_S: i64 = 3 * 3600;

/// How an expression's occurrences meet a DST change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Timing {
    /// Minute and hour are fixed wall times (no `*`, no step).
    WallTime,
    /// Minute or hour holds a `*` or a step.
    RealTime,
}

impl Timing {
    /// The timing of `fields` (five, or six with seconds first).
    fn of(fields: &str) -> Timing {
        let fields: Vec<&str> = fields.split_whitespace().collect();
        let minute = usize::from(fields.len() == 6);
        let follows_real_time = fields
            .iter()
            .skip(minute)
            .take(2)
            .any(|field| field.contains(['*', '/']));
        if follows_real_time {
            Timing::RealTime
        } else {
            Timing::WallTime
        }
    }
}

/// A parsed cron expression in its zone.
#[derive(Clone, Debug)]
pub struct Occurrences {
    /// Matched against wall times, kept as UTC date-times.
    cron: Cron,
    zone: Tz,
    timing: Timing,
}

impl Occurrences {
    /// Five fields, or six with seconds first; the `@hourly`, `@daily`, …
    /// nicknames. The errors name the field (`cron`, `tz`) and an
    /// unsupported nickname.
    pub fn parse(cron: &str, tz: &str) -> Result<Occurrences> {
        let zone = Tz::from_str(tz).map_err(|_| {
            Error::Invalid(format!("tz must be an IANA time zone name, got {tz:?}"))
        })?;
        let invalid = |why: String| Error::Invalid(format!("cron {cron:?} is not valid: {why}"));
        let fields = match cron.trim() {
            nickname if nickname.starts_with('@') => {
                let word = nickname.split_whitespace().next().unwrap_or(nickname);
                NICKNAMES
                    .iter()
                    .find(|(name, _)| name.eq_ignore_ascii_case(nickname))
                    .map(|(_, fields)| *fields)
                    .ok_or_else(|| {
                        invalid(format!(
                            "the nickname {word} is not supported (supported: {})",
                            NICKNAMES.map(|(name, _)| name).join(", ")
                        ))
                    })?
            }
            fields => fields,
        };
        let parsed = CronParser::builder()
            .seconds(Seconds::Optional)
            .year(Year::Disallowed)
            .build()
            .parse(fields)
            .map_err(|e| invalid(describe(e)))?;
        let occurrences = Occurrences {
            cron: parsed,
            zone,
            timing: Timing::of(fields),
        };
        // A valid expression may still name no day that exists (`0 0 30 2 *`).
        occurrences
            .next_after(0)
            .map_err(|_| invalid("it never matches".into()))?;
        Ok(occurrences)
    }

    /// The first occurrence strictly after `ms`.
    pub fn next_after(&self, ms: i64) -> Result<i64> {
        let after = ms.div_euclid(1000);
        // A fall-back within `repeat` after `after` repeats wall times that
        // are already behind it: the walk starts that much earlier.
        let repeat = self.fall_back_within(after, after + self.shift_after(after));
        let mut found: Option<i64> = None;
        let mut cursor = self.wall(after) - repeat;
        while let Ok(next) = self.cron.find_next_occurrence(&wall_clock(cursor), false) {
            cursor = next.timestamp();
            // Only a fall-back lets a later wall time name an earlier
            // instant, and by less than `repeat`.
            if found.is_some_and(|best| cursor > self.wall(best) + repeat) {
                break;
            }
            for instant in self.instants(cursor).into_iter().flatten() {
                if instant > after && found.is_none_or(|best| instant < best) {
                    found = Some(instant);
                }
            }
        }
        found
            .map(|s| s * 1000)
            .ok_or_else(|| Error::Invalid(format!("cron has no next occurrence after {ms}")))
    }

    /// The last occurrence at or before `ms`, if any.
    pub fn last_at_or_before(&self, ms: i64) -> Option<i64> {
        let at = ms.div_euclid(1000);
        // A fall-back within `repeat` before `at` gave earlier instants
        // later wall times: the walk starts that much later.
        let repeat = self.fall_back_within(at - self.shift_before(at), at);
        let mut found: Option<i64> = None;
        let mut cursor = self.wall(at) + repeat;
        let mut inclusive = true;
        while let Ok(previous) = self
            .cron
            .find_previous_occurrence(&wall_clock(cursor), inclusive)
        {
            inclusive = false;
            cursor = previous.timestamp();
            if found.is_some_and(|best| cursor < self.wall(best) - repeat) {
                break;
            }
            for instant in self.instants(cursor).into_iter().flatten() {
                if instant <= at && found.is_none_or(|best| instant > best) {
                    found = Some(instant);
                }
            }
        }
        found.map(|s| s * 1000)
    }

    /// Up to `cap` of the latest occurrences in `[from, to]`, ascending, and
    /// whether earlier ones in the range were left out.
    pub fn latest_in(&self, from: i64, to: i64, cap: usize) -> (Vec<i64>, bool) {
        let mut found = Vec::new();
        let mut cursor = self.last_at_or_before(to);
        while let Some(at) = cursor.filter(|&at| at >= from) {
            if found.len() == cap {
                found.reverse();
                return (found, true);
            }
            found.push(at);
            cursor = self.last_at_or_before(at - 1);
        }
        found.reverse();
        (found, false)
    }

    /// The instants a matching wall time runs at (seconds), by `timing`.
    fn instants(&self, wall: i64) -> [Option<i64>; 2] {
        let Some(local) = DateTime::from_timestamp(wall, 0).map(|t| t.naive_utc()) else {
            return [None, None];
        };
        match (self.zone.from_local_datetime(&local), self.timing) {
            (LocalResult::Single(at), _) => [Some(at.timestamp()), None],
            (LocalResult::Ambiguous(first, _), Timing::WallTime) => [Some(first.timestamp()), None],
            (LocalResult::Ambiguous(first, second), Timing::RealTime) => {
                [Some(first.timestamp()), Some(second.timestamp())]
            }
            (LocalResult::None, Timing::WallTime) => [Some(self.gap_end(wall)), None],
            (LocalResult::None, Timing::RealTime) => [None, None],
        }
    }

    /// The first instant whose wall time is past `wall`, a time a gap skips.
    fn gap_end(&self, wall: i64) -> i64 {
        // Zones are within UTC-12 and UTC+14: the instant is in this range,
        // across which the wall time only rises (one change at a time).
        let (mut low, mut high) = (wall - 15 * 3600, wall + 13 * 3600);
        while low < high {
            let middle = low + (high - low) / 2;
            if self.wall(middle) > wall {
                high = middle;
            } else {
                low = middle + 1;
            }
        }
        low
    }

    /// How far the offset falls between `from` and `to` (0 if it does not).
    fn fall_back_within(&self, from: i64, to: i64) -> i64 {
        (self.offset(from) - self.offset(to)).max(0)
    }

    /// The fall-back right after `at`, if one comes within the longest shift.
    fn shift_after(&self, at: i64) -> i64 {
        self.fall_back_within(at, at + LONGEST_SHIFT_S)
    }

    /// The fall-back right before `at`, if one came within the longest shift.
    fn shift_before(&self, at: i64) -> i64 {
        self.fall_back_within(at - LONGEST_SHIFT_S, at)
    }

    /// The zone's offset from UTC at the instant `at` (seconds).
    fn offset(&self, at: i64) -> i64 {
        let instant = DateTime::from_timestamp(at, 0).unwrap_or_default();
        i64::from(
            self.zone
                .offset_from_utc_datetime(&instant.naive_utc())
                .fix()
                .local_minus_utc(),
        )
    }

    /// The zone's wall time at the instant `at`, as seconds of a clock
    /// without changes.
    fn wall(&self, at: i64) -> i64 {
        at + self.offset(at)
    }
}

/// A wall time as the UTC date-time `croner` matches fields against.
fn wall_clock(wall: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(wall, 0).unwrap_or_default()
}

fn describe(e: CronError) -> String {
    match e {
        CronError::InvalidPattern(why) | CronError::IllegalCharacters(why) => why,
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests;
