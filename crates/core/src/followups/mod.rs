//! Debounced submit (docs/api.md, "Debounce"; docs/protocol.md, "Debounced
//! submit"): `debounce` checks a submit's window and releases the follow-ups
//! held back (each worker's clock runs it), `window` decides what a debounced
//! submit does with the live task under its key, and `backend` is the seam
//! each dialect's `followups.rs` implements.

pub mod backend;
pub mod debounce;
pub mod window;
