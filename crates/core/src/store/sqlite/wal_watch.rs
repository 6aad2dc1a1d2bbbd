//! Wakeups for SQLite: a commit by any process — ours, another worker, the
//! Python SDK — writes to the database's `-wal` file. While someone waits (an
//! idle worker, a `wait`/`call`), the OS reports changes to that file
//! (inotify, kqueue, FSEvents, ReadDirectoryChangesW through `notify`) and the
//! waiters wake; where no such watch can be set up, the file's size and
//! modification time are checked every few milliseconds instead. A commit of
//! this process wakes its waiters directly (`committed`). An accelerator
//! only, like Postgres's LISTEN: every waiter keeps its own deadline, and
//! polling remains the source of truth.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use notify::{RecommendedWatcher, RecursiveMode, Watcher};
use tokio::sync::watch;

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
        _watch: RecommendedWatcher,
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
        self.changes.send_modify(|n| *n += 1);
        if !inline || self.announce_due(self.created.elapsed()) {
            self.announce();
        }
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
            Some(watcher) => Source::Os { _watch: watcher },
            None => {
                self.poll_stamps();
                Source::Polling
            }
        }
    }

    /// A watch on the file's directory (the `-wal` file comes and goes), for
    /// events that name it.
    fn os_watch(&self) -> Option<RecommendedWatcher> {
        let dir = self
            .wal
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf();
        let name: OsString = self.wal.file_name()?.to_os_string();
        let changes = self.changes.clone();
        // A write event comes with the frames, a moment before the writer
        // publishes them in the wal-index: a waiter that read in between saw
        // nothing new. Our own commits announce themselves once published
        // (`committed`); for other writers a second wake follows each burst of
        // events after `PUBLISH_GRACE`. The thread ends with the watch.
        let (trail, trails) = crossbeam_channel::bounded::<()>(1);
        let trailing = self.changes.clone();
        std::thread::Builder::new()
            .name("cairnq-wal-trail".into())
            .spawn(move || {
                while trails.recv().is_ok() {
                    std::thread::sleep(PUBLISH_GRACE);
                    trailing.send_modify(|n| *n += 1);
                }
            })
            .ok()?;
        let mut watcher =
            notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
                let Ok(event) = event else { return };
                if event.kind.is_access() {
                    return;
                }
                if event
                    .paths
                    .iter()
                    .any(|p| p.file_name() == Some(name.as_os_str()))
                {
                    changes.send_modify(|n| *n += 1);
                    let _ = trail.try_send(());
                }
            })
            .ok()?;
        watcher.watch(&dir, RecursiveMode::NonRecursive).ok()?;
        Some(watcher)
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

    #[test]
    fn memory_databases_have_no_wal_to_watch() {
        assert!(WalWatch::new(":memory:").is_none());
        assert!(WalWatch::new("file:x?mode=memory").is_none());
    }
}
