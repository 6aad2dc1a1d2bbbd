//! The statements of `retryMany` and `cancelMany` (docs/api.md, "Bulk retry
//! and cancel"), per dialect: retry.sql's and cancel.sql's changes on a page
//! of the protocol's own rows, and each page's dry run. They run on the
//! protocol's table and indexes, so there is no table and no ledger entry.

feature_statements! {
    /// The bulk statements, one `.sql` file each.
    BulkStatements in "bulk", no table;
    retry_many,
    retry_many_preview,
    cancel_many,
    cancel_many_preview,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A change's candidate select: from its `select` to its `limit` line.
    fn candidates(sql: &str) -> &str {
        let start = sql.find("select id from cairnq_tasks").unwrap_or_else(|| {
            sql.find("select ctid from cairnq_tasks")
                .expect("a candidate select")
        });
        let rest = &sql[start..];
        let from = rest.find("\n").expect("a predicate after the select");
        let end = rest.find("    limit").expect("a limit after it");
        &rest[from..end]
    }

    #[test]
    fn each_dry_run_lists_what_its_change_picks() {
        for statements in [&SQLITE, &POSTGRES] {
            assert_eq!(
                candidates(statements.retry_many_preview),
                candidates(statements.retry_many)
            );
            assert_eq!(
                candidates(statements.cancel_many_preview),
                candidates(statements.cancel_many)
            );
            assert!(candidates(statements.cancel_many).contains("cancel_requested_at_ms is null"));
        }
    }
}
