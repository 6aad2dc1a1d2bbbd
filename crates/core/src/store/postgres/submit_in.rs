//! `submitIn` on Postgres: the submits' statements (the keyed ones under
//! their key's advisory lock, as `submitMany` runs them) sent through the
//! caller's session, inside the caller's transaction. Nothing else is taken:
//! no ledger lock, no gate, so transactions of different keys never wait on
//! each other because of cairnq; the notify trigger fires at their commit.

use std::sync::Arc;

use super::executor::{Executor, ExecutorSession};
use super::keyed;
use super::transport::Session;
use crate::error::Result;
use crate::store::backend::{TaskRef, WriteOp};

/// `ops` (`store::submit_in`) in order through `session`; each op's task ref.
/// A keyed item may be refused (`conflict: "reject"`) after earlier items
/// wrote: then the call runs in a savepoint, which the refusal undoes, and
/// the caller's transaction goes on as before the call.
pub async fn submit_in(session: Arc<dyn Executor>, ops: Vec<WriteOp>) -> Result<Vec<TaskRef>> {
    let session = ExecutorSession::caller(session);
    let guarded = ops.len() > 1 && ops.iter().any(|op| matches!(op, WriteOp::InsertKeyed(..)));
    if !guarded {
        return keyed::insert_all(&session, ops).await;
    }
    session.batch("savepoint cairnq_submit_in").await?;
    match keyed::insert_all(&session, ops).await {
        Ok(refs) => {
            session.batch("release savepoint cairnq_submit_in").await?;
            Ok(refs)
        }
        Err(refused) => {
            // The refusal is the error to report; a failed undo leaves the
            // caller's transaction to its own rollback.
            let _ = session
                .batch("rollback to savepoint cairnq_submit_in")
                .await;
            Err(refused)
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use async_trait::async_trait;
    use serde_json::Value;

    use super::*;
    use crate::protocol::{POSTGRES as SQL, POSTGRES_INSERT_TASKS};
    use crate::store::submit_in::{submit_in_ops, submit_many_in_ops};
    use crate::store::SubmitInput;

    /// The caller's session as the core reaches it: every request kept, each
    /// answered with no rows (a keyed submit then finds its key free).
    #[derive(Default)]
    struct Recording(Mutex<Vec<Value>>);

    #[async_trait]
    impl Executor for Recording {
        async fn call(&self, request: String) -> Result<String> {
            self.0
                .lock()
                .unwrap()
                .push(serde_json::from_str(&request).unwrap());
            Ok(r#"{"ok":{"columns":[],"rows":[]}}"#.into())
        }
    }

    fn sent(session: &Recording) -> Vec<String> {
        let requests = session.0.lock().unwrap();
        requests
            .iter()
            .map(|r| r["sql"].as_str().unwrap().to_string())
            .collect()
    }

    #[tokio::test]
    async fn plain_submits_are_one_insert_and_keyed_ones_take_their_key_lock_first() {
        let session = Arc::new(Recording::default());
        let ops = submit_in_ops(r#"{"name":"receipt","payload":"{}","priority":2}"#).unwrap();
        let refs = submit_in(session.clone(), ops).await.unwrap();
        assert_eq!(refs.len(), 1);
        assert_eq!(sent(&session), [POSTGRES_INSERT_TASKS]);

        let session = Arc::new(Recording::default());
        let keyed = SubmitInput {
            name: "receipt".into(),
            key: Some("order-1".into()),
            ..SubmitInput::default()
        };
        let ops = submit_many_in_ops(vec![Ok(keyed.clone())]).unwrap();
        submit_in(session.clone(), ops).await.unwrap_err();
        // The fake answers the insert's RETURNING with no row: the key was
        // locked and read first, in the protocol's order.
        assert_eq!(
            sent(&session)[..3],
            [SQL.lock_key, SQL.get_key, SQL.insert_task]
        );

        // Items with a keyed one run in a savepoint, which its refusal undoes.
        let session = Arc::new(Recording::default());
        let plain = SubmitInput {
            name: "receipt".into(),
            ..SubmitInput::default()
        };
        let ops = submit_many_in_ops(vec![Ok(plain), Ok(keyed)]).unwrap();
        submit_in(session.clone(), ops).await.unwrap_err();
        let sent = sent(&session);
        assert_eq!(sent.first().unwrap(), "savepoint cairnq_submit_in");
        assert_eq!(
            sent.last().unwrap(),
            "rollback to savepoint cairnq_submit_in"
        );
    }
}
