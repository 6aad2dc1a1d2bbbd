use super::*;

fn row(minor: i64) -> EventRow {
    EventRow {
        position: Position::new(0, minor),
        at_ms: 1,
        task_id: format!("t{minor}"),
        queue: "q".into(),
        name: "n".into(),
        kind: "queued".into(),
        attempt: 0,
        worker_id: None,
        run_at_ms: Some(1),
        progress: None,
        message: None,
        body: None,
        body_bytes: None,
    }
}

fn p(minor: i64) -> Position {
    Position::new(0, minor)
}

#[test]
fn a_partial_page_moves_on_to_the_head_a_full_one_to_its_last_row() {
    let raw = |rows: Vec<i64>, head| RawPage {
        rows: rows.into_iter().map(row).collect(),
        head: Some(p(head)),
        ..RawPage::default()
    };
    let partial = read_page(p(3), raw(vec![5], 9), 2);
    assert_eq!(
        (partial.next, partial.rows.len(), partial.gap),
        (p(9), 1, None)
    );
    let full = read_page(p(3), raw(vec![4, 5], 9), 2);
    assert_eq!((full.next, full.rows.len()), (p(5), 2));
    let empty = read_page(p(3), RawPage::default(), 2);
    assert_eq!((empty.next, empty.rows.len()), (p(3), 0));
}

#[test]
fn a_sweep_past_the_position_is_a_gap_and_drops_the_rows_before_it() {
    let raw = RawPage {
        rows: vec![row(4), row(8)],
        head: Some(p(8)),
        horizon: Some(p(6)),
        ..RawPage::default()
    };
    let read = read_page(p(3), raw, 10);
    assert_eq!(read.gap, Some(p(6)));
    assert_eq!(read.rows, vec![row(8)]);
    assert_eq!(read.next, p(8));
    let behind = RawPage {
        rows: vec![row(8)],
        head: Some(p(8)),
        horizon: Some(p(6)),
        ..RawPage::default()
    };
    assert_eq!(read_page(p(7), behind, 10).gap, None);
}

#[test]
fn options_are_checked_naming_the_field() {
    let err = |text: &str| EventsOptions::read(text).unwrap_err().to_string();
    assert!(
        err(r#"{"queue": 5}"#).contains("queue"),
        "{}",
        err(r#"{"queue": 5}"#)
    );
    assert!(err(r#"{"name": ""}"#).contains("name"));
    assert!(err(r#"{"taskId": true}"#).contains("taskId"));
    assert!(err(r#"{"after": "x"}"#).contains("after"));
    assert!(err(r#"{"after": 5}"#).contains("after"));
    assert!(err(r#"{"pollMs": 0}"#).contains("pollMs"));
    assert!(err(r#"{"queues": "a"}"#).contains("queues"));
    let read = EventsOptions::read(r#"{"queue": "q", "after": "7"}"#).unwrap();
    assert_eq!(read.filter.queue.as_deref(), Some("q"));
    assert_eq!(read.after, Some(p(7)));
}

#[test]
fn a_result_too_large_to_keep_is_shown_as_truncated() {
    let mut done = row(1);
    done.kind = "succeeded".into();
    done.body_bytes = Some(9000);
    let text = serde_json::to_string(&view(&done)).unwrap();
    assert!(text.contains(r#""resultBytes":9000"#) && text.contains(r#""resultTruncated":true"#));
    done.body = Some(r#"{"ok":1}"#.into());
    done.body_bytes = Some(8);
    let text = serde_json::to_string(&view(&done)).unwrap();
    assert!(
        text.contains(r#""result":{"ok":1}"#) && !text.contains("Truncated"),
        "{text}"
    );
}

#[test]
fn events_waiting_on_an_older_transaction_are_read_again_soon_then_less_soon() {
    let poll = Duration::from_millis(10);
    let mut recheck = Recheck::new();
    let waits: Vec<u64> = (0..6)
        .map(|_| recheck.after_empty_read(true, poll).as_millis() as u64)
        .collect();
    assert_eq!(waits, [1, 2, 4, 8, 10, 10]);
    assert_eq!(recheck.after_empty_read(false, poll), poll);
    assert_eq!(
        recheck.after_empty_read(true, poll),
        Duration::from_millis(1),
        "a read with nothing pending starts over"
    );
}
