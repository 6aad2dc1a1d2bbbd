//! A write job: work for the writer whose outcome is held until the commit
//! that makes it durable, then delivered to whoever waits for it.

use rusqlite::Connection;
use tokio::sync::oneshot;

use crate::error::{Error, Result};

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

/// Where a job's outcome goes: a queued job's caller awaits a channel, an
/// inline group's caller reads a slot after the commit.
pub(super) trait Reply<T>: Send {
    fn send(self, outcome: Result<T>);
}

impl<T: Send> Reply<T> for oneshot::Sender<Result<T>> {
    fn send(self, outcome: Result<T>) {
        // The caller may have gone away (a dropped future); nothing to tell then.
        let _ = oneshot::Sender::send(self, outcome);
    }
}

impl<T: Send> Reply<T> for &mut Option<Result<T>> {
    fn send(self, outcome: Result<T>) {
        *self = Some(outcome);
    }
}

pub(super) struct Job<T, F, R> {
    work: Option<F>,
    outcome: Option<Result<T>>,
    reply: R,
    transactional: bool,
}

impl<T, F, R> Job<T, F, R> {
    pub(super) fn new(work: F, reply: R, transactional: bool) -> Self {
        Job {
            work: Some(work),
            outcome: None,
            reply,
            transactional,
        }
    }
}

impl<T, F, R> WriteJob for Job<T, F, R>
where
    T: Send,
    F: FnOnce(&Connection) -> Result<T> + Send,
    R: Reply<T>,
{
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
        let job = *self;
        job.reply.send(match (lost, job.outcome) {
            (Some(err), _) => Err(err),
            (None, Some(outcome)) => outcome,
            (None, None) => Err(closed()),
        });
    }
}

pub fn closed() -> Error {
    Error::Connection("the store is closed".into())
}

/// The jobs of an inline group, each answering into its slot.
pub(super) fn inline_group<'a, T, F>(
    works: Vec<(bool, F)>,
    slots: &'a mut [Option<Result<T>>],
) -> Vec<Box<dyn WriteJob + 'a>>
where
    T: Send + 'a,
    F: FnOnce(&Connection) -> Result<T> + Send + 'a,
{
    works
        .into_iter()
        .zip(slots.iter_mut())
        .map(|((transactional, work), reply)| {
            Box::new(Job::new(work, reply, transactional)) as Box<dyn WriteJob + 'a>
        })
        .collect()
}
