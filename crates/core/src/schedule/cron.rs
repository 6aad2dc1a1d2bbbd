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
mod tests {
    use super::*;

    /// `YYYY-MM-DDTHH:MM:SSZ` as epoch ms.
    fn utc(text: &str) -> i64 {
        DateTime::parse_from_rfc3339(text)
            .expect("an RFC 3339 instant")
            .timestamp_millis()
    }

    fn following(occurrences: &Occurrences, from: &str, count: usize) -> Vec<i64> {
        let mut at = utc(from);
        (0..count)
            .map(|_| {
                at = occurrences.next_after(at).unwrap();
                at
            })
            .collect()
    }

    fn new_york(cron: &str) -> Occurrences {
        Occurrences::parse(cron, "America/New_York").unwrap()
    }

    /// 2026-03-08: New York skips 02:00–03:00 local (EST → EDT). A daily
    /// 02:30 runs once that day, at the first instant after the gap (03:00
    /// EDT); the days around it keep their offsets.
    #[test]
    fn a_skipped_local_time_runs_once_after_the_gap() {
        assert_eq!(
            following(&new_york("30 2 * * *"), "2026-03-06T12:00:00Z", 3),
            vec![
                utc("2026-03-07T07:30:00Z"), // 02:30 EST
                utc("2026-03-08T07:00:00Z"), // 03:00 EDT, right after the gap
                utc("2026-03-09T06:30:00Z"), // 02:30 EDT
            ]
        );
        // Hourly at :30 has no 02:30 that night: 01:30 EST, then 03:30 EDT.
        assert_eq!(
            following(&new_york("30 * * * *"), "2026-03-08T06:00:00Z", 2),
            vec![utc("2026-03-08T06:30:00Z"), utc("2026-03-08T07:30:00Z")]
        );
    }

    /// 2026-11-01: New York repeats 01:00–02:00 local (EDT → EST). A daily
    /// 01:30 runs once, in the first of the two 01:30s.
    #[test]
    fn a_repeated_local_time_runs_once() {
        assert_eq!(
            following(&new_york("30 1 * * *"), "2026-10-30T12:00:00Z", 3),
            vec![
                utc("2026-10-31T05:30:00Z"), // 01:30 EDT
                utc("2026-11-01T05:30:00Z"), // the first 01:30 (EDT) only
                utc("2026-11-02T06:30:00Z"), // 01:30 EST
            ]
        );
        // An hourly schedule has an occurrence in each half of the repeated
        // hour: they are different instants an hour apart.
        assert_eq!(
            following(&new_york("0 * * * *"), "2026-11-01T03:30:00Z", 4),
            vec![
                utc("2026-11-01T04:00:00Z"), // 00:00 EDT
                utc("2026-11-01T05:00:00Z"), // 01:00 EDT
                utc("2026-11-01T06:00:00Z"), // 01:00 EST
                utc("2026-11-01T07:00:00Z"), // 02:00 EST
            ]
        );
    }

    /// Midnight stays local midnight on both sides of each change.
    #[test]
    fn local_midnight_follows_the_offset() {
        let daily = new_york("@daily");
        assert_eq!(
            following(&daily, "2026-03-07T12:00:00Z", 2),
            vec![utc("2026-03-08T05:00:00Z"), utc("2026-03-09T04:00:00Z")]
        );
        assert_eq!(
            following(&daily, "2026-10-31T12:00:00Z", 2),
            vec![utc("2026-11-01T04:00:00Z"), utc("2026-11-02T05:00:00Z")]
        );
    }

    /// The occurrences in `(from, to]`, walked forward; the backward walk
    /// (catch-up's) must find the same ones.
    fn between(occurrences: &Occurrences, from: &str, to: &str) -> Vec<i64> {
        let (from, to) = (utc(from), utc(to));
        let mut found = Vec::new();
        let mut at = from;
        while let Ok(next) = occurrences.next_after(at) {
            if next > to {
                break;
            }
            found.push(next);
            at = next;
        }
        let (backward, _) = occurrences.latest_in(from + 1, to, 1000);
        assert_eq!(backward, found, "the backward walk disagrees");
        found
    }

    /// One DST rule for every expression (Vixie/ISC cron's): minute and hour
    /// without `*` or a step are wall times, run once at the first instant
    /// after a gap and once in a repeated hour; anything else follows real
    /// time. Each row: zone, expression, the window `(from, to]` in UTC, and
    /// the occurrences in it in UTC.
    #[test]
    fn every_expression_meets_dst_by_one_rule() {
        // New York, 2026-03-08: 02:00 EST jumps to 03:00 EDT (07:00Z).
        // 2026-11-01: 02:00 EDT falls back to 01:00 EST (06:00Z).
        // Berlin, 2026-10-25: 03:00 CEST falls back to 02:00 CET (01:00Z).
        // Lord Howe (+10:30 / +11), 2026-10-04: 02:00 jumps to 02:30
        // (15:30Z the day before); 2026-04-05: 02:00 falls back to 01:30
        // (15:00Z the day before).
        let table: &[(&str, &str, &str, &str, &[&str])] = &[
            (
                "America/New_York",
                "30 1 * * *",
                "2026-11-01T04:00:00Z",
                "2026-11-01T08:30:00Z",
                &["2026-11-01T05:30:00Z"],
            ),
            (
                "America/New_York",
                "0,30 1 * * *",
                "2026-11-01T04:00:00Z",
                "2026-11-01T08:30:00Z",
                &["2026-11-01T05:00:00Z", "2026-11-01T05:30:00Z"],
            ),
            (
                "America/New_York",
                "15 1-2 * * *",
                "2026-11-01T04:00:00Z",
                "2026-11-01T08:30:00Z",
                &["2026-11-01T05:15:00Z", "2026-11-01T07:15:00Z"],
            ),
            (
                "America/New_York",
                "*/30 1 * * *",
                "2026-11-01T04:00:00Z",
                "2026-11-01T08:30:00Z",
                &[
                    "2026-11-01T05:00:00Z",
                    "2026-11-01T05:30:00Z",
                    "2026-11-01T06:00:00Z",
                    "2026-11-01T06:30:00Z",
                ],
            ),
            (
                "America/New_York",
                "0 * * * *",
                "2026-11-01T04:00:00Z",
                "2026-11-01T08:30:00Z",
                &[
                    "2026-11-01T05:00:00Z",
                    "2026-11-01T06:00:00Z",
                    "2026-11-01T07:00:00Z",
                    "2026-11-01T08:00:00Z",
                ],
            ),
            (
                "America/New_York",
                "30 2 * * *",
                "2026-03-08T05:00:00Z",
                "2026-03-08T09:00:00Z",
                &["2026-03-08T07:00:00Z"],
            ),
            (
                "America/New_York",
                "15,45 2 * * *",
                "2026-03-08T05:00:00Z",
                "2026-03-08T09:00:00Z",
                &["2026-03-08T07:00:00Z"],
            ),
            (
                "America/New_York",
                "0 2,3 * * *",
                "2026-03-08T05:00:00Z",
                "2026-03-08T09:00:00Z",
                &["2026-03-08T07:00:00Z"],
            ),
            (
                "America/New_York",
                "0 30 2 * * *",
                "2026-03-08T05:00:00Z",
                "2026-03-08T09:00:00Z",
                &["2026-03-08T07:00:00Z"],
            ),
            (
                "America/New_York",
                "*/20 30 2 * * *",
                "2026-03-08T05:00:00Z",
                "2026-03-08T09:00:00Z",
                &["2026-03-08T07:00:00Z"],
            ),
            (
                "America/New_York",
                "*/15 2 * * *",
                "2026-03-08T05:00:00Z",
                "2026-03-08T09:00:00Z",
                &[],
            ),
            (
                "America/New_York",
                "30 * * * *",
                "2026-03-08T05:00:00Z",
                "2026-03-08T09:00:00Z",
                &[
                    "2026-03-08T05:30:00Z",
                    "2026-03-08T06:30:00Z",
                    "2026-03-08T07:30:00Z",
                    "2026-03-08T08:30:00Z",
                ],
            ),
            (
                "Europe/Berlin",
                "30 2 * * *",
                "2026-10-24T22:00:00Z",
                "2026-10-25T03:00:00Z",
                &["2026-10-25T00:30:00Z"],
            ),
            (
                "Europe/Berlin",
                "0-59/30 2 * * *",
                "2026-10-24T22:00:00Z",
                "2026-10-25T03:00:00Z",
                &[
                    "2026-10-25T00:00:00Z",
                    "2026-10-25T00:30:00Z",
                    "2026-10-25T01:00:00Z",
                    "2026-10-25T01:30:00Z",
                ],
            ),
            (
                "Australia/Lord_Howe",
                "15 2 * * *",
                "2026-10-03T13:30:00Z",
                "2026-10-03T18:00:00Z",
                &["2026-10-03T15:30:00Z"],
            ),
            (
                "Australia/Lord_Howe",
                "0,15 2 * * *",
                "2026-10-03T13:30:00Z",
                "2026-10-03T18:00:00Z",
                &["2026-10-03T15:30:00Z"],
            ),
            (
                "Australia/Lord_Howe",
                "45 2 * * *",
                "2026-10-03T13:30:00Z",
                "2026-10-03T18:00:00Z",
                &["2026-10-03T15:45:00Z"],
            ),
            (
                "Australia/Lord_Howe",
                "*/15 2 * * *",
                "2026-10-03T13:30:00Z",
                "2026-10-03T18:00:00Z",
                &["2026-10-03T15:30:00Z", "2026-10-03T15:45:00Z"],
            ),
            (
                "Australia/Lord_Howe",
                "0 * * * *",
                "2026-10-03T13:30:00Z",
                "2026-10-03T18:00:00Z",
                &[
                    "2026-10-03T14:30:00Z",
                    "2026-10-03T16:00:00Z",
                    "2026-10-03T17:00:00Z",
                    "2026-10-03T18:00:00Z",
                ],
            ),
            (
                "Australia/Lord_Howe",
                "45 1 * * *",
                "2026-04-04T13:00:00Z",
                "2026-04-04T17:00:00Z",
                &["2026-04-04T14:45:00Z"],
            ),
            (
                "Australia/Lord_Howe",
                "15,45 1 * * *",
                "2026-04-04T13:00:00Z",
                "2026-04-04T17:00:00Z",
                &["2026-04-04T14:15:00Z", "2026-04-04T14:45:00Z"],
            ),
            (
                "Australia/Lord_Howe",
                "*/30 1 * * *",
                "2026-04-04T13:00:00Z",
                "2026-04-04T17:00:00Z",
                &[
                    "2026-04-04T14:00:00Z",
                    "2026-04-04T14:30:00Z",
                    "2026-04-04T15:00:00Z",
                ],
            ),
            (
                "Australia/Lord_Howe",
                "0 * * * *",
                "2026-04-04T13:00:00Z",
                "2026-04-04T17:00:00Z",
                &[
                    "2026-04-04T14:00:00Z",
                    "2026-04-04T15:30:00Z",
                    "2026-04-04T16:30:00Z",
                ],
            ),
            (
                "UTC",
                "0,30 1 * * *",
                "2026-11-01T00:00:00Z",
                "2026-11-01T03:00:00Z",
                &["2026-11-01T01:00:00Z", "2026-11-01T01:30:00Z"],
            ),
        ];
        for (zone, cron, from, to, expected) in table {
            let occurrences = Occurrences::parse(cron, zone).unwrap();
            let expected: Vec<i64> = expected.iter().map(|at| utc(at)).collect();
            assert_eq!(
                between(&occurrences, from, to),
                expected,
                "{cron:?} in {zone}"
            );
        }
    }

    #[test]
    fn six_fields_take_seconds_and_utc_is_the_plain_clock() {
        let every_second = Occurrences::parse("* * * * * *", "UTC").unwrap();
        assert_eq!(every_second.next_after(1_500).unwrap(), 2_000);
        assert_eq!(every_second.next_after(2_000).unwrap(), 3_000);
        assert_eq!(every_second.last_at_or_before(2_999), Some(2_000));
        let (latest, capped) = every_second.latest_in(1_000, 10_000, 3);
        assert_eq!((latest, capped), (vec![8_000, 9_000, 10_000], true));
        let (all, capped) = every_second.latest_in(8_000, 10_500, 5);
        assert_eq!((all, capped), (vec![8_000, 9_000, 10_000], false));
    }

    #[test]
    fn bad_expressions_and_zones_name_their_field() {
        let message = |cron: &str, tz: &str| match Occurrences::parse(cron, tz) {
            Err(Error::Invalid(message)) => message,
            other => panic!("expected a refusal, got {other:?}"),
        };
        assert!(message("61 * * * *", "UTC").starts_with("cron \"61 * * * *\" is not valid"));
        assert!(message("* * *", "UTC").starts_with("cron \"* * *\" is not valid"));
        assert!(message("@sometimes", "UTC").starts_with("cron "));
        let supported = "(supported: @yearly, @annually, @monthly, @weekly, @daily, @hourly)";
        assert_eq!(
            message("@midnight", "UTC"),
            format!("cron \"@midnight\" is not valid: the nickname @midnight is not supported {supported}")
        );
        assert_eq!(
            message("@every 5m", "UTC"),
            format!(
                "cron \"@every 5m\" is not valid: the nickname @every is not supported {supported}"
            )
        );
        assert!(Occurrences::parse("@Daily", "UTC").is_ok());
        assert_eq!(
            message("0 0 30 2 *", "UTC"),
            "cron \"0 0 30 2 *\" is not valid: it never matches"
        );
        assert_eq!(
            message("* * * * *", "Mars/Olympus"),
            "tz must be an IANA time zone name, got \"Mars/Olympus\""
        );
    }
}
