//! Wakeups for SQLite: a commit by any process — ours, another worker, the
//! Python SDK — writes to the database's `-wal` file. While someone waits (an
//! idle worker, a `wait`/`call`), the OS reports changes to that file and the
//! waiters wake. On Linux the inotify descriptor sits in the async runtime's
//! own poll set, so an event wakes the waiting task with no thread between;
//! elsewhere `notify`'s thread (kqueue, FSEvents, ReadDirectoryChangesW)
//! hands events over. Where no watch can be set up, the file's size and
//! modification time are checked every few milliseconds instead. A commit of
//! this process wakes its waiters directly (`committed`). An accelerator
//! only, like Postgres's LISTEN: every waiter keeps its own deadline, and
//! polling remains the source of truth.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use futures_util::{Stream, StreamExt};
use tokio::sync::watch;
use tokio::time::Instant as TokioInstant;

/// How often the file is checked while someone waits, without OS events.
const CHECK_EVERY: Duration = Duration::from_millis(2);
/// How long after a write to the `-wal` file its commit is surely published
/// (SQLite updates the wal-index right after the write returns).
const PUBLISH_GRACE: Duration = Duration::from_millis(2);
/// The least time between two announcements of commits made on the JS
/// thread, where each system call is the application's time: under a stream
/// of commits one announcement in this time is enough, and any commit left
/// unannounced still woke other processes' watches with its write, whose
/// trailing wake follows `PUBLISH_GRACE` later. Commits on other threads (a
/// worker's completions, which a `call()` elsewhere waits for) always
/// announce: a waiter woken by the write event may read before the commit is
/// published and then sleep until the trailing wake.
const ANNOUNCE_EVERY: Duration = Duration::from_millis(1);
/// How long an OS watch outlives its last waiter: back-to-back waits
/// (`call` after `call`) reuse it instead of setting up a new one each time.
const LINGER: Duration = Duration::from_millis(500);

pub struct WalWatch {
    wal: PathBuf,
    #[cfg(unix)]
    wal_c: std::ffi::CString,
    /// Bumped on every change seen.
    changes: watch::Sender<u64>,
    source: Mutex<Source>,
    /// Counts the waits begun: a watch is dropped only after `LINGER`
    /// without a new one.
    waits: AtomicU64,
    /// When the last announcement was made: µs since `created`, plus
    /// `ANNOUNCE_EVERY` (so 0 means never).
    announced_at: AtomicU64,
    created: Instant,
}

/// What feeds `changes` from other processes' commits.
enum Source {
    Idle,
    /// Held for as long as the watch should last; dropping it ends the watch.
    Os {
        _watch: OsWatch,
    },
    Polling,
}

type Stamp = Option<(u64, Option<SystemTime>)>;

impl WalWatch {
    /// `None` for databases without a WAL file of their own (in memory, URIs).
    pub fn new(path: &str) -> Option<Arc<WalWatch>> {
        if super::conn::is_in_memory(path) || path.starts_with("file:") {
            return None;
        }
        let wal = format!("{path}-wal");
        Some(Arc::new(WalWatch {
            #[cfg(unix)]
            wal_c: std::ffi::CString::new(wal.clone()).ok()?,
            wal: PathBuf::from(wal),
            changes: watch::channel(0).0,
            source: Mutex::new(Source::Idle),
            waits: AtomicU64::new(0),
            announced_at: AtomicU64::new(0),
            created: Instant::now(),
        }))
    }

    /// The count of changes seen so far (see `Backend::wake_ticket`). The
    /// watch starts here if it is not running, so that a commit after the
    /// ticket is seen even when the wait that follows starts later.
    pub fn ticket(self: &Arc<Self>) -> u64 {
        self.waits.fetch_add(1, Ordering::SeqCst);
        let mut source = self.source.lock().expect("wal watch");
        if matches!(*source, Source::Idle) {
            *source = self.start();
            drop(source);
            self.stop_when_unwatched();
        }
        *self.changes.borrow()
    }

    /// Resolves when the database may have changed since `since` (a
    /// `ticket`), after `timeout` at the latest.
    pub async fn changed(self: &Arc<Self>, since: u64, timeout: Duration) {
        self.waits.fetch_add(1, Ordering::SeqCst);
        let mut changes = {
            let mut source = self.source.lock().expect("wal watch");
            let changes = self.changes.subscribe();
            if matches!(*source, Source::Idle) {
                *source = self.start();
            }
            changes
        };
        if *changes.borrow_and_update() == since {
            let _ = tokio::time::timeout(timeout, changes.changed()).await;
        }
        drop(changes);
        self.stop_when_unwatched();
    }

    /// This process has just committed: its waiters wake directly, and
    /// other processes' watches get an event now that the commit is
    /// published (the write event of its frames may have come too early).
    /// `inline` commits (on the JS thread) announce at most once per
    /// `ANNOUNCE_EVERY`.
    pub fn committed(&self, inline: bool) {
        self.wake_here();
        if !inline || self.announce_due(self.created.elapsed()) {
            self.announce();
        }
    }

    /// Wake this process's waiters, as one of its commits does: what is due
    /// changed without a write (a test clock moved).
    pub fn wake_here(&self) {
        self.changes.send_modify(|n| *n += 1);
    }

    /// At most one announcement per `ANNOUNCE_EVERY` (the first is always
    /// due); `since_created` is the time now.
    fn announce_due(&self, since_created: Duration) -> bool {
        let every = ANNOUNCE_EVERY.as_micros() as u64;
        let now = since_created.as_micros() as u64 + every;
        let last = self.announced_at.load(Ordering::Relaxed);
        now - last >= every
            && self
                .announced_at
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
    }

    /// Set the `-wal` file's times to now: one system call, an attribute
    /// event for OS watches and a new modification time for stat pollers.
    #[cfg(unix)]
    fn announce(&self) {
        // SAFETY: a NUL-terminated path and a null times pointer ("now").
        unsafe {
            libc::utimensat(libc::AT_FDCWD, self.wal_c.as_ptr(), std::ptr::null(), 0);
        }
    }

    /// Elsewhere the trailing wake covers the early event.
    #[cfg(not(unix))]
    fn announce(&self) {}

    fn start(self: &Arc<Self>) -> Source {
        match self.os_watch() {
            Some(watch) => Source::Os { _watch: watch },
            None => {
                self.poll_stamps();
                Source::Polling
            }
        }
    }

    /// A watch on the file's directory (the `-wal` file comes and goes), for
    /// events that name it, pumped into `changes` by a task of the runtime.
    fn os_watch(&self) -> Option<OsWatch> {
        let dir = self
            .wal
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf();
        let name: OsString = self.wal.file_name()?.to_os_string();
        let (events, source) = os_events(&dir, name)?;
        let pump = tokio::spawn(pump(events, self.changes.clone()));
        Some(OsWatch {
            pump: pump.abort_handle(),
            _source: source,
        })
    }

    /// Drop the OS watch (or end the polling task) once nobody has waited for
    /// `LINGER`.
    fn stop_when_unwatched(self: &Arc<Self>) {
        if self.changes.receiver_count() > 0 {
            return;
        }
        let watch = self.clone();
        let waits = self.waits.load(Ordering::SeqCst);
        tokio::spawn(async move {
            tokio::time::sleep(LINGER).await;
            let mut source = watch.source.lock().expect("wal watch");
            if watch.changes.receiver_count() == 0 && watch.waits.load(Ordering::SeqCst) == waits {
                *source = Source::Idle;
            }
        });
    }

    fn stamp(&self) -> Stamp {
        let meta = std::fs::metadata(&self.wal).ok()?;
        Some((meta.len(), meta.modified().ok()))
    }

    /// The fallback: compare the file's size and modification time every
    /// `CHECK_EVERY` until the source is reset to idle.
    fn poll_stamps(self: &Arc<Self>) {
        let watch = self.clone();
        tokio::spawn(async move {
            let mut last = watch.stamp();
            loop {
                tokio::time::sleep(CHECK_EVERY).await;
                if !matches!(*watch.source.lock().expect("wal watch"), Source::Polling) {
                    return;
                }
                let now = watch.stamp();
                if now != last {
                    last = now;
                    watch.changes.send_modify(|n| *n += 1);
                }
            }
        });
    }
}

/// An OS watch: the task pumping its events, and what must live as long.
struct OsWatch {
    pump: tokio::task::AbortHandle,
    _source: Box<dyn std::any::Any + Send>,
}

impl Drop for OsWatch {
    fn drop(&mut self) {
        self.pump.abort();
    }
}

/// What the OS reported, reduced to what matters here.
enum Seen {
    /// An event naming the `-wal` file.
    Wal,
    /// Events may have been lost (queue overflow, read error).
    Lost,
}

/// Bump `changes` for each event, and once more `PUBLISH_GRACE` after each
/// burst: a write event comes with the frames, a moment before the writer
/// publishes them in the wal-index, so a waiter that read in between saw
/// nothing new. (Our own commits announce themselves once published; the
/// trailing wake covers other writers.)
async fn pump(events: impl Stream<Item = Seen>, changes: watch::Sender<u64>) {
    let mut events = std::pin::pin!(events);
    let mut trail: Option<TokioInstant> = None;
    let mut burst_continued = false;
    loop {
        tokio::select! {
            seen = events.next() => {
                let Some(seen) = seen else { return };
                changes.send_modify(|n| *n += 1);
                if matches!(seen, Seen::Lost) {
                    // A descriptor that keeps failing must not spin.
                    tokio::time::sleep(CHECK_EVERY).await;
                }
                match trail {
                    None => trail = Some(TokioInstant::now() + PUBLISH_GRACE),
                    Some(_) => burst_continued = true,
                }
            }
            // (Disabled without a trail; the deadline is then never awaited.)
            _ = tokio::time::sleep_until(trail.unwrap_or_else(TokioInstant::now)), if trail.is_some() => {
                changes.send_modify(|n| *n += 1);
                trail = std::mem::take(&mut burst_continued)
                    .then(|| TokioInstant::now() + PUBLISH_GRACE);
            }
        }
    }
}

/// The events of one OS watch, and what must live as long as they are read.
type OsEvents = (
    std::pin::Pin<Box<dyn Stream<Item = Seen> + Send>>,
    Box<dyn std::any::Any + Send>,
);

#[cfg(target_os = "linux")]
fn os_events(dir: &Path, name: OsString) -> Option<OsEvents> {
    inotify_events(dir, name)
}

#[cfg(not(target_os = "linux"))]
fn os_events(dir: &Path, name: OsString) -> Option<OsEvents> {
    notify_events(dir, name)
}

/// Linux: the inotify descriptor itself is the stream, read by the runtime.
#[cfg(target_os = "linux")]
fn inotify_events(dir: &Path, name: OsString) -> Option<OsEvents> {
    use inotify::{EventMask, Inotify, WatchMask};
    let inotify = Inotify::init().ok()?;
    inotify
        .watches()
        .add(
            dir,
            WatchMask::MODIFY | WatchMask::ATTRIB | WatchMask::CREATE | WatchMask::MOVED_TO,
        )
        .ok()?;
    let events = inotify.into_event_stream([0u8; 4096]).ok()?;
    let events = events.filter_map(move |event| {
        let seen = match event {
            Ok(event) if event.mask.contains(EventMask::Q_OVERFLOW) => Some(Seen::Lost),
            Ok(event) => (event.name.as_deref() == Some(name.as_os_str())).then_some(Seen::Wal),
            Err(_) => Some(Seen::Lost),
        };
        std::future::ready(seen)
    });
    Some((Box::pin(events), Box::new(())))
}

/// Elsewhere: `notify`'s watcher (kqueue on macOS, ReadDirectoryChangesW)
/// calls back on a thread of its own, which hands events to the pump.
#[cfg(any(not(target_os = "linux"), test))]
fn notify_events(dir: &Path, name: OsString) -> Option<OsEvents> {
    use notify::Watcher;
    #[cfg(target_os = "macos")]
    let wal = dir.join(&name);
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        let seen = match event {
            Ok(event) if event.kind.is_access() => return,
            Ok(event) if event.need_rescan() => Seen::Lost,
            Ok(event)
                if event
                    .paths
                    .iter()
                    .any(|p| p.file_name() == Some(name.as_os_str())) =>
            {
                Seen::Wal
            }
            Ok(_) => return,
            Err(_) => Seen::Lost,
        };
        let _ = tx.send(seen);
    })
    .ok()?;
    watcher
        .watch(dir, notify::RecursiveMode::NonRecursive)
        .ok()?;
    // kqueue reports a write to a file only to a watch on that file, and
    // notify adds one by itself only for files created after the directory's
    // watch: a WAL that exists already is watched too (none yet is no error).
    #[cfg(target_os = "macos")]
    let _ = watcher.watch(&wal, notify::RecursiveMode::NonRecursive);
    let events = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|seen| (seen, rx))
    });
    Some((Box::pin(events), Box::new(watcher)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[tokio::test]
    async fn a_write_to_the_wal_ends_the_wait_early() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("q.db");
        let wal = dir.path().join("q.db-wal");
        std::fs::write(&wal, b"one").unwrap();
        let watch = WalWatch::new(path.to_str().unwrap()).unwrap();
        let writer = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            std::fs::write(&wal, b"one two").unwrap();
        });
        let started = Instant::now();
        watch.changed(watch.ticket(), Duration::from_secs(30)).await;
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the change was missed"
        );
        writer.await.unwrap();
    }

    #[tokio::test]
    async fn a_commit_of_this_process_ends_the_wait_early() {
        let dir = tempfile::tempdir().unwrap();
        let watch = WalWatch::new(dir.path().join("q.db").to_str().unwrap()).unwrap();
        let committer = watch.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            committer.committed(false);
        });
        let started = Instant::now();
        watch.changed(watch.ticket(), Duration::from_secs(30)).await;
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the commit was missed"
        );
    }

    /// Two watches on one database stand for two processes: the committer's
    /// announcement is the only change the other one can see.
    #[cfg(unix)]
    #[tokio::test]
    async fn a_commit_here_wakes_a_watch_elsewhere() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("q.db");
        std::fs::write(dir.path().join("q.db-wal"), b"frames").unwrap();
        let here = WalWatch::new(path.to_str().unwrap()).unwrap();
        let there = WalWatch::new(path.to_str().unwrap()).unwrap();
        let ticket = there.ticket();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            here.committed(false);
        });
        let started = Instant::now();
        there.changed(ticket, Duration::from_secs(30)).await;
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the announcement was missed"
        );
    }

    #[test]
    fn a_stream_of_commits_announces_once_per_interval() {
        let dir = tempfile::tempdir().unwrap();
        let watch = WalWatch::new(dir.path().join("q.db").to_str().unwrap()).unwrap();
        let at = |us| Duration::from_micros(us);
        assert!(watch.announce_due(at(0)), "the first commit announces");
        assert!(!watch.announce_due(at(300)), "one soon after it does not");
        assert!(
            !watch.announce_due(at(999)),
            "nor one just before the interval ends"
        );
        assert!(watch.announce_due(at(1_000)), "one after the interval does");
        assert!(!watch.announce_due(at(1_500)));
    }

    #[tokio::test]
    async fn without_a_change_the_wait_lasts_its_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let watch = WalWatch::new(dir.path().join("q.db").to_str().unwrap()).unwrap();
        let started = Instant::now();
        watch
            .changed(watch.ticket(), Duration::from_millis(40))
            .await;
        assert!(started.elapsed() >= Duration::from_millis(40));
    }

    #[tokio::test]
    async fn a_change_after_the_ticket_ends_the_wait_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let watch = WalWatch::new(dir.path().join("q.db").to_str().unwrap()).unwrap();
        let ticket = watch.ticket();
        watch.committed(true);
        let started = Instant::now();
        watch.changed(ticket, Duration::from_secs(30)).await;
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the wait slept through a change"
        );
    }

    /// Each OS source reports writes that name the `-wal` file, and only those.
    async fn reports_writes_to_the_wal_only(events: fn(&Path, OsString) -> Option<OsEvents>) {
        let dir = tempfile::tempdir().unwrap();
        let (mut seen, _source) = events(dir.path(), OsString::from("q.db-wal")).unwrap();
        std::fs::write(dir.path().join("q.db"), b"main file").unwrap();
        // The event of that write is queued by now (or within the notify
        // thread's next turn): reported, it would show here.
        let other = tokio::time::timeout(Duration::from_millis(100), seen.next()).await;
        assert!(other.is_err(), "a write to another file was reported");
        std::fs::write(dir.path().join("q.db-wal"), b"frames").unwrap();
        let first = tokio::time::timeout(Duration::from_secs(20), seen.next())
            .await
            .expect("the write to the wal was reported");
        assert!(matches!(first, Some(Seen::Wal)));
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn inotify_reports_writes_to_the_wal_only() {
        reports_writes_to_the_wal_only(inotify_events).await;
    }

    /// The source other platforms use, run here too so it stays correct.
    #[tokio::test]
    async fn notify_reports_writes_to_the_wal_only() {
        reports_writes_to_the_wal_only(notify_events).await;
    }

    #[tokio::test(start_paused = true)]
    async fn an_event_wakes_at_once_and_again_after_the_grace() {
        let (changes, mut seen) = watch::channel(0u64);
        let events = futures_util::stream::iter([Seen::Wal]).chain(futures_util::stream::pending());
        let started = tokio::time::Instant::now();
        tokio::spawn(pump(events, changes));
        seen.wait_for(|n| *n == 1).await.unwrap();
        assert!(
            started.elapsed() < PUBLISH_GRACE,
            "the first wake is immediate"
        );
        seen.wait_for(|n| *n == 2).await.unwrap();
        assert!(
            started.elapsed() >= PUBLISH_GRACE,
            "the trailing wake waits"
        );
        // Virtual time: this runs every timer due in the next while at once.
        tokio::time::sleep(PUBLISH_GRACE * 10).await;
        assert_eq!(*seen.borrow(), 2, "one trailing wake per burst");
    }

    #[test]
    fn memory_databases_have_no_wal_to_watch() {
        assert!(WalWatch::new(":memory:").is_none());
        assert!(WalWatch::new("file:x?mode=memory").is_none());
    }
}
