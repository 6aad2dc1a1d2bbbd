//! Transactions a caller shares (`completeIn`), held open by id until their
//! owner ends them.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::error::{Error, Result};

/// An open shared transaction; `None` once its owner has ended it. A
/// caller's statements may overlap (`Promise.all`): each waits its turn.
pub(super) type SharedSlot<X> = Arc<tokio::sync::Mutex<Option<X>>>;

pub(super) struct SharedTransactions<X> {
    slots: Mutex<HashMap<u64, SharedSlot<X>>>,
    next: AtomicU64,
}

impl<X> Default for SharedTransactions<X> {
    fn default() -> Self {
        SharedTransactions {
            slots: Mutex::new(HashMap::new()),
            next: AtomicU64::new(1),
        }
    }
}

impl<X> SharedTransactions<X> {
    /// Shares `tx` under a new id.
    pub(super) fn open(&self, tx: X) -> u64 {
        let id = self.next.fetch_add(1, Ordering::SeqCst);
        self.slots
            .lock()
            .expect("shared transactions")
            .insert(id, Arc::new(tokio::sync::Mutex::new(Some(tx))));
        id
    }

    /// The slot of the shared transaction `id`, still shared.
    pub(super) fn slot(&self, id: u64) -> Result<SharedSlot<X>> {
        let slot = self
            .slots
            .lock()
            .expect("shared transactions")
            .get(&id)
            .cloned();
        slot.ok_or_else(|| not_open(id))
    }

    /// The shared transaction `id`, no longer shared: the caller ends it.
    pub(super) async fn take(&self, id: u64) -> Result<X> {
        let slot = self.slots.lock().expect("shared transactions").remove(&id);
        let taken = slot.ok_or_else(|| not_open(id))?.lock().await.take();
        taken.ok_or_else(|| not_open(id))
    }
}

pub(super) fn not_open(id: u64) -> Error {
    Error::Invalid(format!("no open shared transaction {id}"))
}
