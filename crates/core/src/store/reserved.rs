//! Keys of the core's own (docs/security.md, "Reserved keys"): a schedule's
//! occurrence and a durable step's child are keyed submits under keys in the
//! `cairnq:` namespace. The API refuses such keys, so no caller can occupy
//! one; another program (another SDK's submit, a hand edit) still can, so a
//! submit of the core's own under one takes only a task of its own kind for
//! its key's holder, and passes any other over.

use serde_json::Value;

use crate::error::{Error, Result};
use crate::store::backend::{Conflict, NewTask, WriteOp};
use crate::task::Task;

/// Keys starting with this are the core's.
pub const RESERVED_KEY_PREFIX: &str = "cairnq:";

/// The metadata key under which a fired task records its schedule and
/// occurrence: `{"name": …, "occurrenceAtMs": …}`.
pub const OCCURRENCE_METADATA_KEY: &str = "cairnq.schedule";

/// An API submit's `key`: anything but a reserved one.
pub fn refuse_reserved_key(key: Option<&str>) -> Result<()> {
    match key {
        Some(key) if key.starts_with(RESERVED_KEY_PREFIX) => Err(Error::Invalid(format!(
            "key must be outside the \"{RESERVED_KEY_PREFIX}\" namespace: keys starting with \"{RESERVED_KEY_PREFIX}\" are reserved for cairnq's own tasks (schedule occurrences, durable-step children)"
        ))),
        _ => Ok(()),
    }
}

/// A submit of the core's own, as the backend runs it: under its reserved
/// key it inserts unless a task of its own kind holds the key (then
/// `AlreadyExists`).
pub fn own_submit(op: WriteOp) -> WriteOp {
    match op {
        WriteOp::InsertKeyed(task, key, _) => WriteOp::InsertKeyed(task, key, Conflict::Reserved),
        other => other,
    }
}

/// The task a keyed submit of `new` decides about, given the task its key
/// points at. Under `Conflict::Reserved` a holder that is not `new`'s kind
/// counts as no holder: the submit inserts and the key is repointed to its
/// task, the other task left as it is.
pub fn key_holder(conflict: Conflict, new: &NewTask, holder: Option<Task>) -> Option<Task> {
    match holder {
        Some(task) if conflict == Conflict::Reserved && !same_kind(new, &task) => None,
        holder => holder,
    }
}

/// Whether `holder` is the task `new` would be: the same task name, the same
/// parent (a step's child) and the same schedule occurrence (a schedule's).
fn same_kind(new: &NewTask, holder: &Task) -> bool {
    holder.name == new.name
        && holder.parent_id == new.parent_id
        && occurrence(&holder.metadata) == occurrence(&new.metadata)
}

/// A task's schedule and occurrence, read from its metadata.
fn occurrence(metadata: &str) -> Option<(Value, Value)> {
    let metadata: Value = serde_json::from_str(metadata).ok()?;
    let origin = metadata.get(OCCURRENCE_METADATA_KEY)?;
    Some((
        origin.get("name")?.clone(),
        origin.get("occurrenceAtMs")?.clone(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn new_task(name: &str, parent: Option<&str>, metadata: &str) -> NewTask {
        NewTask {
            id: "task_new".into(),
            name: name.into(),
            queue: "default".into(),
            payload: "{}".into(),
            metadata: metadata.into(),
            max_attempts: 3,
            priority: 0,
            delay_ms: 0,
            parent_id: parent.map(Into::into),
            root_id: None,
            correlation_id: None,
        }
    }

    #[test]
    fn reserved_keys_are_refused_at_the_api() {
        assert!(refuse_reserved_key(None).is_ok());
        assert!(refuse_reserved_key(Some("order-17")).is_ok());
        assert!(refuse_reserved_key(Some("cairnq")).is_ok());
        assert_eq!(
            refuse_reserved_key(Some("cairnq:step:task_1:approve"))
                .unwrap_err()
                .to_string(),
            "key must be outside the \"cairnq:\" namespace: keys starting with \"cairnq:\" are reserved for cairnq's own tasks (schedule occurrences, durable-step children)"
        );
    }

    #[test]
    fn only_a_task_of_the_same_kind_holds_a_reserved_key() {
        let origin = r#"{"traceparent":"x","cairnq.schedule":{"name":"s","occurrenceAtMs":60000,"earlierOccurrencesSkipped":true}}"#;
        let new = new_task("report", None, origin);
        let mut holder = crate::task::tests::sample();
        holder.name = "report".into();
        holder.parent_id = None;
        holder.metadata = r#"{"cairnq.schedule":{"name":"s","occurrenceAtMs":60000}}"#.into();
        let held = |conflict, holder: &Task| key_holder(conflict, &new, Some(holder.clone()));
        assert!(held(Conflict::Reserved, &holder).is_some());
        holder.metadata = r#"{"cairnq.schedule":{"name":"s","occurrenceAtMs":120000}}"#.into();
        assert!(held(Conflict::Reserved, &holder).is_none());
        holder.metadata = "{}".into();
        assert!(held(Conflict::Reserved, &holder).is_none());
        // Other conflicts take whatever holds the key.
        assert!(held(Conflict::Reject, &holder).is_some());

        let child = new_task("approve", Some("task_parent"), "{}");
        let mut holder = crate::task::tests::sample();
        holder.name = "approve".into();
        holder.metadata = r#"{"traceparent":"y"}"#.into();
        holder.parent_id = Some("task_parent".into());
        assert!(key_holder(Conflict::Reserved, &child, Some(holder.clone())).is_some());
        holder.parent_id = None;
        assert!(key_holder(Conflict::Reserved, &child, Some(holder.clone())).is_none());
        holder.parent_id = Some("task_parent".into());
        holder.name = "forged".into();
        assert!(key_holder(Conflict::Reserved, &child, Some(holder)).is_none());
    }
}
