//! The engine's own threads: readers, the checkpointer, a combiner that may
//! wait on the file lock.

use std::thread::JoinHandle;

pub(super) fn spawn(name: &str, body: impl FnOnce() + Send + 'static) -> JoinHandle<()> {
    std::thread::Builder::new()
        .name(name.into())
        .spawn(body)
        .expect("spawning a SQLite connection thread")
}
