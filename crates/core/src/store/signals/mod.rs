//! Signals in the store (docs/protocol.md, "Signals"): the rows their
//! statements take and answer (`rows`), and a signal's and a wait's
//! transaction decided once (`transaction`), which each dialect's
//! `signals.rs` runs through its `SignalTransaction`.

pub mod rows;
pub mod transaction;
