//! A refusal of an input value, worded once: `name must be <rule>, got <value>`
//! with the value as JS prints it.

use crate::error::{js_number, Error};

pub(super) fn invalid(name: &str, rule: &str, v: f64) -> Error {
    refused(name, rule, &js_number(v))
}

/// The refusal of `name`'s value, spelled as JS prints it.
pub(super) fn refused(name: &str, rule: &str, spelled: &str) -> Error {
    Error::Invalid(format!("{name} must be {rule}, got {spelled}"))
}
