//! A submit's `group` (docs/api.md, "Flow control"): kept in the task's
//! metadata (`input::metadata_with`).

use serde_json::Value;

use super::GROUP_METADATA_KEY;
use crate::error::{Error, Result};
use crate::input::metadata_with;

/// The metadata JSON to store for a submit with `group`: `metadata` (the
/// caller's JSON text, `{}` when absent) with `"cairnq.group": group`, or
/// `metadata` unchanged without a group. Refused, naming the field: an empty
/// group, or a group with metadata that is not an object.
pub fn grouped_metadata(metadata: Option<String>, group: Option<String>) -> Result<Option<String>> {
    let Some(group) = group else {
        return Ok(metadata);
    };
    if group.is_empty() {
        return Err(Error::Invalid(
            "group must be a non-empty string, got \"\"".into(),
        ));
    }
    metadata_with(metadata, "group", GROUP_METADATA_KEY, Value::String(group))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_group_joins_the_metadata() {
        assert_eq!(
            grouped_metadata(None, Some("customer:42".into())).unwrap(),
            Some(r#"{"cairnq.group":"customer:42"}"#.into())
        );
        let merged = grouped_metadata(Some(r#"{"a":1}"#.into()), Some("g".into()))
            .unwrap()
            .unwrap();
        let merged: Value = serde_json::from_str(&merged).unwrap();
        assert_eq!(merged, serde_json::json!({"a": 1, "cairnq.group": "g"}));
        assert_eq!(
            grouped_metadata(Some("[]".into()), None).unwrap(),
            Some("[]".into())
        );
        assert_eq!(
            grouped_metadata(None, Some(String::new()))
                .unwrap_err()
                .to_string(),
            "group must be a non-empty string, got \"\""
        );
        assert_eq!(
            grouped_metadata(Some("[1]".into()), Some("g".into()))
                .unwrap_err()
                .to_string(),
            "group needs metadata to be an object, got [1]"
        );
    }
}
