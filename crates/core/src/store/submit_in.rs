//! `submitIn`/`submitManyIn` (docs/api.md, "The task and your rows in one
//! transaction"): submits checked as `submit` checks them, each a write the
//! caller's own connection runs inside the caller's transaction. Everything
//! is refused here, before the caller's connection sees a statement: on
//! Postgres a failed statement would abort the caller's transaction.

use crate::error::Result;
use crate::input::Options;
use crate::store::backend::WriteOp;
use crate::store::inputs::{item_error, new_task, SubmitInput};
use crate::store::reserved::refuse_reserved_key;

/// `submitIn`'s one submit, its options as `lib/store.js` encodes a
/// `submit`'s (payload and metadata JSON texts).
pub fn submit_in_ops(options: &str) -> Result<Vec<WriteOp>> {
    let mut fields = Options::parse("submitIn options", options, &SubmitInput::KEYS)?;
    Ok(vec![caller_submit(SubmitInput::read(&mut fields)?)?])
}

/// `submitManyIn`'s items as `wire::read_items` reads them, every one
/// checked before any is written; a refusal names the item.
pub fn submit_many_in_ops(items: Vec<Result<SubmitInput>>) -> Result<Vec<WriteOp>> {
    items
        .into_iter()
        .enumerate()
        .map(|(index, item)| {
            item.and_then(caller_submit)
                .map_err(|e| item_error(index, e))
        })
        .collect()
}

/// A caller's submit: keyed, debounced or plain, never under a reserved key.
fn caller_submit(input: SubmitInput) -> Result<WriteOp> {
    refuse_reserved_key(input.key.as_deref())?;
    new_task(input)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_come_before_any_statement() {
        let unkeyed = submit_in_ops(r#"{"name":"r","debounceMs":10}"#).unwrap_err();
        assert!(unkeyed.to_string().contains("debounceMs"), "{unkeyed}");
        let reserved = submit_in_ops(r#"{"name":"r","key":"cairnq:step:t:a"}"#).unwrap_err();
        assert!(reserved.to_string().contains("reserved"), "{reserved}");
        let item = submit_many_in_ops(vec![
            Ok(SubmitInput {
                name: "r".into(),
                ..SubmitInput::default()
            }),
            Ok(SubmitInput {
                name: "r".into(),
                key: Some("cairnq:step:t:a".into()),
                ..SubmitInput::default()
            }),
        ])
        .unwrap_err();
        assert!(
            item.to_string().starts_with("items[1].options.key"),
            "{item}"
        );
    }
}
