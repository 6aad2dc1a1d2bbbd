//! Wakeups for SQLite: a commit by any process — ours, another worker, the
//! Python SDK — writes to the database's `-wal` file. While someone waits
//! (an idle worker, a `wait`/`call`), one task per store checks that file's
//! size and modification time every few milliseconds and wakes the waiters
//! when it changes. An accelerator only, like Postgres's LISTEN: every waiter
//! still has its own deadline, and polling remains the source of truth.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use tokio::sync::watch;

/// How often the file is checked while someone waits.
const CHECK_EVERY: Duration = Duration::from_millis(2);

pub struct WalWatch {
    wal: PathBuf,
    /// Bumped on every change seen.
    changes: watch::Sender<u64>,
    /// Whether the checking task runs; it stops when nobody waits.
    checking: Mutex<bool>,
}

type Stamp = Option<(u64, Option<SystemTime>)>;

impl WalWatch {
    /// `None` for databases without a WAL file of their own (in memory, URIs).
    pub fn new(path: &str) -> Option<Arc<WalWatch>> {
        if super::conn::is_in_memory(path) || path.starts_with("file:") {
            return None;
        }
        Some(Arc::new(WalWatch {
            wal: PathBuf::from(format!("{path}-wal")),
            changes: watch::channel(0).0,
            checking: Mutex::new(false),
        }))
    }

    /// Resolves when the database may have changed, after `timeout` at the latest.
    pub async fn changed(self: &Arc<Self>, timeout: Duration) {
        let mut changes = self.changes.subscribe();
        changes.borrow_and_update();
        self.start_checking();
        let _ = tokio::time::timeout(timeout, changes.changed()).await;
    }

    fn stamp(&self) -> Stamp {
        let meta = std::fs::metadata(&self.wal).ok()?;
        Some((meta.len(), meta.modified().ok()))
    }

    fn start_checking(self: &Arc<Self>) {
        let mut checking = self.checking.lock().expect("wal watch");
        if *checking {
            return;
        }
        *checking = true;
        let watch = self.clone();
        tokio::spawn(async move {
            let mut last = watch.stamp();
            loop {
                tokio::time::sleep(CHECK_EVERY).await;
                {
                    // Stop, under the lock, only while nobody waits: a waiter
                    // that subscribes next will start a new task.
                    let mut checking = watch.checking.lock().expect("wal watch");
                    if watch.changes.receiver_count() == 0 {
                        *checking = false;
                        return;
                    }
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
        watch.changed(Duration::from_secs(30)).await;
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the change was missed"
        );
        writer.await.unwrap();
    }

    #[tokio::test]
    async fn without_a_change_the_wait_lasts_its_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let watch = WalWatch::new(dir.path().join("q.db").to_str().unwrap()).unwrap();
        let started = Instant::now();
        watch.changed(Duration::from_millis(40)).await;
        assert!(started.elapsed() >= Duration::from_millis(40));
    }

    #[test]
    fn memory_databases_have_no_wal_to_watch() {
        assert!(WalWatch::new(":memory:").is_none());
        assert!(WalWatch::new("file:x?mode=memory").is_none());
    }
}
