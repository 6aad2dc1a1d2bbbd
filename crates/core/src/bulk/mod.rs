//! `retryMany` and `cancelMany` (docs/api.md, "Bulk retry and cancel"): one
//! bounded page of rows a filter picks, changed as `retry` and `cancel`
//! change one, or only listed (`dryRun`). A page changes every row it picks,
//! so calling again while `more` walks the rest without a cursor. `backend`
//! is the seam each dialect's `bulk.rs` implements.

pub mod backend;

use self::backend::{BulkChange, BulkSelection};
use crate::error::{js_number, Error, Result};
use crate::input::{epoch_ms, name_field, Options};
use crate::store::Store;
use crate::task::Status;

/// A page's size when `limit` is not given.
pub const DEFAULT_LIMIT: i64 = 1000;
/// The largest page: one call's statement and answer stay bounded.
pub const MAX_LIMIT: i64 = 10_000;

/// Which operation a filter is for: its name in refusals, its keys, its statuses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BulkOp {
    RetryMany,
    CancelMany,
}

impl BulkOp {
    fn name(self) -> &'static str {
        match self {
            BulkOp::RetryMany => "retryMany",
            BulkOp::CancelMany => "cancelMany",
        }
    }

    fn keys(self) -> &'static [&'static str] {
        match self {
            BulkOp::RetryMany => &[
                "queue",
                "name",
                "status",
                "finishedAfter",
                "finishedBefore",
                "resetAttempt",
                "limit",
                "dryRun",
            ],
            BulkOp::CancelMany => &["queue", "name", "status", "limit", "dryRun"],
        }
    }

    /// The statuses the operation changes: a filter's `status` is one of them.
    fn statuses(self) -> [Status; 2] {
        match self {
            BulkOp::RetryMany => [Status::Failed, Status::Canceled],
            BulkOp::CancelMany => [Status::Queued, Status::Running],
        }
    }
}

/// A checked filter: the page to pick, and whether to change it or only list it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BulkRequest {
    pub selection: BulkSelection,
    pub dry_run: bool,
}

impl BulkRequest {
    /// `op`'s filter as JS sends it (`input::Options`), every check before
    /// anything runs; refusals name the field (`retryMany.limit`).
    pub fn read(op: BulkOp, filter: &str) -> Result<BulkRequest> {
        let what = format!("{} filter", op.name());
        let mut fields =
            Options::parse(&what, filter, op.keys())?.named_under(&format!("{}.", op.name()));
        let queue = named(&mut fields, "queue")?;
        let name = named(&mut fields, "name")?;
        let status = match fields.text("status")? {
            None => None,
            Some(text) => Some(status_of(op, &fields.field("status"), &text)?),
        };
        let change = match op {
            BulkOp::RetryMany => BulkChange::Retry {
                status: status.unwrap_or(Status::Failed),
                finished_after: instant(&mut fields, "finishedAfter")?,
                finished_before: instant(&mut fields, "finishedBefore")?,
                reset_attempt: fields.bool("resetAttempt")?.unwrap_or(false),
            },
            BulkOp::CancelMany => BulkChange::Cancel { status },
        };
        let limit = match fields.number("limit")? {
            None => DEFAULT_LIMIT,
            Some(v) if v.fract() == 0.0 && (1.0..=MAX_LIMIT as f64).contains(&v) => v as i64,
            Some(v) => {
                return Err(Error::Invalid(format!(
                    "{} must be an integer from 1 to {MAX_LIMIT}, got {}",
                    fields.field("limit"),
                    js_number(v)
                )))
            }
        };
        Ok(BulkRequest {
            selection: BulkSelection {
                change,
                queue,
                name,
                limit,
            },
            dry_run: fields.bool("dryRun")?.unwrap_or(false),
        })
    }
}

/// A queue or task name filter, checked as a submit's.
fn named(fields: &mut Options, key: &str) -> Result<Option<String>> {
    let value = fields.text(key)?;
    if let Some(value) = &value {
        name_field(&fields.field(key), value)?;
    }
    Ok(value)
}

fn instant(fields: &mut Options, key: &str) -> Result<Option<i64>> {
    fields
        .number(key)?
        .map(|v| epoch_ms(&fields.field(key), v))
        .transpose()
}

fn status_of(op: BulkOp, field: &str, text: &str) -> Result<Status> {
    let [first, second] = op.statuses();
    match text.parse::<Status>() {
        Ok(status) if status == first || status == second => Ok(status),
        _ => Err(Error::Invalid(format!(
            "{field} must be {first} or {second}, got {text}"
        ))),
    }
}

/// What a call changed (or, for a dry run, would change now).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BulkPage {
    pub ids: Vec<String>,
    /// The page was full: more rows may match (a further call may find none).
    pub more: bool,
    pub dry_run: bool,
}

impl BulkPage {
    /// `{count, ids, more, dryRun}`.
    pub fn to_json(&self) -> String {
        serde_json::json!({
            "count": self.ids.len(),
            "ids": self.ids,
            "more": self.more,
            "dryRun": self.dry_run,
        })
        .to_string()
    }
}

impl Store {
    /// `retryMany(filter)` / `cancelMany(filter)`: one page. A cancel also
    /// cancels each canceled task's unfinished children, as `cancel` does.
    pub async fn bulk(&self, request: BulkRequest) -> Result<BulkPage> {
        let BulkRequest { selection, dry_run } = request;
        let limit = selection.limit;
        let cancels = !selection.change.is_retry();
        let ids = if dry_run {
            self.backend().bulk_preview(selection).await?
        } else {
            self.backend().bulk_change(selection).await?
        };
        if cancels && !dry_run {
            for id in &ids {
                self.cancel_children(id).await;
            }
        }
        Ok(BulkPage {
            more: ids.len() as i64 == limit,
            ids,
            dry_run,
        })
    }
}
