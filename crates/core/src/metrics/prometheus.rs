//! The Prometheus text exposition format (version 0.0.4) of a snapshot: the
//! metric names, their help, types and labels live here and nowhere else.

use std::fmt::Write;

use super::histogram::Histogram;
use super::snapshot::{Snapshot, FINISHED};
use crate::input::MAX_NAME_BYTES;
use crate::task::Status;

/// The most queues one exposition shows: the first by name, so the series a
/// scraper sees stay the same from one scrape to the next. With names of at
/// most `MAX_NAME_BYTES`, the text stays a few megabytes at worst.
pub const MAX_QUEUES_SHOWN: usize = 1000;

/// Whether a queue or task name is shown: a longer one than the API takes
/// (written by another program) is left out rather than cut, since two cut
/// names could become one series.
fn shown(name: &str) -> bool {
    name.len() <= MAX_NAME_BYTES
}

/// The text `/metrics` serves and `cairnq metrics` prints.
pub fn render(snapshot: &Snapshot) -> String {
    let mut out = String::with_capacity(1024 + snapshot.timings.len() * 4096);
    let queues: Vec<(&String, &[i64; 5])> = snapshot
        .stats
        .iter()
        .filter(|(queue, _)| shown(queue))
        .take(MAX_QUEUES_SHOWN)
        .collect();
    family(
        &mut out,
        "cairnq_tasks",
        "gauge",
        "Tasks in the database, per queue and status.",
    );
    for (queue, counts) in &queues {
        for status in Status::ALL {
            let labels = [("queue", queue.as_str()), ("status", status.as_str())];
            sample(&mut out, "cairnq_tasks", &labels, counts[status as usize]);
        }
    }
    family(
        &mut out,
        "cairnq_queue_oldest_due_age_seconds",
        "gauge",
        "How long the queue's longest-waiting due task has been due (0 when none is).",
    );
    for (queue, _) in &queues {
        let ms = snapshot.oldest_due_ms.get(*queue).copied().unwrap_or(0);
        let labels = [("queue", queue.as_str())];
        sample(
            &mut out,
            "cairnq_queue_oldest_due_age_seconds",
            &labels,
            ms as f64 / 1000.0,
        );
    }
    family(
        &mut out,
        "cairnq_queue_paused",
        "gauge",
        "1 while the queue is paused (pauseQueue), else 0: no worker of this SDK claims from it.",
    );
    for (queue, _) in &queues {
        let paused = u8::from(snapshot.paused.contains(*queue));
        sample(
            &mut out,
            "cairnq_queue_paused",
            &[("queue", queue.as_str())],
            paused,
        );
    }
    family(
        &mut out,
        "cairnq_tasks_finished_total",
        "counter",
        "Tasks seen reaching a terminal status since this exporter started, per queue and status.",
    );
    for (queue, totals) in queues
        .iter()
        .filter_map(|(queue, _)| Some((queue, snapshot.finished.get(*queue)?)))
    {
        for (status, total) in FINISHED.iter().zip(totals) {
            let labels = [("queue", queue.as_str()), ("status", status.as_str())];
            sample(&mut out, "cairnq_tasks_finished_total", &labels, total);
        }
    }
    if !snapshot.timings.is_empty() {
        histogram_family(
            &mut out,
            "cairnq_task_queue_wait_seconds",
            "Time from a task being due (run_at) to its handler's start, per task name.",
            snapshot.timings.iter().map(|(n, t)| (n, &t.queue_wait)),
        );
        histogram_family(
            &mut out,
            "cairnq_task_run_seconds",
            "Time a handler call ran, per task name.",
            snapshot.timings.iter().map(|(n, t)| (n, &t.run_time)),
        );
    }
    family(
        &mut out,
        "cairnq_events_delivered_total",
        "counter",
        "Task events this process's subscriptions on the store delivered (client.events).",
    );
    let _ = writeln!(
        out,
        "cairnq_events_delivered_total {}",
        snapshot.events_delivered
    );
    family(
        &mut out,
        "cairnq_event_listeners",
        "gauge",
        "Event subscriptions open on the store in this process.",
    );
    let _ = writeln!(out, "cairnq_event_listeners {}", snapshot.event_listeners);
    family(
        &mut out,
        "cairnq_queues_not_shown",
        "gauge",
        "Queues these metrics leave out: past the first 1000 by name, or named longer than 512 bytes.",
    );
    let _ = writeln!(
        out,
        "cairnq_queues_not_shown {}",
        snapshot.stats.len() - queues.len()
    );
    out
}

fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

fn histogram_family<'a>(
    out: &mut String,
    name: &str,
    help: &str,
    by_name: impl Iterator<Item = (&'a String, &'a Histogram)>,
) {
    family(out, name, "histogram", help);
    let bucket = format!("{name}_bucket");
    for (task_name, histogram) in by_name.filter(|(task_name, _)| shown(task_name)) {
        for (bound, count) in histogram.cumulative() {
            let le = bound.map_or_else(|| "+Inf".to_string(), |b| b.to_string());
            let labels = [("name", task_name.as_str()), ("le", le.as_str())];
            sample(out, &bucket, &labels, count);
        }
        let labels = [("name", task_name.as_str())];
        sample(out, &format!("{name}_sum"), &labels, histogram.sum());
        sample(out, &format!("{name}_count"), &labels, histogram.count());
    }
}

fn sample(out: &mut String, name: &str, labels: &[(&str, &str)], value: impl std::fmt::Display) {
    out.push_str(name);
    out.push('{');
    for (i, (label, value)) in labels.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(label);
        out.push_str("=\"");
        escape_label(out, value);
        out.push('"');
    }
    let _ = writeln!(out, "}} {value}");
}

/// Label values escape backslash, double quote and line feed.
fn escape_label(out: &mut String, value: &str) {
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::worker::NameTimings;

    #[test]
    fn renders_every_family_with_escaped_labels() {
        let mut snapshot = Snapshot::default();
        snapshot
            .stats
            .insert("we\"ird\\q\n".to_string(), [3, 1, 7, 0, 2]);
        snapshot
            .oldest_due_ms
            .insert("we\"ird\\q\n".to_string(), 1500);
        snapshot
            .finished
            .insert("we\"ird\\q\n".to_string(), [4, 0, 1]);
        snapshot.stats.insert("held".to_string(), [0; 5]);
        snapshot.paused.insert("held".to_string());
        let mut timings = NameTimings::default();
        timings.queue_wait.observe(0.02);
        timings.run_time.observe(2.0);
        snapshot.timings.insert("send".to_string(), timings);
        snapshot.events_delivered = 12;
        snapshot.event_listeners = 2;
        let text = render(&snapshot);
        assert!(text.contains(
            "# TYPE cairnq_events_delivered_total counter\ncairnq_events_delivered_total 12\n"
        ));
        assert!(text.contains("# TYPE cairnq_event_listeners gauge\n"));
        assert!(text.contains("cairnq_event_listeners 2\n"));
        let q = r#"queue="we\"ird\\q\n""#;
        assert!(text.contains("# TYPE cairnq_tasks gauge\n"));
        assert!(text.contains(&format!("cairnq_tasks{{{q},status=\"queued\"}} 3\n")));
        assert!(text.contains(&format!("cairnq_tasks{{{q},status=\"canceled\"}} 2\n")));
        assert!(text.contains(&format!("cairnq_queue_oldest_due_age_seconds{{{q}}} 1.5\n")));
        assert!(text.contains(&format!(
            "cairnq_tasks_finished_total{{{q},status=\"succeeded\"}} 4\n"
        )));
        assert!(text.contains(&format!("cairnq_queue_paused{{{q}}} 0\n")));
        assert!(text.contains("cairnq_queue_paused{queue=\"held\"} 1\n"));
        assert!(text.contains("# TYPE cairnq_task_queue_wait_seconds histogram\n"));
        assert!(
            text.contains("cairnq_task_queue_wait_seconds_bucket{name=\"send\",le=\"0.01\"} 0\n")
        );
        assert!(
            text.contains("cairnq_task_queue_wait_seconds_bucket{name=\"send\",le=\"0.025\"} 1\n")
        );
        assert!(text.contains("cairnq_task_run_seconds_bucket{name=\"send\",le=\"+Inf\"} 1\n"));
        assert!(text.contains("cairnq_task_run_seconds_sum{name=\"send\"} 2\n"));
        assert!(text.contains("cairnq_task_run_seconds_count{name=\"send\"} 1\n"));
    }

    #[test]
    fn shows_the_first_queues_by_name_and_counts_the_rest() {
        let mut snapshot = Snapshot::default();
        for i in 0..MAX_QUEUES_SHOWN + 5 {
            snapshot.stats.insert(format!("q{i:05}"), [1, 0, 0, 0, 0]);
        }
        snapshot
            .stats
            .insert("x".repeat(MAX_NAME_BYTES + 1), [1; 5]);
        let mut timings = NameTimings::default();
        timings.run_time.observe(1.0);
        snapshot
            .timings
            .insert("y".repeat(MAX_NAME_BYTES + 1), timings);
        let text = render(&snapshot);
        assert!(text.contains("\ncairnq_queues_not_shown 6\n"));
        assert!(text.contains(&format!("queue=\"q{:05}\"", MAX_QUEUES_SHOWN - 1)));
        assert!(!text.contains(&format!("queue=\"q{:05}\"", MAX_QUEUES_SHOWN)));
        assert!(!text.contains("xxxx") && !text.contains("yyyy"));
        assert!(text.len() < MAX_QUEUES_SHOWN * 1000, "{} bytes", text.len());
    }

    #[test]
    fn no_worker_timings_no_histograms() {
        let text = render(&Snapshot::default());
        assert!(!text.contains("histogram"));
        assert!(text.contains("# TYPE cairnq_tasks_finished_total counter\n"));
    }
}
