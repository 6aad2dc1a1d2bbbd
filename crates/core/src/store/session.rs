//! A claim session driven from outside the store, one draw at a time: what
//! `store.claimSession(input, plan)` offers JS, whose plan awaits each draw.
//!
//! The session's transaction stays open while the caller decides its next
//! draw, so the store's side of the plan waits for the caller's messages —
//! for at most `IDLE_LIMIT` per message, after which the session ends and
//! what was drawn is kept (a claimed task is never lost: its lease expires).

use std::any::Any;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::backend::{Backend, ClaimPlan, ClaimRequest, Draw};
use crate::error::{Error, Result};
use crate::task::Task;

/// How long an open session waits for the caller's next message.
const IDLE_LIMIT: Duration = Duration::from_secs(30);

enum Message {
    Draw(Draw, oneshot::Sender<Vec<Task>>),
    Finish { keep: bool },
}

struct ChannelPlan {
    messages: mpsc::Receiver<Message>,
    opened: Option<oneshot::Sender<()>>,
    reply: Option<oneshot::Sender<Vec<Task>>>,
    keep: bool,
}

impl ChannelPlan {
    fn next_message(&self) -> Option<Message> {
        let wait = || self.messages.recv_timeout(IDLE_LIMIT).ok();
        // On Postgres the plan runs on the async runtime: let it know this blocks.
        match tokio::runtime::Handle::try_current() {
            Ok(handle) if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
                tokio::task::block_in_place(wait)
            }
            _ => wait(),
        }
    }
}

impl ClaimPlan for ChannelPlan {
    fn next_draw(&mut self) -> Option<Draw> {
        if let Some(opened) = self.opened.take() {
            let _ = opened.send(());
        }
        match self.next_message()? {
            Message::Draw(draw, reply) => {
                self.reply = Some(reply);
                Some(draw)
            }
            Message::Finish { keep } => {
                self.keep = keep;
                None
            }
        }
    }

    fn accept(&mut self, rows: Vec<Task>) {
        if let Some(reply) = self.reply.take() {
            let _ = reply.send(rows);
        }
    }

    fn keep(&self) -> bool {
        self.keep
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any + Send> {
        self
    }
}

/// An open (or opening) claim session.
pub struct ClaimSession {
    messages: mpsc::Sender<Message>,
    opened: Option<oneshot::Receiver<()>>,
    outcome: JoinHandle<Result<bool>>,
}

impl ClaimSession {
    /// Probe, then open the transaction and recover leases, on `runtime`.
    pub fn open(
        backend: Arc<dyn Backend>,
        request: ClaimRequest,
        runtime: &tokio::runtime::Handle,
    ) -> ClaimSession {
        let (messages, inbox) = mpsc::channel();
        let (opened_tx, opened) = oneshot::channel();
        let plan = ChannelPlan {
            messages: inbox,
            opened: Some(opened_tx),
            reply: None,
            keep: true,
        };
        let outcome = runtime.spawn(async move {
            let plan = backend.claim_session(request, Box::new(plan)).await?;
            Ok(plan.is_some())
        });
        ClaimSession {
            messages,
            opened: Some(opened),
            outcome,
        }
    }

    /// True once the transaction is open; false when the probe found nothing
    /// to do (the session is then over). An error means it could not open.
    pub async fn opened(&mut self) -> Result<bool> {
        let Some(opened) = self.opened.take() else {
            return Ok(true);
        };
        if opened.await.is_ok() {
            return Ok(true);
        }
        // The plan was dropped without a draw: the probe said no, or it failed.
        (&mut self.outcome).await.map_err(joined)?.map(|_| false)
    }

    /// One claim statement inside the session.
    pub async fn draw(&self, draw: Draw) -> Result<Vec<Task>> {
        let (reply, rows) = oneshot::channel();
        self.messages
            .send(Message::Draw(draw, reply))
            .map_err(|_| ended())?;
        rows.await.map_err(|_| ended())
    }

    /// Commit (`keep`) or roll back what was drawn, and wait for it.
    pub async fn finish(self, keep: bool) -> Result<()> {
        let _ = self.messages.send(Message::Finish { keep });
        match self.outcome.await.map_err(joined)? {
            Ok(_) => Ok(()),
            // Rolled back on purpose: the error is the abandonment itself.
            Err(_) if !keep => Ok(()),
            Err(err) => Err(err),
        }
    }
}

fn ended() -> Error {
    Error::Invalid("the claim session has ended".into())
}

fn joined(err: tokio::task::JoinError) -> Error {
    Error::Connection(format!("the claim session failed: {err}"))
}
