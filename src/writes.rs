//! The client writes of one JS tick as `lib/tick-writes.js` sends them (one
//! JSON array), each read by the core (`cairnq_core::wire`), and their
//! replies as one JSON array.

use cairnq_core::store::{Write, WriteAnswer};
use cairnq_core::wire::read_write;
use serde_json::value::RawValue;

use crate::errors::reason;
use napi::Result;

/// Decode the writes `lib/tick-writes.js` sent, one by one: a write that does not
/// decode is refused alone (an `Invalid` error in its place), so one caller's
/// bad argument never fails the other writes of its tick.
pub fn writes(text: &str) -> Result<Vec<cairnq_core::Result<Write>>> {
    let each: Vec<&RawValue> = serde_json::from_str(text)
        .map_err(|e| napi::Error::from_reason(format!("malformed writes: {e}")))?;
    Ok(each.into_iter().map(|one| read_write(one.get())).collect())
}

/// Replies as one JSON array, in order: the row (`null` for no row), or the
/// error reason (an object with a `cairnq` key) that `lib/errors.js` decodes.
pub fn replies(answers: Vec<WriteAnswer>) -> String {
    let mut out = String::from("[");
    for (i, answer) in answers.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        match answer {
            Ok(Some(task)) => out.push_str(&task.to_json()),
            Ok(None) => out.push_str("null"),
            Err(err) => out.push_str(&reason(&err)),
        }
    }
    out.push(']');
    out
}
