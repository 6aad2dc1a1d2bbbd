//! A schedule's occurrences: a cron expression read by `croner` in an IANA
//! zone from `chrono-tz` (docs/api.md, "Schedules"). Occurrences are whole
//! seconds, kept as epoch milliseconds.
//!
//! The zone's rules come from `croner`'s walk over local time: an occurrence
//! whose local time a spring-forward skips runs once, at the first instant
//! after the gap; one whose local time a fall-back repeats runs once, at its
//! first instant (an expression with a wildcard hour still fires in both
//! halves of the repeated hour, since each half holds its own occurrences).

use std::str::FromStr;

use chrono::{DateTime, TimeZone};
use chrono_tz::Tz;
use croner::errors::CronError;
use croner::parser::{CronParser, Seconds, Year};
use croner::Cron;

use crate::error::{Error, Result};

/// A parsed cron expression in its zone.
#[derive(Clone, Debug)]
pub struct Occurrences {
    cron: Cron,
    zone: Tz,
}

impl Occurrences {
    /// Five fields, or six with seconds first; the `@hourly`, `@daily`, …
    /// aliases. The errors name the field (`cron`, `tz`).
    pub fn parse(cron: &str, tz: &str) -> Result<Occurrences> {
        let zone = Tz::from_str(tz).map_err(|_| {
            Error::Invalid(format!("tz must be an IANA time zone name, got {tz:?}"))
        })?;
        let parsed = CronParser::builder()
            .seconds(Seconds::Optional)
            .year(Year::Disallowed)
            .build()
            .parse(cron)
            .map_err(|e| Error::Invalid(format!("cron {cron:?} is not valid: {}", describe(e))))?;
        let occurrences = Occurrences { cron: parsed, zone };
        // A valid expression may still name no day that exists (`0 0 30 2 *`).
        occurrences
            .next_after(0)
            .map_err(|_| Error::Invalid(format!("cron {cron:?} is not valid: it never matches")))?;
        Ok(occurrences)
    }

    /// The first occurrence strictly after `ms`.
    pub fn next_after(&self, ms: i64) -> Result<i64> {
        let found = self
            .cron
            .find_next_occurrence(&self.at(ms), false)
            .map_err(|e| Error::Invalid(format!("cron has no next occurrence: {}", describe(e))))?;
        Ok(found.timestamp_millis())
    }

    /// The last occurrence at or before `ms`, if any.
    pub fn last_at_or_before(&self, ms: i64) -> Option<i64> {
        self.cron
            .find_previous_occurrence(&self.at(ms), true)
            .ok()
            .map(|found| found.timestamp_millis())
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
            cursor = self
                .cron
                .find_previous_occurrence(&self.at(at), false)
                .ok()
                .map(|prev| prev.timestamp_millis());
        }
        found.reverse();
        (found, false)
    }

    /// `ms` in the zone, cut to the whole second: occurrences are whole
    /// seconds, so nothing between two is lost.
    fn at(&self, ms: i64) -> DateTime<Tz> {
        self.zone
            .timestamp_opt(ms.div_euclid(1000), 0)
            .single()
            .expect("an instant maps to one local time")
    }
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
