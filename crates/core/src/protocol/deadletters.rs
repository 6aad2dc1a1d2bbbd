//! The dead letters' one statement, per dialect (docs/api.md, "Dead
//! letters"): no table of its own (a letter is an ordinary task), so no
//! migration; lease recovery runs it only when it recovered a task.

/// What dead-lettering reads besides the protocol's statements.
#[derive(Debug)]
pub struct DeadLetterStatements {
    /// The rows of recovered ids that lease recovery failed for good.
    pub recovered_failed: &'static str,
}

pub const SQLITE: DeadLetterStatements = DeadLetterStatements {
    recovered_failed: include_str!("../../protocol/sqlite/deadletters/recovered_failed.sql"),
};

pub const POSTGRES: DeadLetterStatements = DeadLetterStatements {
    recovered_failed: include_str!("../../protocol/postgres/deadletters/recovered_failed.sql"),
};
