//! A worker's declaration of its names' limits (docs/protocol.md, "Flow
//! control tables"): the tables created on first use, then each declaration
//! stored unless the stored one says the same, the latest winning; a rate
//! with a key also stores the key's rate, the latest winning for every name
//! that declares the key.

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
        let limits = &declaration.limits;
        if let (Some(key), Some(rate)) = (&limits.rate_key, limits.rate) {
            let previous = tx
                .declared_key(key)
                .await?
                .and_then(|row| row.map_err(|bad| report(&bad)).ok());
            if previous.as_ref().is_none_or(|p| p.rate != rate) {
                tx.declare_key(worker_id, key, rate).await?;
                replaced.extend(previous.map(|previous| Replaced::Key {
                    key: key.clone(),
                    name: declaration.name.clone(),
                    rate,
                    previous,
                }));
            }
        }
        // A row nobody can read counts as none: this declaration replaces it.
        let previous = tx
            .declared(&declaration.name)
            .await?
            .and_then(|row| row.map_err(|bad| report(&bad)).ok());
        if previous.as_ref().is_some_and(|p| &p.limits == limits) {
            continue;
        }
        tx.declare(worker_id, declaration).await?;
        replaced.extend(previous.map(|previous| Replaced::Name {
            name: declaration.name.clone(),
            limits: limits.clone(),
            previous,
        }));
    }
    Ok(replaced)
}
