//! Where SQLite connections do their work.
//!
//! Writes are combined: a caller queues its job, and whoever finds the writer
//! free becomes the combiner and runs everything queued — on its own thread,
//! so a lone write costs no thread hop. Each turn takes the queue as one group
//! under one `BEGIN IMMEDIATE … COMMIT`; a job of several statements runs in a
//! savepoint so it fails alone, and nobody hears back before the commit that
//! holds their write. The combiner never waits on the file lock: with another
//! process holding it, the group goes to a thread that waits (up to
//! `busyTimeoutMs`) with SQLite's busy handler, keeping the async threads free.
//! Reader threads serve reads on their own WAL connections, so reads never
//! take the write lock.

mod checkpointer;
mod group;
mod jobs;
mod readers;
mod threads;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rusqlite::Connection;
use tokio::sync::oneshot;

use self::group::run_group;
pub use self::jobs::closed;
use self::jobs::{inline_group, Job, WriteJob};
use self::readers::Readers;
use self::threads::spawn;
use super::conn::refresh_planner_stats;
use crate::error::Result;

/// Jobs that share one commit at most; bounds how long a group holds the lock.
const MAX_GROUP: usize = 256;
/// How long a busy combiner waits for a group to fill: the best of the waits
/// compared under 64-in-flight submits (bench/RESULTS.md, 2026-12-04).
const GATHER_FOR: Duration = Duration::from_micros(100);
/// How often the writer refreshes planner statistics (docs/protocol.md,
/// "Connection setup (SQLite)").
const STATS_EVERY: Duration = Duration::from_secs(60);

/// The write connection, owned by whoever is combining.
struct Writer {
    /// `None` once the store is closed.
    conn: Option<Connection>,
    /// The busy timeout the connection currently has.
    waiting: Duration,
    stats_refreshed: Instant,
}

/// The connections of one open store.
pub struct Engine {
    queue: Mutex<VecDeque<Box<dyn WriteJob>>>,
    /// Set while some thread is combining; that thread owns `writer`.
    combining: AtomicBool,
    writer: Mutex<Writer>,
    busy_timeout: Duration,
    /// `None` for in-memory databases: another connection would see another
    /// database, so their reads go through the writer.
    reads: Option<Readers>,
    threads: std::sync::Mutex<Vec<JoinHandle<()>>>,
    /// A reader for the caller's own thread. It never waits on a lock (busy
    /// timeout 0): a busy answer sends the read through a reader thread instead.
    inline: Option<std::sync::Mutex<Connection>>,
    /// Told after every commit (wakes this process's waiters).
    on_commit: OnCommit,
    /// Set by the checkpointer once it has copied the bulk of the log: the
    /// next group first copies the rest on the writer's connection, where no
    /// commit of ours can slip in between, so the log can start over. Never
    /// on the JS thread (an inline write declines while it is set) nor on the
    /// async runtime's (`TurnEnd::CatchUpElsewhere`).
    catch_up: Arc<AtomicBool>,
}

/// A hook run after each commit of the writer; told whether the commit ran
/// inline, on the caller's thread.
pub type OnCommit = Option<Box<dyn Fn(bool) + Send + Sync>>;

impl Engine {
    /// `checkpointer` gets its own thread; the writer then never checkpoints
    /// itself, so no commit (least of all one on the JS thread) pays for it.
    pub fn start(
        mut writer: Connection,
        busy_timeout: Duration,
        readers: Vec<Connection>,
        inline: Option<Connection>,
        checkpointer: Option<Connection>,
        on_commit: OnCommit,
    ) -> Engine {
        // Only a file has reader connections (a read-only one has no checkpointer).
        let file_backed = !readers.is_empty();
        let catch_up = Arc::new(AtomicBool::new(false));
        let mut threads = Vec::new();
        if let Some(conn) = checkpointer {
            threads.extend(checkpointer::start(&mut writer, conn, &catch_up));
        }
        let reads = file_backed.then(|| Readers::start(readers, &mut threads));
        Engine {
            queue: Mutex::new(VecDeque::new()),
            combining: AtomicBool::new(false),
            writer: Mutex::new(Writer {
                conn: Some(writer),
                waiting: busy_timeout,
                stats_refreshed: Instant::now(),
            }),
            busy_timeout,
            reads,
            threads: std::sync::Mutex::new(threads),
            inline: inline.map(std::sync::Mutex::new),
            on_commit,
            catch_up,
        }
    }

    /// Queue a write that is one statement.
    pub async fn write<T, F>(self: &Arc<Self>, work: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T> + Send + 'static,
    {
        self.submit_write(work, false).await
    }

    /// Queue a write of several statements that must commit together.
    pub async fn transaction<T, F>(self: &Arc<Self>, work: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T> + Send + 'static,
    {
        self.submit_write(work, true).await
    }

    /// Queue a write, several statements of which must commit together when
    /// `transactional`, and hear back after its commit.
    pub async fn submit_write<T, F>(self: &Arc<Self>, work: F, transactional: bool) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T> + Send + 'static,
    {
        let answer = self.enqueue(work, transactional);
        self.drain();
        answer.await.map_err(|_| closed())?
    }

    /// Queue a write without running the queue: writes queued together before
    /// one `drain` share a group, so one commit (up to `MAX_GROUP` of them).
    pub fn enqueue<T, F>(&self, work: F, transactional: bool) -> oneshot::Receiver<Result<T>>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T> + Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        let job = Job::new(work, reply, transactional);
        self.queue
            .lock()
            .expect("write queue")
            .push_back(Box::new(job));
        answer
    }

    /// Run the writes of one JS tick on the caller's thread when that cannot
    /// wait (`on_idle_writer`); `None` (nothing ran) means "queue them
    /// instead". Each caller hears back after the commit holding its write.
    /// A lone write of one statement runs in autocommit: SQLite then needs no
    /// statement journal, and no `BEGIN`/`COMMIT` round; anything else runs
    /// as one group (`run_group`).
    pub fn write_inline<T, F>(self: &Arc<Self>, mut works: Vec<(bool, F)>) -> Option<Vec<Result<T>>>
    where
        T: Send,
        F: FnOnce(&Connection) -> Result<T> + Send,
    {
        if let [(false, _)] = works.as_slice() {
            let (_, work) = works.pop().expect("one write");
            return self.on_idle_writer(|conn| match work(conn) {
                // A busy statement wrote nothing: the caller queues the write.
                Err(err) if err.is_busy() => None,
                outcome => {
                    if outcome.is_ok() {
                        self.committed(true);
                    }
                    Some(vec![outcome])
                }
            });
        }
        let mut slots: Vec<Option<Result<T>>> = works.iter().map(|_| None).collect();
        self.on_idle_writer(|conn| {
            let (handed_back, committed) = run_group(conn, inline_group(works, &mut slots), false);
            if committed {
                self.committed(true);
            }
            handed_back.is_none().then_some(())
        })?;
        Some(
            slots
                .into_iter()
                .map(|slot| slot.unwrap_or_else(|| Err(closed())))
                .collect(),
        )
    }

    /// Run `work` with the writer on the caller's thread if that cannot wait:
    /// nobody else in this process is writing or queued, no catch-up is due,
    /// and the writer's busy timeout is 0. `None`: nothing ran.
    fn on_idle_writer<R>(
        self: &Arc<Self>,
        work: impl FnOnce(&Connection) -> Option<R>,
    ) -> Option<R> {
        if !self.queue.lock().expect("write queue").is_empty()
            || self.catch_up.load(SeqCst)
            || self
                .combining
                .compare_exchange(false, true, SeqCst, SeqCst)
                .is_err()
        {
            return None;
        }
        let outcome = {
            let mut writer = self.writer.lock().expect("writer");
            let Writer { conn, waiting, .. } = &mut *writer;
            match conn.as_ref() {
                Some(conn) if waiting.is_zero() || conn.busy_timeout(Duration::ZERO).is_ok() => {
                    *waiting = Duration::ZERO;
                    work(conn)
                }
                _ => None,
            }
        };
        self.combining.store(false, SeqCst);
        // Jobs queued meanwhile found the writer taken: run them elsewhere, so
        // this thread (the JS thread) only ever runs its own writes.
        if !self.queue.lock().expect("write queue").is_empty() {
            self.drain_elsewhere();
        }
        outcome
    }

    /// Hand the queue to another thread (a reader's; the writer is free now).
    fn drain_elsewhere(self: &Arc<Self>) {
        if let Some(reads) = &self.reads {
            let engine = self.clone();
            if reads.send(Box::new(move |_| engine.drain())) {
                return;
            }
        }
        let engine = self.clone();
        spawn("cairnq-sqlite-drain", move || engine.drain());
    }

    /// Run a read on a reader connection (the writer's, for in-memory databases).
    pub async fn read<T, F>(self: &Arc<Self>, work: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T> + Send + 'static,
    {
        match &self.reads {
            Some(reads) => reads.read(work).await,
            None => self.write(work).await,
        }
    }

    /// A short read on the calling thread when the inline reader is free,
    /// else queued to a reader: one statement's time on the caller costs
    /// less than the two thread hand-offs of a queued read.
    pub async fn read_here<T, F>(self: &Arc<Self>, work: F) -> Result<T>
    where
        T: Send + 'static,
        F: Fn(&Connection) -> Result<T> + Send + 'static,
    {
        if let Some(answer) = self.read_inline(&work) {
            return answer;
        }
        self.read(work).await
    }

    /// A read that leads into a write (the claim probe): on the writer's own
    /// connection when it is idle, so the transaction that may follow finds
    /// the pages the read just loaded in its cache (a commit elsewhere empties
    /// every connection's cache); otherwise as `read_here`.
    pub async fn read_before_write<T, F>(self: &Arc<Self>, work: F) -> Result<T>
    where
        T: Send + 'static,
        F: Fn(&Connection) -> Result<T> + Send + 'static,
    {
        match self.on_idle_writer(|conn| unless_busy(work(conn))) {
            Some(answer) => answer,
            None => self.read_here(work).await,
        }
    }

    /// Run a read on the caller's thread if that cannot wait: `None` when the
    /// inline connection is in use elsewhere or the database answered busy.
    pub fn read_inline<T>(&self, work: impl FnOnce(&Connection) -> Result<T>) -> Option<Result<T>> {
        let conn = self.inline.as_ref()?.try_lock().ok()?;
        unless_busy(work(&conn))
    }

    /// Run what is queued unless another thread is already doing so: that
    /// thread sees every job queued before it lets go of the writer.
    pub fn drain(self: &Arc<Self>) {
        loop {
            if self
                .combining
                .compare_exchange(false, true, SeqCst, SeqCst)
                .is_err()
            {
                return;
            }
            match self.combine(false) {
                TurnEnd::HandedOff => return,
                TurnEnd::CatchUpElsewhere => {
                    self.combining.store(false, SeqCst);
                    self.drain_elsewhere();
                    return;
                }
                TurnEnd::Drained => {}
            }
            self.combining.store(false, SeqCst);
            // A job queued after the last look but before the release above
            // found the writer taken: run it now.
            if self.queue.lock().expect("write queue").is_empty() {
                return;
            }
        }
    }

    /// Run groups until the queue is empty. Without `may_wait`, a group that
    /// finds the file locked goes back to the front of the queue and a thread
    /// that may wait takes over as combiner.
    fn combine(self: &Arc<Self>, may_wait: bool) -> TurnEnd {
        let mut writer = self.writer.lock().expect("writer");
        let waiting = if may_wait {
            self.busy_timeout
        } else {
            Duration::ZERO
        };
        let Writer {
            conn,
            waiting: current,
            stats_refreshed,
        } = &mut *writer;
        let Some(conn) = conn.as_ref() else {
            // Closed: every queued job hears so as its reply drops.
            self.queue.lock().expect("write queue").clear();
            return TurnEnd::Drained;
        };
        if *current != waiting && conn.busy_timeout(waiting).is_ok() {
            *current = waiting;
        }
        let mut last_group = 0;
        loop {
            if last_group > 1 {
                self.gather(last_group);
            }
            // A catch-up copies the log's tail and syncs the file: milliseconds
            // the async runtime's thread (its only one) must not spend.
            if self.catch_up.load(SeqCst) && tokio::runtime::Handle::try_current().is_ok() {
                return TurnEnd::CatchUpElsewhere;
            }
            let group: Vec<_> = {
                let mut queue = self.queue.lock().expect("write queue");
                let n = queue.len().min(MAX_GROUP);
                queue.drain(..n).collect()
            };
            last_group = group.len();
            if group.is_empty() {
                return TurnEnd::Drained;
            }
            if self.catch_up.swap(false, SeqCst) {
                checkpointer::checkpoint(conn);
            }
            if stats_refreshed.elapsed() >= STATS_EVERY {
                *stats_refreshed = Instant::now();
                refresh_planner_stats(conn);
            }
            let (handed_back, committed) = run_group(conn, group, may_wait);
            if committed {
                self.committed(false);
            }
            if let Some(group) = handed_back {
                let mut queue = self.queue.lock().expect("write queue");
                for job in group.into_iter().rev() {
                    queue.push_front(job);
                }
                drop(queue);
                let engine = self.clone();
                spawn("cairnq-sqlite-wait", move || {
                    engine.combine(true);
                    engine.combining.store(false, SeqCst);
                    engine.drain();
                });
                return TurnEnd::HandedOff;
            }
        }
    }

    /// `inline`: the commit ran on the caller's (the JS) thread.
    fn committed(&self, inline: bool) {
        if let Some(hook) = &self.on_commit {
            hook(inline);
        }
    }

    /// Under concurrent load (the last group had several jobs), wait a moment
    /// for the queue to fill to that size again: fewer, larger commits. A lone
    /// writer never waits here.
    fn gather(&self, target: usize) {
        let deadline = Instant::now() + GATHER_FOR;
        while self.queue.lock().expect("write queue").len() < target && Instant::now() < deadline {
            std::thread::yield_now();
        }
    }

    /// Finish queued work, close every connection and join the threads.
    pub fn shutdown(self: &Arc<Self>) {
        // Take the writer from whoever combines, once the queue has run.
        while self
            .combining
            .compare_exchange(false, true, SeqCst, SeqCst)
            .is_err()
        {
            std::thread::sleep(Duration::from_millis(1));
        }
        self.combine(true);
        self.writer.lock().expect("writer").conn = None;
        self.combining.store(false, SeqCst);
        if let Some(reads) = &self.reads {
            reads.stop();
        }
        let threads = std::mem::take(&mut *self.threads.lock().expect("engine threads lock"));
        for thread in threads {
            let _ = thread.join();
        }
    }
}

#[derive(PartialEq, Eq)]
enum TurnEnd {
    Drained,
    HandedOff,
    /// A catch-up is due and this is the async runtime's thread.
    CatchUpElsewhere,
}

/// A read's outcome, or `None` when the database answered busy (the read is
/// then tried elsewhere).
fn unless_busy<T>(outcome: Result<T>) -> Option<Result<T>> {
    match outcome {
        Err(err) if err.is_busy() => None,
        outcome => Some(outcome),
    }
}
