//! Task and worker identifiers: a prefix and a 26-character Crockford ULID
//! (docs/protocol.md, "Identifiers"), and the SDK wall clock that SQLite
//! statements bind.

use std::time::{SystemTime, UNIX_EPOCH};

/// Epoch milliseconds from the host clock.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// `<prefix>_` + a fresh ULID, e.g. `task_01J…`.
pub fn new_id(prefix: &str) -> String {
    format!("{prefix}_{}", ulid::Ulid::generate())
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
}
