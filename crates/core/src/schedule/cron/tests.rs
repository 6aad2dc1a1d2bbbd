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
        format!(
            "cron \"@midnight\" is not valid: the nickname @midnight is not supported {supported}"
        )
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
