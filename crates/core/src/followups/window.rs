//! A debounced submit's window and what it does with the live task under its
//! key (docs/protocol.md, "Debounced submit"): decided once, inside the keyed
//! submit's transaction (`store::keyed`), for both dialects.

use crate::task::Status;

/// A debounced submit's window: the queued task under the key starts
/// `window_ms` after the latest submit, but no later than `max_delay_ms` after
/// its creation (the burst's first submit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Debounce {
    pub window_ms: i64,
    pub max_delay_ms: i64,
}

/// A follow-up's start while it is held back (docs/protocol.md, "Debounced
/// submit"): 1e15 ms (about 31,700 years) after its submit, the longest delay
/// a submit takes, so no SDK's claim takes it until it is released.
pub const HELD_BACK_DELAY_MS: i64 = 1_000_000_000_000_000;

/// What a debounced submit does with the live task under its key.
#[derive(Debug, PartialEq, Eq)]
pub enum DebounceStep {
    /// Never started: the new payload and a later start (`debounce.sql`).
    Postpone,
    /// A follow-up still held back: the new payload, and a later start once
    /// released (`debounce.sql` and the follow-ups' `postpone.sql`).
    PostponeHeld,
    /// Running, or queued after it started (a retry's backoff, a suspension):
    /// a follow-up, held back until it ends, and the key points at it.
    FollowUp,
}

impl Debounce {
    /// The decision table of docs/protocol.md, "Debounced submit", over what
    /// the backend read of the live task: its status and attempt, whether it
    /// is a held-back follow-up and whether it recorded a step (both read
    /// only for a queued task of attempt 0, `false` otherwise).
    pub fn step(status: Status, attempt: i64, held: bool, has_steps: bool) -> DebounceStep {
        match status {
            Status::Queued if held => DebounceStep::PostponeHeld,
            Status::Queued if attempt == 0 && !has_steps => DebounceStep::Postpone,
            _ => DebounceStep::FollowUp,
        }
    }

    /// Whether `step` needs to know if a task of this status and attempt is
    /// held back or recorded a step.
    pub fn reads_history(status: Status, attempt: i64) -> bool {
        status == Status::Queued && attempt == 0
    }
}
