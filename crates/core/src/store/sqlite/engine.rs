//! The threads that own SQLite connections.
//!
//! One writer thread owns the write connection and drains a queue of write
//! jobs. A lone job runs as it is (autocommit, or its own `BEGIN IMMEDIATE`
//! when it spans several statements); jobs that queued up while the previous
//! turn ran share one `BEGIN IMMEDIATE … COMMIT`, each inside a savepoint so a
//! failing job rolls back alone. Nobody hears back before the commit that
//! holds their write. Reader threads serve point reads and the claim probe on
//! their own WAL connections, so reads never take the write lock.

use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};
use rusqlite::Connection;
use tokio::sync::oneshot;

use crate::error::{Error, Result};

use super::conn::{refresh_planner_stats, sqlite_error};

/// Jobs that share one commit at most; bounds how long a group holds the lock.
const MAX_GROUP: usize = 256;
/// How often the writer refreshes planner statistics (PROTOCOL §5.1).
const STATS_EVERY: Duration = Duration::from_secs(60);

/// Work for the writer. The outcome is held until the commit that makes it
/// durable, then delivered.
pub trait WriteJob: Send {
    /// Spans several statements, so it needs its own transaction when alone.
    fn transactional(&self) -> bool;
    /// Runs the statements; returns whether they succeeded.
    fn run(&mut self, conn: &Connection) -> bool;
    /// Hands the outcome over; `lost` is set when the enclosing transaction failed.
    fn deliver(self: Box<Self>, lost: Option<Error>);
}

type Work<T> = Box<dyn FnOnce(&Connection) -> Result<T> + Send>;

struct Job<T> {
    work: Option<Work<T>>,
    outcome: Option<Result<T>>,
    reply: oneshot::Sender<Result<T>>,
    transactional: bool,
}

impl<T: Send + 'static> WriteJob for Job<T> {
    fn transactional(&self) -> bool {
        self.transactional
    }

    fn run(&mut self, conn: &Connection) -> bool {
        let work = self.work.take().expect("a write job runs once");
        let outcome = work(conn);
        let ok = outcome.is_ok();
        self.outcome = Some(outcome);
        ok
    }

    fn deliver(self: Box<Self>, lost: Option<Error>) {
        let outcome = match (lost, self.outcome) {
            (Some(err), _) => Err(err),
            (None, Some(outcome)) => outcome,
            (None, None) => Err(closed()),
        };
        // The caller may have gone away (a dropped future); nothing to tell then.
        let _ = self.reply.send(outcome);
    }
}

enum WriterMsg {
    Job(Box<dyn WriteJob>),
    Stop,
}

type ReadJob = Box<dyn FnOnce(&Connection) + Send>;

enum ReaderMsg {
    Job(ReadJob),
    Stop,
}

pub fn closed() -> Error {
    Error::Connection("the store is closed".into())
}

/// The running connection threads of one open store.
pub struct Engine {
    writes: Sender<WriterMsg>,
    /// `None` for in-memory databases: another connection would see another
    /// database, so their reads go through the writer.
    reads: Option<Sender<ReaderMsg>>,
    threads: std::sync::Mutex<Vec<JoinHandle<()>>>,
    reader_count: usize,
    /// A reader for the caller's own thread. It never waits on a lock (busy
    /// timeout 0): a busy answer sends the read through a reader thread instead.
    inline: Option<std::sync::Mutex<Connection>>,
}

impl Engine {
    pub fn start(
        writer: Connection,
        readers: Vec<Connection>,
        inline: Option<Connection>,
        file_backed: bool,
    ) -> Engine {
        let (writes, write_rx) = crossbeam_channel::unbounded();
        let mut threads = vec![spawn("cairnq-sqlite-writer", move || {
            writer_loop(writer, write_rx)
        })];
        let reader_count = readers.len();
        let reads = file_backed.then(|| {
            let (tx, rx) = crossbeam_channel::unbounded::<ReaderMsg>();
            for conn in readers {
                let rx = rx.clone();
                threads.push(spawn("cairnq-sqlite-reader", move || reader_loop(conn, rx)));
            }
            tx
        });
        Engine {
            writes,
            reads,
            threads: std::sync::Mutex::new(threads),
            reader_count,
            inline: inline.map(std::sync::Mutex::new),
        }
    }

    /// Queue a write that is one statement (autocommit when alone).
    pub async fn write<T, F>(&self, work: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T> + Send + 'static,
    {
        self.submit_write(work, false).await
    }

    /// Queue a write of several statements that must commit together.
    pub async fn transaction<T, F>(&self, work: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T> + Send + 'static,
    {
        self.submit_write(work, true).await
    }

    async fn submit_write<T, F>(&self, work: F, transactional: bool) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T> + Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        let job = Job {
            work: Some(Box::new(work)),
            outcome: None,
            reply,
            transactional,
        };
        self.writes
            .send(WriterMsg::Job(Box::new(job)))
            .map_err(|_| closed())?;
        answer.await.map_err(|_| closed())?
    }

    /// Run a read on a reader connection (the writer's, for in-memory databases).
    pub async fn read<T, F>(&self, work: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T> + Send + 'static,
    {
        match &self.reads {
            Some(reads) => {
                let (reply, answer) = oneshot::channel();
                let job: ReadJob = Box::new(move |conn| {
                    let _ = reply.send(work(conn));
                });
                reads.send(ReaderMsg::Job(job)).map_err(|_| closed())?;
                answer.await.map_err(|_| closed())?
            }
            None => self.write(work).await,
        }
    }

    /// Run a read on the caller's thread if that cannot wait: `None` when the
    /// inline connection is in use elsewhere or the database answered busy.
    pub fn read_inline<T>(&self, work: impl FnOnce(&Connection) -> Result<T>) -> Option<Result<T>> {
        let conn = self.inline.as_ref()?.try_lock().ok()?;
        match work(&conn) {
            Err(err) if err.is_busy() => None,
            outcome => Some(outcome),
        }
    }

    /// Finish queued work, close every connection and join the threads.
    pub fn shutdown(&self) {
        let _ = self.writes.send(WriterMsg::Stop);
        if let Some(reads) = &self.reads {
            for _ in 0..self.reader_count {
                let _ = reads.send(ReaderMsg::Stop);
            }
        }
        let threads = std::mem::take(&mut *self.threads.lock().expect("engine threads lock"));
        for thread in threads {
            let _ = thread.join();
        }
    }
}

fn spawn(name: &str, body: impl FnOnce() + Send + 'static) -> JoinHandle<()> {
    std::thread::Builder::new()
        .name(name.into())
        .spawn(body)
        .expect("spawning a SQLite connection thread")
}

fn reader_loop(conn: Connection, jobs: Receiver<ReaderMsg>) {
    while let Ok(ReaderMsg::Job(job)) = jobs.recv() {
        job(&conn);
    }
}

fn writer_loop(conn: Connection, jobs: Receiver<WriterMsg>) {
    let mut stats_refreshed = Instant::now();
    let mut stopping = false;
    while !stopping {
        let first = match jobs.recv() {
            Ok(WriterMsg::Job(job)) => job,
            Ok(WriterMsg::Stop) | Err(_) => break,
        };
        if stats_refreshed.elapsed() >= STATS_EVERY {
            stats_refreshed = Instant::now();
            refresh_planner_stats(&conn);
        }
        let mut group = vec![first];
        while group.len() < MAX_GROUP {
            match jobs.try_recv() {
                Ok(WriterMsg::Job(job)) => group.push(job),
                Ok(WriterMsg::Stop) => {
                    stopping = true;
                    break;
                }
                Err(_) => break,
            }
        }
        if group.len() == 1 {
            run_alone(&conn, group.pop().expect("one job"));
        } else {
            run_group(&conn, group);
        }
    }
    // Anything queued behind Stop is answered with "closed" as its reply drops.
}

fn run_alone(conn: &Connection, mut job: Box<dyn WriteJob>) {
    if !job.transactional() {
        job.run(conn);
        return job.deliver(None);
    }
    if let Err(e) = exec(conn, "BEGIN IMMEDIATE") {
        return job.deliver(Some(sqlite_error(e)));
    }
    let ok = job.run(conn);
    let end = if ok {
        exec(conn, "COMMIT")
    } else {
        exec(conn, "ROLLBACK")
    };
    match end {
        Ok(()) => job.deliver(None),
        Err(e) => {
            let _ = exec(conn, "ROLLBACK");
            job.deliver(ok.then(|| sqlite_error(e)))
        }
    }
}

/// A transaction-control statement, prepared once per connection.
fn exec(conn: &Connection, sql: &str) -> rusqlite::Result<()> {
    conn.prepare_cached(sql)?.execute([]).map(|_| ())
}

fn run_group(conn: &Connection, mut group: Vec<Box<dyn WriteJob>>) {
    if let Err(e) = exec(conn, "BEGIN IMMEDIATE") {
        let err = sqlite_error(e);
        return group
            .into_iter()
            .for_each(|job| job.deliver(Some(err.clone())));
    }
    for job in &mut group {
        // A failing statement already undoes itself; only jobs of several
        // statements need a savepoint to fail as a unit.
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
        Ok(()) => group.into_iter().for_each(|job| job.deliver(None)),
        Err(e) => {
            let _ = exec(conn, "ROLLBACK");
            let err = sqlite_error(e);
            group
                .into_iter()
                .for_each(|job| job.deliver(Some(err.clone())));
        }
    }
}
