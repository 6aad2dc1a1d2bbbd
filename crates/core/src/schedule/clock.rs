//! A worker's firing clock (docs/api.md, "Schedules"): a loop of its own
//! beside the poll loop, so a poll never reads the schedules table.
//!
//! The clock keeps the earliest pending occurrence of its queues in memory
//! and sleeps until then; it reads the table again only when that time has
//! come, when this process changed a schedule (`Store::schedule_changes`),
//! or once per `REFRESH` to see other processes' changes: one indexed read
//! of at most one row a second per worker, however often the worker polls,
//! and on a database that has no schedules table, one catalog lookup.
//!
//! Each tick also releases the debounce follow-ups whose task has ended
//! (`FollowupRelease`): like firing, a decision no claim may take, and due
//! within a tick whoever ended the task.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use super::fire::{fire_due, next_due, FIRE_BATCH};
use crate::error::Result;
use crate::followups::debounce::FollowupRelease;
use crate::store::Store;

/// How often a clock looks for schedules other processes made or changed.
pub const REFRESH: Duration = Duration::from_secs(1);

/// Fire the schedules of `queues` until `stopped` turns true.
pub async fn fire_until_stopped(
    store: Arc<Store>,
    queues: Vec<String>,
    mut stopped: watch::Receiver<bool>,
) {
    let mut installed = false;
    let mut followups = FollowupRelease::default();
    while !*stopped.borrow() {
        // Taken before the read, so a change landing during it is not missed.
        let changed = store.schedule_changes().notified();
        // A failure is retried next tick; the follow-ups wait meanwhile.
        let _ = followups.run(store.backend().as_ref()).await;
        let now = store.clock().now_ms();
        let wait = match tick(&store, &queues, &mut installed, now).await {
            Ok(Some(due)) if due > now => REFRESH.min(Duration::from_millis((due - now) as u64)),
            // Due already: a full batch left more, go on at once.
            Ok(Some(_)) => Duration::ZERO,
            Ok(None) | Err(_) => REFRESH,
        };
        if wait.is_zero() {
            continue;
        }
        tokio::select! {
            _ = tokio::time::sleep(wait) => {}
            _ = changed => {}
            _ = stopped.changed() => {}
        }
    }
}

/// One tick now, outside the loop: the follow-ups released, then every
/// occurrence of `queues` due on the store's clock fired (a drain's look
/// before it asks the worker for a quiet turn).
pub async fn fire_once(store: &Store, queues: &[String]) -> Result<()> {
    FollowupRelease::default()
        .run(store.backend().as_ref())
        .await?;
    let mut installed = false;
    loop {
        let now = store.clock().now_ms();
        match tick(store, queues, &mut installed, now).await? {
            Some(due) if due <= now => continue,
            _ => return Ok(()),
        }
    }
}

/// One look: fire what is due, and answer the earliest pending occurrence
/// left (`None`: nothing to wait for but a refresh).
async fn tick(
    store: &Store,
    queues: &[String],
    installed: &mut bool,
    now: i64,
) -> Result<Option<i64>> {
    if !*installed {
        *installed = store.schedules_ready().await?;
        if !*installed {
            return Ok(None);
        }
    }
    match next_due(store, queues).await? {
        Some(due) if due <= now => {
            let fired = fire_due(store, queues, now).await?;
            // Only a full batch is worth an immediate second pass; anything
            // else still due (a row nobody can fire) waits for the refresh.
            let more = fired.advanced as i64 >= FIRE_BATCH;
            Ok(fired.next_due_ms.filter(|&due| more || due > now))
        }
        other => Ok(other),
    }
}
