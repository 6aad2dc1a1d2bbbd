//! Durable steps in the store (docs/protocol.md, "Durable steps"): the rows
//! their statements take and answer (`rows`), what a store knows of the
//! steps table (`presence`), and a suspension's and a child wait's
//! transaction decided once (`transaction`), which each dialect's `steps.rs`
//! runs through its `StepTransaction`, and a restart from a step's
//! (`restart`).

pub mod presence;
pub mod restart;
pub mod rows;
pub mod transaction;
