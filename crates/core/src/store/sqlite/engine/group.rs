//! One group of write jobs in one transaction, every outcome delivered after
//! the commit.

use rusqlite::Connection;

use super::jobs::WriteJob;
use crate::store::sqlite::conn::sqlite_error;
use crate::store::sqlite::query::transaction_control as exec;

/// Run one group in one transaction and deliver every outcome after the
/// commit. Returns the group untouched when another connection holds the lock
/// and `may_wait` is off, and whether a commit happened.
#[allow(clippy::type_complexity)]
pub(super) fn run_group<'a>(
    conn: &Connection,
    mut group: Vec<Box<dyn WriteJob + 'a>>,
    may_wait: bool,
) -> (Option<Vec<Box<dyn WriteJob + 'a>>>, bool) {
    if let Err(e) = exec(conn, "BEGIN IMMEDIATE") {
        let err = sqlite_error(e);
        if err.is_busy() && !may_wait {
            return (Some(group), false);
        }
        group
            .into_iter()
            .for_each(|job| job.deliver(Some(err.clone())));
        return (None, false);
    }
    // A job alone in its group fails with the transaction; in company, a
    // failing statement already undoes itself, and only jobs of several
    // statements need a savepoint (whose page copies are not free) to fail
    // as a unit without taking the others down.
    let shared = group.len() > 1;
    for job in &mut group {
        if !shared {
            if !job.run(conn) {
                // Undo whatever its earlier statements wrote; it hears its own error.
                let _ = exec(conn, "ROLLBACK");
                group.into_iter().for_each(|job| job.deliver(None));
                return (None, false);
            }
            continue;
        }
        if !job.transactional() {
            job.run(conn);
            continue;
        }
        let isolated = exec(conn, "SAVEPOINT cairnq_job").is_ok();
        let ok = job.run(conn);
        if isolated {
            if !ok {
                let _ = exec(conn, "ROLLBACK TO cairnq_job");
            }
            let _ = exec(conn, "RELEASE cairnq_job");
        }
    }
    match exec(conn, "COMMIT") {
        Ok(()) => {
            group.into_iter().for_each(|job| job.deliver(None));
            (None, true)
        }
        Err(e) => {
            let _ = exec(conn, "ROLLBACK");
            let err = sqlite_error(e);
            group
                .into_iter()
                .for_each(|job| job.deliver(Some(err.clone())));
            (None, false)
        }
    }
}
