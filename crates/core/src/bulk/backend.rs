//! The bulk seam (docs/api.md, "Bulk retry and cancel"): what a dialect runs
//! for `retryMany` and `cancelMany`, in its `bulk.rs`, and the page it is
//! given; one of `Backend`'s supertraits.

use async_trait::async_trait;

use crate::error::Result;
use crate::task::Status;
/// A page of `retryMany` or `cancelMany` (docs/api.md, "Bulk retry and
/// cancel"), checked: what changes, and the rows it may pick.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BulkSelection {
    pub change: BulkChange,
    pub queue: Option<String>,
    pub name: Option<String>,
    /// The page's size: at most this many rows change.
    pub limit: i64,
}

/// What a bulk page does to its rows, and the filters only it takes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BulkChange {
    /// retry.sql's change on finished rows of `status` (failed or canceled),
    /// completed in `[finished_after, finished_before)`.
    Retry {
        status: Status,
        finished_after: Option<i64>,
        finished_before: Option<i64>,
        reset_attempt: bool,
    },
    /// cancel.sql's change on live rows (of `status` when set).
    Cancel { status: Option<Status> },
}

impl BulkChange {
    pub fn is_retry(&self) -> bool {
        matches!(self, BulkChange::Retry { .. })
    }
}

/// The bulk statements of one dialect (docs/api.md, "Bulk retry and
/// cancel"): one statement each, autocommit.
#[async_trait]
pub trait BulkBackend: Send + Sync {
    /// Change the page `selection` picks; the ids changed.
    async fn bulk_change(&self, selection: BulkSelection) -> Result<Vec<String>>;
    /// The ids `bulk_change(selection)` would change now; writes nothing.
    async fn bulk_preview(&self, selection: BulkSelection) -> Result<Vec<String>>;
}
