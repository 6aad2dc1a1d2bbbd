"use strict";
// submitMany's items as one JSON text for the core (`wire::read_items`):
// plain items through one JSON.stringify, any other item through the
// per-item encoding, which refuses naming the item's field.

const { SerializationError } = require("./errors.js");
const { dumpJson, encodeOptions } = require("./json.js");
const { backoffTagged } = require("./retry.js");

/**
 * @typedef {import("../index.js").SubmitInput} SubmitInput
 * @typedef {import("../index.js").SubmitItem} SubmitItem
 */

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
 * A submitMany item's payload or metadata as JSON text, refused naming the
 * item's field.
 * @param {number} index
 * @param {string} field
 * @param {unknown} value
 * @returns {string}
 */
function dumpItemJson(index, field, value) {
  try {
    return dumpJson(value ?? {});
  } catch (err) {
    throw new SerializationError(`items[${index}].${field}: ${err instanceof Error ? err.message : String(err)}`);
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
        !(options == null || (plainJson(options) && !Array.isArray(options))) ||
        // JSON would drop a function unseen: the per-item encoding tags it for the core to refuse.
        typeof options?.retry?.backoff === "function"
      )
        return null;
      const metadata = options?.metadata;
      plain[index] = {
        task: name,
        payload: payload ?? EMPTY,
        options:
          metadata !== undefined
            ? { ...wired, ...options, metadata: dumpItemJson(index, "options.metadata", metadata) }
            : merge
              ? { ...wired, ...options }
              : options,
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
  args.payload = JSON.parse(dumpItemJson(index, "payload", payload));
  args.options =
    options === undefined || options === null || typeof options === "object"
      ? { ...wired, ...backoffTagged(options), metadata: dumpItemJson(index, "options.metadata", options?.metadata) }
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

module.exports = { encodeSubmitItems };
