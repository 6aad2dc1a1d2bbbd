//! Task and worker identifiers: a prefix and a 26-character Crockford ULID
//! (docs/protocol.md, "Identifiers"), and the SDK wall clock that SQLite
//! statements bind.

use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

/// The process's one ULID source: within a millisecond it increments the
/// previous ULID instead of drawing new random bits, so ids made one after
/// another sort in that order and claims (`…, run_at_ms, id`) take one
/// submitter's equal tasks in submit order.
static ULIDS: Mutex<ulid::Generator> = Mutex::new(ulid::Generator::new());

/// Epoch milliseconds from the host clock.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// `<prefix>_` + a fresh ULID, e.g. `task_01J…`, greater than every id this
/// process made before.
pub fn new_id(prefix: &str) -> String {
    let ulid = {
        let mut ulids = ULIDS
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        // 2^80 ids in one millisecond: the next one borrows the next millisecond.
        ulids
            .generate()
            .unwrap_or_else(|overflow| overflow.commit_overflow_increment())
    };
    format!("{prefix}_{ulid}")
}

pub fn new_task_id() -> String {
    new_id("task")
}

pub fn new_worker_id() -> String {
    new_id("worker")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_prefixed_crockford_ulids() {
        let id = new_task_id();
        let (prefix, ulid) = id.split_once('_').unwrap();
        assert_eq!(prefix, "task");
        assert_eq!(ulid.len(), 26);
        assert!(ulid
            .chars()
            .all(|c| "0123456789ABCDEFGHJKMNPQRSTVWXYZ".contains(c)));
        assert!(ulid.as_bytes()[0] <= b'7');
        assert!(new_worker_id().starts_with("worker_"));
    }

    #[test]
    fn ids_sort_by_creation_millisecond() {
        let a = new_task_id();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let b = new_task_id();
        assert!(a < b);
    }

    #[test]
    fn ids_made_within_one_millisecond_sort_in_the_order_made() {
        let ids: Vec<String> = (0..10_000).map(|_| new_task_id()).collect();
        assert!(ids.windows(2).all(|pair| pair[0] < pair[1]));
        // Still plain ULIDs: each decodes, its time the millisecond it was made in.
        let made = ulid::Ulid::from_string(&ids[0]["task_".len()..]).unwrap();
        assert!((made.timestamp_ms() as i64 - now_ms()).abs() < 60_000);
    }
}
