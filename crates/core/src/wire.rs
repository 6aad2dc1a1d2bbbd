//! The write wire format: one client write of a JS tick as
//! `lib/tick-writes.js` encodes it (`lib/json.js`, `encodeOptions`), read
//! through `input::Options` into the core's `Write`.

use crate::error::{Error, Result};
use crate::input::{array_of, Options};
use crate::store::{fail_outcome, lease_ms, HeldTask, Outcome, SubmitInput, Target, Write};
use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// The fields a write may carry: `kind` names the client method, the others
/// are its arguments.
const WRITE_KEYS: [&str; 13] = [
    "kind",
    "submit",
    "taskId",
    "key",
    "workerId",
    "resetAttempt",
    "json",
    "retryable",
    "delayMs",
    "progress",
    "message",
    "leaseMs",
    "children",
];

/// The fields of a `submitMany` item.
const ITEM_KEYS: [&str; 3] = ["task", "payload", "options"];

/// `submitMany`'s items as `lib/store.js` encodes them (`{task, payload,
/// options}`: the payload as a JSON value, the metadata as JSON text), each
/// read on its own and its refusals named by its place
/// (`items[3].options.priority`). A payload is kept as the text it came in,
/// never parsed into a `Value`.
pub fn read_items(text: &str) -> Result<Vec<Result<SubmitInput>>> {
    let malformed = |e: serde_json::Error| Error::Invalid(format!("malformed items: {e}"));
    let items = match serde_json::from_str::<Vec<&RawValue>>(text) {
        Ok(items) => items,
        Err(e) => {
            // Not an array: refused as `array_of` words it.
            array_of("items", serde_json::from_str(text).map_err(malformed)?)?;
            return Err(malformed(e));
        }
    };
    Ok(items
        .into_iter()
        .enumerate()
        .map(|(index, item)| read_item(index, item))
        .collect())
}

fn read_item(index: usize, raw: &RawValue) -> Result<SubmitInput> {
    let at = format!("items[{index}]");
    let (payload, fields) = match serde_json::from_str::<ItemFields>(raw.get()) {
        Ok(ItemFields { payload, rest }) => (payload, Value::Object(rest)),
        // Not an object: refused by the options reader, in its words.
        Err(_) => (None, serde_json::from_str(raw.get()).unwrap_or(Value::Null)),
    };
    let mut item = Options::of_value(&at, fields, &ITEM_KEYS)?.named_under(&format!("{at}."));
    let name = item.required_text("task")?;
    let payload = payload
        .filter(|raw| raw.get() != "null")
        .map(|raw| raw.get().to_string());
    let mut options = item
        .object("options", SubmitInput::OPTION_KEYS)?
        .unwrap_or_default();
    SubmitInput::read_options(name, payload, &mut options)
}

/// An item's fields: the payload as the JSON text it came in, the others as
/// values for the options reader.
struct ItemFields<'a> {
    payload: Option<&'a RawValue>,
    rest: Map<String, Value>,
}

impl<'de: 'a, 'a> Deserialize<'de> for ItemFields<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        struct Fields;
        impl<'de> Visitor<'de> for Fields {
            type Value = ItemFields<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<M: MapAccess<'de>>(
                self,
                mut map: M,
            ) -> std::result::Result<Self::Value, M::Error> {
                let mut fields = ItemFields {
                    payload: None,
                    rest: Map::new(),
                };
                while let Some(key) = map.next_key::<String>()? {
                    if key == "payload" {
                        fields.payload = Some(map.next_value()?);
                    } else {
                        let value = map.next_value()?;
                        fields.rest.insert(key, value);
                    }
                }
                Ok(fields)
            }
        }
        deserializer.deserialize_map(Fields)
    }
}

/// One write; a write that does not read is refused alone (an `Invalid`
/// error in its place), so one caller's bad argument never fails the other
/// writes of its tick.
pub fn read_write(text: &str) -> Result<Write> {
    let mut args = Options::parse("a write", text, &WRITE_KEYS)?;
    let kind = args.required_text("kind")?;
    let missing = |field: &str| Error::Invalid(format!("write {kind}: {field} is required"));
    let owned = |args: &mut Options| -> Result<HeldTask> {
        Ok(HeldTask {
            task_id: args.text("taskId")?.ok_or_else(|| missing("taskId"))?,
            worker_id: args.text("workerId")?.ok_or_else(|| missing("workerId"))?,
        })
    };
    Ok(match kind.as_str() {
        // The submit's options are the caller's: named as given, not as
        // fields of the write.
        "submit" => Write::Submit(SubmitInput::read(
            &mut args
                .object("submit", &SubmitInput::KEYS)?
                .ok_or_else(|| missing("submit"))?
                .named_under(""),
        )?),
        // `children: false` leaves the task's `callChild` children alone.
        "cancel" => Write::Cancel(
            Target::Id(args.text("taskId")?.ok_or_else(|| missing("taskId"))?),
            args.bool("children")? != Some(false),
        ),
        "cancelByKey" => Write::Cancel(
            Target::Key(args.text("key")?.ok_or_else(|| missing("key"))?),
            args.bool("children")? != Some(false),
        ),
        "retry" => Write::Retry(
            Target::Id(args.text("taskId")?.ok_or_else(|| missing("taskId"))?),
            args.bool("resetAttempt")? == Some(true),
        ),
        "retryByKey" => Write::Retry(
            Target::Key(args.text("key")?.ok_or_else(|| missing("key"))?),
            args.bool("resetAttempt")? == Some(true),
        ),
        "succeed" => Write::Finish(
            owned(&mut args)?,
            Outcome::Succeed {
                result: args.text("json")?,
            },
        ),
        "complete" => Write::Finish(
            owned(&mut args)?,
            Outcome::Complete {
                result: args.text("json")?,
            },
        ),
        "fail" => {
            let held = owned(&mut args)?;
            let envelope = args.text("json")?.ok_or_else(|| missing("json"))?;
            let retryable = args.bool("retryable")? != Some(false);
            Write::Finish(
                held,
                fail_outcome(envelope, retryable, args.number("delayMs")?)?,
            )
        }
        "progress" => Write::Progress(
            owned(&mut args)?,
            args.number("progress")?,
            args.text("message")?,
        ),
        "heartbeat" => Write::Heartbeat(owned(&mut args)?, lease_ms(args.number("leaseMs")?)?),
        other => return Err(Error::Invalid(format!("unknown write kind {other:?}"))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(text: &str) -> String {
        read_write(text).unwrap_err().to_string()
    }

    #[test]
    fn a_submit_reads_its_options_with_null_as_absent() {
        let write = read_write(
            r#"{"kind":"submit","submit":{"name":"t","queue":null,"maxAttempts":2,"group":"g"}}"#,
        )
        .unwrap();
        let Write::Submit(input) = write else {
            panic!("not a submit: {write:?}")
        };
        assert_eq!(
            (input.name.as_str(), input.queue, input.max_attempts),
            ("t", None, Some(2.0))
        );
        assert_eq!(input.group.as_deref(), Some("g"));
    }

    #[test]
    fn bad_writes_are_refused_naming_the_field() {
        for (text, message) in [
            (
                r#"{"kind":"submit","submit":{"name":"t","group":{"cairnq.nonFinite":"NaN"}}}"#,
                "group must be a string, got NaN",
            ),
            (
                r#"{"kind":"submit","submit":{"name":"t","maxAttempts":"3"}}"#,
                "maxAttempts must be a number, got \"3\"",
            ),
            (
                r#"{"kind":"submit","submit":{"name":"t","queueName":"q"}}"#,
                "unknown key \"queueName\" in submit (known: name, payload, queue, key, conflict, maxAttempts, priority, metadata, parentId, rootId, correlationId, runAtDelayMs, debounceMs, maxDelayMs, group, timeoutMs, retry, unique, deadLetter)",
            ),
            (
                r#"{"kind":"submit","submit":{"name":null}}"#,
                "name must be a string, got null",
            ),
            (r#"{"kind":"submit"}"#, "write submit: submit is required"),
            (
                r#"{"kind":"fail","taskId":"a","workerId":"w","json":"{}","delayMs":{"cairnq.nonFinite":"NaN"}}"#,
                "delayMs must be a finite number of milliseconds, at most 1e15 (about 31,700 years), got NaN",
            ),
            (
                r#"{"kind":"heartbeat","taskId":"a","workerId":"w","leaseMs":"5"}"#,
                "leaseMs must be a number, got \"5\"",
            ),
            (r#"{"kind":"cancel","taskId":7}"#, "taskId must be a string, got 7"),
            (r#"{"kind":"explode"}"#, "unknown write kind \"explode\""),
        ] {
            assert_eq!(refusal(text), message, "{text}");
        }
    }

    #[test]
    fn an_items_payload_is_kept_as_the_text_it_came_in() {
        let items = read_items(
            r#"[{"task":"a","payload":{"b":[1,null],"a":"\u00e9"}},{"task":"b","payload":"s"},{"task":"c","payload":null},{"task":"d"}]"#,
        )
        .unwrap();
        let payloads: Vec<Option<String>> = items
            .into_iter()
            .map(|item| item.unwrap().payload)
            .collect();
        assert_eq!(
            payloads,
            [
                Some(r#"{"b":[1,null],"a":"\u00e9"}"#.to_string()),
                Some(r#""s""#.to_string()),
                None,
                None
            ]
        );
    }

    #[test]
    fn items_that_are_not_objects_are_refused_by_place() {
        let refusals: Vec<String> = read_items(r#"[null,5,[],{"task":"t","extra":1}]"#)
            .unwrap()
            .into_iter()
            .map(|item| item.unwrap_err().to_string())
            .collect();
        assert_eq!(
            refusals,
            [
                "items[0] must be an object, got null",
                "items[1] must be an object, got 5",
                "items[2] must be an object, got an array",
                "unknown key \"extra\" in items[3] (known: task, payload, options)",
            ]
        );
        assert_eq!(
            read_items(r#""tasks""#).unwrap_err().to_string(),
            "items must be an array, got \"tasks\""
        );
        assert!(read_items("[{")
            .unwrap_err()
            .to_string()
            .starts_with("malformed items"));
    }
}
