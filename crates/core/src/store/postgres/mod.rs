//! The Postgres backend: many hosts share one database; time comes from the
//! database clock, claims skip rows other claimers hold, and keyed work
//! serializes on a transaction-scoped advisory lock (docs/protocol.md,
//! "Connection setup (Postgres)"). This file holds the `Backend` methods;
//! the backend's state is in `lifecycle`, each feature's statements in its
//! own file (`steps`, `schedules`, `flow`, `followups`), which implements the
//! feature's sub-trait.

mod bulk;
mod claim;
mod conn;
mod dsn;
mod events;
pub mod executor;
mod flow;
mod followups;
mod keyed;
mod lifecycle;
mod listener;
mod native;
mod pauses;
mod reads;
mod rows;
mod schedules;
mod shared_tx;
mod signals;
mod steps;
pub mod submit_in;
mod tls;
pub mod transport;
mod write_group;

use std::time::Duration;

use async_trait::async_trait;

pub use self::conn::quoted_schema;
use self::conn::task;
use self::dsn::Dsn;
pub use self::lifecycle::{PostgresBackend, DEFAULT_POOL_SIZE};
use self::listener::PushSource;
pub use self::native::NativeTransport;
use self::rows::{
    cancel_by_id, complete_many, get_by_id, insert_new, owned_write, resolve_key, retry_by_id,
};
use self::transport::{end_tx, params, PgRow, Session, Transaction, Transport};
use super::backend::{
    Backend, ClaimPlan, ClaimRequest, Conflict, HeldTask, ListFilter, NewTask, Outcome, Polled,
    PurgeFilter, PushSubscriber, SharedTx, StatusCount, Target, TaskRef, WaitPoll, WriteAnswer,
    WriteOp,
};
use crate::error::Result;
use crate::protocol::{self, POSTGRES as SQL, POSTGRES_PURGE_IN_ORDER};
use crate::task::Task;

/// What a connection string resolves to, as JSON (the environment left out).
pub fn dsn_fields(dsn: &str) -> Result<serde_json::Value> {
    Dsn::fields(dsn)
}

#[async_trait]
impl<T: Transport + PushSource> Backend for PostgresBackend<T> {
    async fn connect(&self) -> Result<()> {
        self.opened().await.map(|_| ())
    }

    async fn close(&self) -> Result<()> {
        self.disconnect();
        Ok(())
    }

    async fn protocol_version(&self) -> Result<i64> {
        let client = self.client().await?;
        let stored = conn::read_protocol_version(&client).await?;
        Ok(protocol::stored_version(stored.as_deref()))
    }

    async fn write_group(&self, ops: Vec<WriteOp>) -> Vec<WriteAnswer> {
        write_group::write_group(self, ops).await
    }

    async fn insert(&self, new: NewTask) -> Result<Task> {
        insert_new(&self.client().await?, &new).await
    }

    async fn insert_all(&self, ops: Vec<WriteOp>) -> Result<Vec<TaskRef>> {
        let tx = self.begin().await?;
        let outcome = keyed::insert_all(&tx, ops).await;
        end_tx(tx, outcome).await
    }

    async fn insert_keyed(&self, new: NewTask, key: String, conflict: Conflict) -> Result<Task> {
        let tx = self.begin().await?;
        let outcome = keyed::keyed_insert(&tx, &new, key, conflict).await;
        end_tx(tx, outcome).await
    }

    async fn get(&self, target: Target) -> Result<Option<Task>> {
        let client = self.client().await?;
        match &target {
            Target::Id(id) => get_by_id(&client, id).await,
            Target::Key(key) => task(&client, SQL.get_by_key, &params![key]).await,
        }
    }

    async fn list(&self, f: ListFilter) -> Result<Vec<Task>> {
        reads::list(&self.client().await?, &f).await
    }

    async fn get_status(&self, target: Target) -> Result<Option<TaskRef>> {
        reads::status_of(&self.client().await?, &target).await
    }

    /// The row itself, in one round trip: a probe that finds the task
    /// finished has what the wait returns, without a second statement (a
    /// round trip costs more than the row's bytes).
    async fn wait_poll(&self, target: Target) -> Result<WaitPoll> {
        let found = self.get(target).await?;
        Ok(WaitPoll {
            probed: found.as_ref().map(TaskRef::of),
            row: found.filter(|task| task.status.is_terminal()),
        })
    }

    async fn stats(&self, queue: Option<String>) -> Result<Vec<StatusCount>> {
        reads::stats(&self.client().await?, &queue).await
    }

    async fn oldest_due(&self) -> Result<Vec<(String, i64)>> {
        reads::oldest_due(&self.client().await?).await
    }

    async fn queue_depth(&self, queue: String, max_depth: i64) -> Result<i64> {
        reads::queue_depth(&self.client().await?, &queue, max_depth).await
    }

    async fn cancel(&self, target: Target) -> Result<Option<Task>> {
        match target {
            Target::Id(id) => cancel_by_id(&self.client().await?, &id).await,
            Target::Key(key) => {
                let tx = self.begin().await?;
                let canceled = async {
                    match resolve_key(&tx, &key).await? {
                        Some(found) => cancel_by_id(&tx, &found.id).await,
                        None => Ok(None),
                    }
                }
                .await;
                end_tx(tx, canceled).await
            }
        }
    }

    async fn retry(&self, target: Target, reset_attempt: bool) -> Result<Option<Task>> {
        match target {
            Target::Id(id) => retry_by_id(&self.client().await?, &id, reset_attempt).await,
            Target::Key(key) => {
                let tx = self.begin().await?;
                let retried = async {
                    match resolve_key(&tx, &key).await? {
                        Some(found) => retry_by_id(&tx, &found.id, reset_attempt).await,
                        None => Ok(None),
                    }
                }
                .await;
                end_tx(tx, retried).await
            }
        }
    }

    async fn purge(&self, f: PurgeFilter) -> Result<Vec<String>> {
        let tx = self.begin().await?;
        let purged = async {
            tx.batch(POSTGRES_PURGE_IN_ORDER).await?;
            reads::purge_query(&tx, false, &f)
                .await?
                .iter()
                .map(|row| row.text(0))
                .collect()
        }
        .await;
        end_tx(tx, purged).await
    }

    async fn purge_count(&self, f: PurgeFilter) -> Result<i64> {
        let counted = reads::purge_query(&self.client().await?, true, &f).await?;
        match counted.first() {
            Some(row) => row.int(0),
            None => Ok(0),
        }
    }

    /// A claim commits without waiting for its flush, so the poll loop
    /// claims on while the completions' commit flushes.
    fn completes_apart(&self) -> bool {
        true
    }

    async fn poll(
        &self,
        request: ClaimRequest,
        completions: Vec<(String, Option<String>)>,
        probe: bool,
        mut plan: Box<dyn ClaimPlan>,
    ) -> Result<Polled> {
        if probe && completions.is_empty() {
            let client = self.client().await?;
            // An idle poll is this one read (docs/protocol.md, "Claim").
            self.wakes.watch_queues(&request.queues);
            if !claim::claimable(&client, &request).await? {
                return Ok(Polled {
                    completed: Vec::new(),
                    plan: None,
                });
            }
        }
        // A claim that a server crash undoes leaves its tasks queued for
        // another run, so only a poll that completes tasks waits for its
        // commit's flush.
        let completes = !completions.is_empty();
        let tx = self.begin().await?;
        let drawn = claim::claim_draws(&tx, &request, completions, &mut *plan).await;
        let completed = match drawn {
            Ok(completed) if plan.keep() && completes => end_tx(tx, Ok(completed)).await?,
            Ok(completed) if plan.keep() => {
                tx.commit_unflushed().await?;
                completed
            }
            Ok(completed) => {
                tx.rollback().await?;
                completed
            }
            Err(err) => return end_tx(tx, Err(err)).await,
        };
        Ok(Polled {
            completed,
            plan: Some(plan),
        })
    }

    async fn heartbeat(&self, owned: HeldTask, lease_ms: i64) -> Result<Task> {
        owned_write(
            &self.client().await?,
            SQL.heartbeat,
            &owned,
            &params![&lease_ms],
        )
        .await
    }

    async fn heartbeat_batch(
        &self,
        ids: Vec<String>,
        worker_id: String,
        lease_ms: i64,
    ) -> Result<Vec<(String, bool)>> {
        rows::heartbeat_batch(&self.client().await?, &ids, &worker_id, lease_ms).await
    }

    async fn cancel_requested(&self, ids: Vec<String>) -> Result<Vec<String>> {
        reads::cancel_requested(&self.client().await?, &ids).await
    }

    async fn progress(
        &self,
        owned: HeldTask,
        progress: Option<f64>,
        message: Option<String>,
    ) -> Result<Task> {
        owned_write(
            &self.client().await?,
            SQL.progress,
            &owned,
            &params![&progress, &message],
        )
        .await
    }

    async fn finish(&self, owned: HeldTask, outcome: Outcome) -> Result<Task> {
        if outcome.may_dead_letter() {
            // The failure and its letter commit together (docs/api.md, "Dead letters").
            let tx = self.begin().await?;
            let written = rows::finish(&tx, &owned, &outcome).await;
            return end_tx(tx, written).await;
        }
        rows::finish(&self.client().await?, &owned, &outcome).await
    }

    async fn complete_batch(
        &self,
        worker_id: String,
        items: Vec<(String, Option<String>)>,
    ) -> Result<Vec<String>> {
        complete_many(&self.client().await?, &worker_id, items).await
    }

    async fn claim_wake(&self, queues: &[String], _since: u64, timeout: Duration) {
        self.wakes.claim_wake(queues, timeout).await
    }

    fn wake_ticket(&self) -> u64 {
        self.wakes.ticket()
    }

    async fn task_done_wake(&self, task_id: &str, since: u64, timeout: Duration) {
        self.wakes.task_done_wake(task_id, since, timeout).await
    }

    fn subscribe_push(&self, subscriber: PushSubscriber) -> Option<u64> {
        Some(self.wakes.subscribe(subscriber))
    }

    fn unsubscribe_push(&self, id: u64) {
        self.wakes.unsubscribe(id)
    }
    async fn shared_tx_open(&self) -> Result<SharedTx> {
        let tx = self.begin().await?;
        let session = tx.handle();
        let id = self.shared.open(tx);
        Ok(SharedTx { id, session })
    }

    async fn shared_tx_query(
        &self,
        id: u64,
        sql: String,
        values: Option<String>,
    ) -> Result<String> {
        let slot = self.shared.slot(id)?;
        let held = slot.lock().await;
        let tx = held.as_ref().ok_or_else(|| shared_tx::not_open(id))?;
        match values {
            Some(values) => tx.query_objects(&sql, &values).await,
            None => tx.batch(&sql).await.map(|()| "[]".to_string()),
        }
    }

    async fn shared_tx_complete(
        &self,
        id: u64,
        owned: HeldTask,
        result: Option<String>,
    ) -> Result<Task> {
        let tx = self.shared.take(id).await?;
        let completed = owned_write(&tx, SQL.complete, &owned, &params![&result]).await;
        end_tx(tx, completed).await
    }

    async fn shared_tx_abort(&self, id: u64) -> Result<()> {
        self.shared.take(id).await?.rollback().await
    }
}
