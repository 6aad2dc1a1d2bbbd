//! The statements of retention by count (docs/api.md, "Retention",
//! `keepLast`), per dialect: a purge of the finished rows past a rule's most
//! recent ones, and its bounded count. They run on the protocol's table and
//! indexes, so there is no table and no ledger entry.

feature_statements! {
    /// The keepLast statements, one `.sql` file each.
    RetentionStatements in "retention", no table;
    keep_last,
    keep_last_count,
}
