//! `submitIn` on Postgres: the submits' statements (the keyed ones under
//! their key's advisory lock, as `submitMany` runs them) sent through the
//! caller's session, inside the caller's transaction. Nothing else is taken:
//! no ledger lock, no gate, so transactions of different keys never wait on
//! each other because of cairnq; the notify trigger fires at their commit.

use std::sync::Arc;

use super::executor::{Executor, ExecutorSession};
use super::keyed;
use crate::error::Result;
use crate::store::backend::{TaskRef, WriteOp};

/// `ops` (`store::submit_in`) in order through `session`; each op's task ref.
pub async fn submit_in(session: Arc<dyn Executor>, ops: Vec<WriteOp>) -> Result<Vec<TaskRef>> {
    keyed::insert_all(&ExecutorSession::caller(session), ops).await
}
