//! Reader threads: each serves reads on its own WAL connection, so reads
//! never take the write lock.

use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender};
use rusqlite::Connection;
use tokio::sync::oneshot;

use super::jobs::closed;
use super::threads::spawn;
use crate::error::Result;

pub(super) type ReadJob = Box<dyn FnOnce(&Connection) + Send>;

enum ReaderMsg {
    Job(ReadJob),
    Stop,
}

/// The reader threads of one file, fed through one channel.
pub(super) struct Readers {
    jobs: Sender<ReaderMsg>,
    count: usize,
}

impl Readers {
    /// A thread per connection; their handles join `threads`.
    pub(super) fn start(conns: Vec<Connection>, threads: &mut Vec<JoinHandle<()>>) -> Readers {
        let (tx, rx) = crossbeam_channel::unbounded::<ReaderMsg>();
        let count = conns.len();
        for conn in conns {
            let rx = rx.clone();
            threads.push(spawn("cairnq-sqlite-reader", move || reader_loop(conn, rx)));
        }
        Readers { jobs: tx, count }
    }

    /// Hands `job` to the next free reader; false once they have stopped.
    pub(super) fn send(&self, job: ReadJob) -> bool {
        self.jobs.send(ReaderMsg::Job(job)).is_ok()
    }

    pub(super) async fn read<T, F>(&self, work: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T> + Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        let job: ReadJob = Box::new(move |conn| {
            let _ = reply.send(work(conn));
        });
        if !self.send(job) {
            return Err(closed());
        }
        answer.await.map_err(|_| closed())?
    }

    /// Ends every reader thread once the reads sent before have run.
    pub(super) fn stop(&self) {
        for _ in 0..self.count {
            let _ = self.jobs.send(ReaderMsg::Stop);
        }
    }
}

fn reader_loop(conn: Connection, jobs: Receiver<ReaderMsg>) {
    while let Ok(ReaderMsg::Job(job)) = jobs.recv() {
        job(&conn);
    }
}
