//! Task events (docs/api.md, "Events"): a subscription reads the events the
//! database's triggers recorded (docs/protocol.md, "Events") page by page
//! from its position, sleeping on the store's wakes between pages, so a
//! listener in any process sees every change of every writer, in order,
//! and a slow one holds one page at a time. Retention is swept by the
//! subscriptions themselves. `backend` is the seam each dialect's
//! `events.rs` implements, `rows` what its statements take and answer.

pub mod backend;
pub mod rows;

use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde_json::value::RawValue;
use tokio::sync::Notify;
use tokio::time::Instant;

use crate::error::Result;
use crate::events::rows::{EventFilter, EventRow, Position, RawPage};
use crate::input::{duration_ms, finite_at_least, name_field, Options};
use crate::store::Store;

/// Events read per page: what a subscription holds at most, however far
/// behind its consumer is.
pub const PAGE_SIZE: i64 = 256;
/// Events older than this are swept (docs/api.md, "Events").
pub const RETENTION_MS: i64 = 24 * 60 * 60 * 1000;
/// At most this many events are kept, the newest.
pub const RETENTION_EVENTS: i64 = 1_000_000;
/// How often a subscription sweeps (any one of them suffices).
const SWEEP_EVERY: Duration = Duration::from_secs(60);
/// How long a subscription sleeps without a wake before it reads again:
/// wakes only shorten the sleep, reading stays the source of truth.
pub const DEFAULT_POLL_MS: f64 = 1_000.0;
/// The first sleep after a read that found committed events not final yet
/// (`RawPage::pending`), doubling at each such read up to the poll.
const FIRST_RECHECK: Duration = Duration::from_millis(1);

/// How long to sleep after a read that delivered nothing: the poll, unless
/// committed events wait for an older transaction, whose end may wake
/// nobody (it may have recorded no event): then soon, and less soon each
/// time.
#[derive(Debug)]
struct Recheck {
    next: Duration,
}

impl Recheck {
    fn new() -> Recheck {
        Recheck {
            next: FIRST_RECHECK,
        }
    }

    fn after_empty_read(&mut self, pending: bool, poll: Duration) -> Duration {
        if !pending {
            self.next = FIRST_RECHECK;
            return poll;
        }
        let wait = self.next.min(poll);
        self.next = (self.next * 2).min(poll);
        wait
    }
}

/// `client.events(options)` as JS sends it (`input::Options`).
#[derive(Clone, Debug, Default)]
pub struct EventsOptions {
    pub filter: EventFilter,
    /// Resume after this position; `None`: from the newest event on.
    pub after: Option<Position>,
    pub poll_ms: Option<f64>,
}

impl EventsOptions {
    pub fn read(options: &str) -> Result<EventsOptions> {
        let mut fields = Options::parse(
            "events options",
            options,
            &["queue", "name", "taskId", "after", "pollMs"],
        )?;
        let mut name = |key: &str| -> Result<Option<String>> {
            let value = fields.text(key)?;
            if let Some(text) = &value {
                name_field(key, text)?;
            }
            Ok(value)
        };
        let filter = EventFilter {
            queue: name("queue")?,
            name: name("name")?,
            task_id: name("taskId")?,
        };
        let after = fields.text("after")?.as_deref().map(Position::parse);
        let poll_ms = fields.number("pollMs")?;
        if let Some(ms) = poll_ms {
            finite_at_least("pollMs", ms, 1.0)?;
        }
        Ok(EventsOptions {
            filter,
            after: after.transpose()?,
            poll_ms,
        })
    }
}

/// One event as JS receives it (docs/api.md, "Events").
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct EventView<'a> {
    position: String,
    kind: &'a str,
    task_id: &'a str,
    queue: &'a str,
    name: &'a str,
    attempt: i64,
    at: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    worker_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    run_at: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    progress: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<Box<RawValue>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    result_bytes: Option<i64>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    result_truncated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<Box<RawValue>>,
}

/// A page's gap: events after `after` up to `position` were swept before
/// this subscription read them.
#[derive(Serialize)]
struct GapView {
    position: String,
    kind: &'static str,
    after: String,
}

fn raw_json(text: &Option<String>) -> Option<Box<RawValue>> {
    text.clone()
        .and_then(|text| RawValue::from_string(text).ok())
}

fn view(row: &EventRow) -> EventView<'_> {
    let succeeded = row.kind == "succeeded";
    let body = |wanted: bool| if wanted { raw_json(&row.body) } else { None };
    EventView {
        position: row.position.to_string(),
        kind: &row.kind,
        task_id: &row.task_id,
        queue: &row.queue,
        name: &row.name,
        attempt: row.attempt,
        at: row.at_ms,
        worker_id: row.worker_id.as_deref(),
        run_at: row.run_at_ms,
        progress: row.progress,
        message: row.message.as_deref(),
        result: body(succeeded),
        result_bytes: row.body_bytes.filter(|_| succeeded),
        result_truncated: succeeded && row.body.is_none() && row.body_bytes.is_some(),
        error: body(!succeeded),
    }
}

/// A view of texts and numbers as JSON: serializing it cannot fail.
fn json(value: &impl Serialize) -> String {
    serde_json::to_string(value).expect("an event view serializes")
}

/// What one read hands on: the events to deliver (a gap first when the
/// sweep passed `after`) and the position the next read starts from.
#[derive(Debug, PartialEq)]
pub struct PageRead {
    pub gap: Option<Position>,
    pub rows: Vec<EventRow>,
    pub next: Position,
}

/// The decision on one raw page read after `after`: rows at or before the
/// horizon may have lost neighbours to a sweep, so they go with a gap; a full
/// page continues after its last row, any other after the head (rows the
/// filters skipped are not read again).
pub fn read_page(after: Position, raw: RawPage, limit: i64) -> PageRead {
    let gap = raw.horizon.filter(|horizon| *horizon > after);
    let base = gap.unwrap_or(after);
    let full = raw.rows.len() as i64 >= limit;
    let last = raw.rows.last().map(|row| row.position);
    let next = match (full, last) {
        (true, Some(last)) => last.max(base),
        _ => base.max(raw.head.unwrap_or(base)).max(last.unwrap_or(base)),
    };
    let rows = raw
        .rows
        .into_iter()
        .filter(|row| row.position > base)
        .collect();
    PageRead { gap, rows, next }
}

/// One subscription: its filters and position, read by one `next_page` at a
/// time.
pub struct Subscription {
    store: Arc<Store>,
    filter: EventFilter,
    after: Option<Position>,
    poll: Duration,
    /// `None` until `start` took it.
    position: tokio::sync::Mutex<Option<Position>>,
    swept_at: std::sync::Mutex<Option<Instant>>,
    closed: AtomicBool,
    close_wake: Notify,
}

impl Subscription {
    /// A subscription of `options`, counted open; `start` (or the first
    /// page) takes its position.
    pub fn new(store: Arc<Store>, options: EventsOptions) -> Subscription {
        store.event_counters().opened();
        Subscription {
            poll: duration_ms(options.poll_ms.unwrap_or(DEFAULT_POLL_MS)),
            store,
            filter: options.filter,
            after: options.after,
            position: tokio::sync::Mutex::new(None),
            swept_at: std::sync::Mutex::new(None),
            closed: AtomicBool::new(false),
            close_wake: Notify::new(),
        }
    }

    /// `new`, then `start`.
    pub async fn open(store: Arc<Store>, options: EventsOptions) -> Result<Subscription> {
        let subscription = Subscription::new(store, options);
        subscription.start().await?;
        Ok(subscription)
    }

    /// Create the events tables on first use and take the start position:
    /// `after`, else the newest event now.
    pub async fn start(&self) -> Result<()> {
        let mut position = self.position.lock().await;
        if position.is_none() {
            *position = Some(self.start_position().await?);
        }
        Ok(())
    }

    async fn start_position(&self) -> Result<Position> {
        let backend = self.store.backend();
        // A read first: on a database with the tables, no write transaction.
        if !backend.events_installed().await? {
            backend.install_events().await?;
        }
        if let Some(after) = self.after {
            return Ok(after);
        }
        let raw = backend
            .events_page(Position::START, EventFilter::default(), 0)
            .await?;
        Ok(raw.head.unwrap_or(Position::START))
    }

    /// The next events as a JSON array (never empty), waiting for them;
    /// `None` once closed.
    pub async fn next_page(&self) -> Result<Option<String>> {
        let mut held = self.position.lock().await;
        let mut position = match *held {
            Some(position) => position,
            None => self.start_position().await?,
        };
        let backend = self.store.backend();
        let mut recheck = Recheck::new();
        loop {
            if self.closed.load(SeqCst) {
                return Ok(None);
            }
            self.sweep_when_due().await?;
            let ticket = backend.events_ticket();
            let raw = backend
                .events_page(position, self.filter.clone(), PAGE_SIZE)
                .await?;
            let pending = raw.pending;
            let read = read_page(position, raw, PAGE_SIZE);
            let before = position;
            position = read.next;
            *held = Some(position);
            if read.gap.is_some() || !read.rows.is_empty() {
                return Ok(Some(self.deliver(before, read)));
            }
            let closed = self.close_wake.notified();
            let wait = recheck.after_empty_read(pending, self.poll);
            tokio::select! {
                _ = closed => {}
                _ = backend.events_changed(ticket, wait) => {}
            }
        }
    }

    fn deliver(&self, before: Position, read: PageRead) -> String {
        let mut items = Vec::with_capacity(read.rows.len() + 1);
        if let Some(gap) = read.gap {
            items.push(json(&GapView {
                position: gap.to_string(),
                kind: "gap",
                after: before.to_string(),
            }));
        }
        items.extend(read.rows.iter().map(|row| json(&view(row))));
        self.store
            .event_counters()
            .add_delivered(read.rows.len() as u64);
        format!("[{}]", items.join(","))
    }

    async fn sweep_when_due(&self) -> Result<()> {
        let due = {
            let mut swept_at = self.swept_at.lock().expect("events sweep");
            let due = swept_at.is_none_or(|at| at.elapsed() >= SWEEP_EVERY);
            if due {
                *swept_at = Some(Instant::now());
            }
            due
        };
        if due {
            self.store
                .backend()
                .sweep_events(self.store.clock().now_ms() - RETENTION_MS, RETENTION_EVENTS)
                .await?;
        }
        Ok(())
    }

    /// End the subscription: a waiting `next_page` answers `None` now.
    pub fn close(&self) {
        if !self.closed.swap(true, SeqCst) {
            self.store.event_counters().closed();
        }
        self.close_wake.notify_waiters();
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.close();
    }
}

#[cfg(test)]
mod tests;
