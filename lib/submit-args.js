"use strict";
// A submit's arguments as the core reads them (`SubmitInput::read`, and
// `wire::read_items` for submitMany): one rule, `submitOptions`, for the
// options of `submit`, `submitIn`, a child submit and every submitMany item.
// Items differ only in how their payloads travel: plain ones inside one
// JSON.stringify of all items, any other through the per-item encoding,
// which refuses naming the item's field.

const { SerializationError } = require("./errors.js");
const { dumpJson, encodeOptions } = require("./json.js");
const { backoffTagged } = require("./retry.js");

/**
 * @typedef {import("../index.js").SubmitInput} SubmitInput
 * @typedef {import("../index.js").SubmitItem} SubmitItem
 */

/**
 * A submit's options as the core reads them: a function backoff tagged, the
 * metadata as JSON text (JSON.stringify's rules are JavaScript's; an absent
 * one stays absent, `{}` to the core), refused under `field` when it names
 * one (a submitMany item's place). Options needing neither come back as given.
 * @template {Record<string, any> | null | undefined} T
 * @param {T} options
 * @param {string} [field] where a refusal says the metadata is
 * @returns {T}
 */
function submitOptions(options, field) {
  const tagged = backoffTagged(options);
  if (options?.metadata == null) return tagged;
  return { ...tagged, metadata: dumpJsonAt(field, options.metadata) };
}

/**
 * `submit`'s arguments: its options (`submitOptions`) and its payload as
 * JSON text.
 * @param {SubmitInput} input
 */
function submitArgs(input) {
  return { ...submitOptions(input), payload: dumpJson(input.payload ?? {}) };
}

/**
 * The items of one submitMany call as the core reads them; a value that is
 * not an array travels as itself for the core to refuse.
 * @param {unknown} items
 * @param {Partial<SubmitInput>} wired
 * @returns {string}
 */
function encodeSubmitItems(items, wired) {
  return Array.isArray(items) ? encodeItems(items, presentOnly(wired)) : JSON.stringify(scalarOrNull(items));
}

/**
 * A payload or metadata as JSON text (an absent one as `{}`), refused naming
 * `field` when one is given.
 * @param {string | undefined} field
 * @param {unknown} value
 * @returns {string}
 */
function dumpJsonAt(field, value) {
  if (field === undefined) return dumpJson(value ?? {});
  try {
    return dumpJson(value ?? {});
  } catch (err) {
    throw new SerializationError(`${field}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/**
 * A value that is not an object as the core can show it in its refusal
 * (JSON has no undefined, bigint or function).
 * @param {unknown} value
 */
function scalarOrNull(value) {
  return typeof value === "string" || typeof value === "number" || typeof value === "boolean" ? value : null;
}

/**
 * `submitMany`'s items as the core reads them (`wire::read_items`): each
 * `{task, payload, options}`, the payload as a JSON value inside the one
 * text, the metadata as JSON text. Items that are plain (known keys, a
 * payload with no `toJSON` of its own) go through one `JSON.stringify`; a
 * text with `null` in it may hide a value JSON cannot carry, and any other
 * item takes the per-item encoding, which refuses naming the item's field.
 * @param {SubmitItem[]} items
 * @param {Partial<SubmitInput>} wired
 * @returns {string}
 */
function encodeItems(items, wired) {
  const text = plainText(plainItems(items, wired));
  if (text !== null && !text.includes("null")) return text;
  return encodeOptions(items.map((item, index) => itemArgs(item, index, wired)));
}

/**
 * `plain` as one JSON text, or null when there is none (a value
 * `JSON.stringify` throws on: the per-item encoding names its item).
 * @param {object[] | null} plain
 * @returns {string | null}
 */
function plainText(plain) {
  if (plain === null) return null;
  try {
    return JSON.stringify(plain);
  } catch {
    return null;
  }
}

/**
 * The items as one `JSON.stringify` writes them faithfully, or null when one
 * needs the per-item encoding.
 * @param {SubmitItem[]} items
 * @param {Partial<SubmitInput>} wired
 * @returns {object[] | null}
 */
function plainItems(items, wired) {
  const merge = Object.keys(wired).length > 0;
  const plain = new Array(items.length);
  try {
    for (let index = 0; index < items.length; index++) {
      const item = items[index];
      if (item === null || typeof item !== "object") return null;
      for (const key in item) if (key !== "task" && key !== "payload" && key !== "options") return null;
      const { task, payload, options } = item;
      const name = task !== null && typeof task === "object" ? task.name : task;
      if (
        typeof name !== "string" ||
        !plainJson(payload) ||
        // Options that are not an object go to the per-item encoding, for the core to refuse.
        !(options == null || (typeof options === "object" && plainJson(options) && !Array.isArray(options)))
      )
        return null;
      const encoded = submitOptions(options, `items[${index}].options.metadata`);
      plain[index] = {
        task: name,
        payload: payload ?? EMPTY,
        options: merge ? { ...wired, ...encoded } : encoded,
      };
    }
  } catch {
    return null;
  }
  return plain;
}

const EMPTY = Object.freeze({});

/**
 * Whether `JSON.stringify` writes `value` inside a larger text as it writes it
 * alone: no `toJSON` at the top (it would be called with another key), and a
 * kind JSON has (`undefined` is an absent payload).
 * @param {unknown} value
 */
function plainJson(value) {
  if (value === undefined || value === null) return true;
  const kind = typeof value;
  if (kind === "object") return typeof (/** @type {any} */ (value).toJSON) !== "function";
  return kind === "string" || kind === "number" || kind === "boolean";
}

/**
 * One item as the core reads it, by the per-item checks: its payload and
 * metadata refused naming the item's field, keys the core does not know
 * travelling as null for the core to refuse by name.
 * @param {SubmitItem} item
 * @param {number} index
 * @param {Partial<SubmitInput>} wired
 * @returns {any}
 */
function itemArgs(item, index, wired) {
  if (item === null || typeof item !== "object") return scalarOrNull(item);
  const { task, payload, options, ...unknown } = item;
  /** @type {Record<string, unknown>} */
  const args = Object.fromEntries(Object.keys(unknown).map((key) => [key, null]));
  args.task = task !== null && typeof task === "object" ? task.name : task;
  // Parsed back, the payload is a plain value the one text writes as it was checked.
  args.payload = JSON.parse(dumpJsonAt(`items[${index}].payload`, payload));
  args.options =
    options === undefined || options === null || typeof options === "object"
      ? { ...wired, ...submitOptions(options, `items[${index}].options.metadata`) }
      : scalarOrNull(options);
  return args;
}

/**
 * `options` without the entries that are null or undefined (absent either
 * way to the core): a null in the text sends every item to the per-item
 * encoding.
 * @param {Record<string, unknown>} options
 */
function presentOnly(options) {
  return Object.fromEntries(Object.entries(options).filter(([, value]) => value != null));
}

module.exports = { submitOptions, submitArgs, encodeSubmitItems };
