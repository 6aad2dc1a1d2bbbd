//! The checkpointer: its own connection and thread copy the WAL back into
//! the database, woken by the writer's WAL hook, so no commit (least of all
//! one on the JS thread) pays for a checkpoint.

use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::Arc;
use std::thread::JoinHandle;

use crossbeam_channel::Receiver;
use rusqlite::Connection;

use super::threads::spawn;

/// WAL size (pages) past which the checkpointer copies the log back into the
/// database: SQLite's own automatic threshold, moved off the committing thread.
const CHECKPOINT_PAGES: i32 = 1000;
/// WAL size (pages) past which the writer finishes the checkpoint itself
/// before its next group, so the log starts over (see `checkpoint_loop`).
/// Below it the log starts over on its own whenever the checkpointer copies
/// it whole between two commits; each forced start costs the writer two or
/// three fsyncs, which is why it waits for four thresholds' worth.
const CATCH_UP_PAGES: i32 = 4 * CHECKPOINT_PAGES;
/// Pages committed between two checkpointer passes: a pass per commit would
/// fsync the database beside every commit.
const PASS_PAGES: i32 = 250;

/// Hooks `writer`'s commits and starts the checkpointer's thread on `conn`;
/// `catch_up` is set when the writer must finish a checkpoint itself.
/// `None` when the hook could not be installed (no checkpointer then).
pub(super) fn start(
    writer: &mut Connection,
    conn: Connection,
    catch_up: &Arc<AtomicBool>,
) -> Option<JoinHandle<()>> {
    // The hook replaces SQLite's automatic checkpoint on the writer and
    // owns the only sender: closing the writer ends the checkpointer.
    let (wake, wakes) = crossbeam_channel::bounded::<()>(1);
    let due = catch_up.clone();
    let mut next_pass = CHECKPOINT_PAGES;
    let hooked = writer.wal_hook(Some(move |_: &mut rusqlite::hooks::Wal, pages: i32| {
        if pages >= CATCH_UP_PAGES {
            due.store(true, SeqCst);
        } else if pages >= next_pass {
            let _ = wake.try_send(());
            next_pass = pages + PASS_PAGES;
        } else if pages < CHECKPOINT_PAGES {
            next_pass = CHECKPOINT_PAGES;
        }
        Ok(())
    }));
    if hooked.is_err() {
        return None;
    }
    let catch_up = catch_up.clone();
    Some(spawn("cairnq-sqlite-checkpoint", move || {
        checkpoint_loop(conn, wakes, catch_up)
    }))
}

/// Copies the WAL back into the database when the writer's hook says it has
/// grown past `CHECKPOINT_PAGES`, then every `PASS_PAGES`. PASSIVE copies
/// without waiting for anyone; a pass that copies the whole log (no commit
/// landed during it) lets the next transaction start the log over. Under a steady stream of commits
/// that never happens, and alone the file would grow without bound (every
/// commit extending it, which costs the kernel fresh zeroed pages). So past
/// `CATCH_UP_PAGES` the hook asks the writer to copy the frames the passes
/// have not reached yet itself (`catch_up`), with no commit in between.
fn checkpoint_loop(conn: Connection, wakes: Receiver<()>, catch_up: Arc<AtomicBool>) {
    while wakes.recv().is_ok() {
        // Until the writer has had its turn, another pass would only hold the
        // checkpoint lock against it.
        if !catch_up.load(SeqCst) {
            checkpoint(&conn);
        }
    }
}

pub(super) fn checkpoint(conn: &Connection) {
    let _ = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
}
