//! Facts this SDK keeps per task in the protocol's `metadata` column (a
//! submit's `group`, `timeoutMs`): every SDK stores and returns it
//! untouched, so no table of ours is written at submit.

use serde_json::{Map, Value};

use crate::error::{Error, Result};

/// `metadata` (the caller's JSON text, `{}` when absent) with `key` set to
/// `value`. Refused, naming `field`: metadata that is not an object.
pub fn metadata_with(
    metadata: Option<String>,
    field: &str,
    key: &str,
    value: Value,
) -> Result<Option<String>> {
    let mut fields = match metadata.as_deref() {
        None => Map::new(),
        Some(text) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(fields)) => fields,
            _ => {
                return Err(Error::Invalid(format!(
                    "{field} needs metadata to be an object, got {text}"
                )))
            }
        },
    };
    fields.insert(key.into(), value);
    Ok(Some(Value::Object(fields).to_string()))
}
