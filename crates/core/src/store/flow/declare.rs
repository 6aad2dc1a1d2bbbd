//! A worker's declaration of its names' limits (docs/protocol.md, "Flow
//! control tables"): the tables created on first use, then each declaration
//! stored unless the stored one says the same, the latest winning.

use super::transaction::FlowTransaction;
use super::{Declaration, Replaced};
use crate::error::Result;
use crate::store::bad_rows::report;

/// Runs in one transaction of the backend's; answers the stored
/// declarations replaced, for the worker to log.
pub async fn declare<T: FlowTransaction>(
    tx: &mut T,
    worker_id: &str,
    declarations: &[Declaration],
) -> Result<Vec<Replaced>> {
    tx.install().await?;
    let mut replaced = Vec::new();
    for declaration in declarations {
        // A row nobody can read counts as none: this declaration replaces it.
        let previous = tx
            .declared(&declaration.name)
            .await?
            .and_then(|row| row.map_err(|bad| report(&bad)).ok());
        if previous
            .as_ref()
            .is_some_and(|p| p.limits == declaration.limits)
        {
            continue;
        }
        tx.declare(worker_id, declaration).await?;
        replaced.extend(previous.map(|previous| Replaced {
            name: declaration.name.clone(),
            limits: declaration.limits,
            previous,
        }));
    }
    Ok(replaced)
}
