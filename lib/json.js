"use strict";
// The JSON boundary (docs/api.md, "Values and JSON"): exactly what
// JSON.stringify writes, except that values JSON has no faithful form for are
// refused instead of coerced.

const { SerializationError } = require("./errors.js");

/**
 * @param {unknown} value
 * @returns {string}
 */
function dumpJson(value) {
  let text;
  try {
    text = JSON.stringify(value);
  } catch (err) {
    throw new SerializationError(/** @type {Error} */ (err).message);
  }
  if (text === undefined) {
    throw new SerializationError(`value of type ${typeof value} is not JSON-serializable`);
  }
  // NaN, ±Infinity and holes in arrays all come out as `null`: only then is the
  // slower walk over the original value needed.
  if (text.includes("null")) assertFaithful(value, "");
  return text;
}

/**
 * @param {any} value
 * @param {string} key
 */
function assertFaithful(value, key) {
  if (value !== null && typeof value === "object" && typeof value.toJSON === "function") {
    value = value.toJSON(key);
  }
  if (typeof value === "number") {
    if (!Number.isFinite(value)) {
      throw new SerializationError(`non-finite number ${value} is not JSON-serializable`);
    }
    return;
  }
  if (value === null || typeof value !== "object") return;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item = value[i];
      const kind = typeof item;
      if (item === undefined || kind === "function" || kind === "symbol") {
        throw new SerializationError(`${kind} inside an array is not JSON-serializable`);
      }
      assertFaithful(item, String(i));
    }
    return;
  }
  for (const k of Object.keys(value)) assertFaithful(value[k], k);
}

/**
 * `undefined`/`null` mean "no value" (SQL NULL); anything else is encoded.
 * @param {unknown} value
 * @returns {string | null}
 */
function dumpOptionalJson(value) {
  return value == null ? null : dumpJson(value);
}

/**
 * An error envelope as JSON text. A failure record must never fail to record:
 * an envelope that cannot be encoded keeps its strings and drops `details`.
 * @param {Record<string, any>} error
 * @param {boolean} retryable
 * @returns {string}
 */
function encodeEnvelope(error, retryable) {
  try {
    return dumpJson(error);
  } catch (err) {
    if (!(err instanceof SerializationError)) throw err;
    return JSON.stringify({
      type: String(error.type ?? "TaskError"),
      code: String(error.code ?? "task_error"),
      message: String(error.message ?? ""),
      retryable,
      details: {},
    });
  }
}

/**
 * Options as the core reads them (`input::Options`): one JSON object, where a
 * number JSON cannot carry travels as `{"cairnq.nonFinite": String(n)}`, so a
 * number option names it in its refusal and a text option refuses it as the
 * number it is. A replacer slows every key down, so it runs only for options
 * that hold such a number.
 * @param {Record<string, any>} options plain objects and arrays
 * @returns {string}
 */
function encodeOptions(options) {
  return holdsNonFinite(options) ? JSON.stringify(options, nonFiniteTagged) : JSON.stringify(options);
}

/**
 * @param {Record<string, unknown>} value plain objects and arrays
 * @returns {boolean}
 */
function holdsNonFinite(value) {
  for (const key in value) {
    const item = value[key];
    if (typeof item === "number") {
      if (!Number.isFinite(item)) return true;
    } else if (item !== null && typeof item === "object" && holdsNonFinite(/** @type {any} */ (item))) {
      return true;
    }
  }
  return false;
}

/**
 * @param {string} _key
 * @param {unknown} value
 */
function nonFiniteTagged(_key, value) {
  return typeof value === "number" && !Number.isFinite(value) ? { "cairnq.nonFinite": String(value) } : value;
}

/**
 * A `Date` as its epoch milliseconds (an invalid one as NaN, which the core
 * refuses naming the field); anything else as given, for the core to check.
 * @param {unknown} value
 */
const epochMs = (value) => (value instanceof Date ? value.getTime() : value);

/**
 * A row as JSON text, parsed; `null`/`undefined` (no row) as `null`.
 * @param {string | null | undefined} text
 * @returns {import("../index.js").Task | null}
 */
function parseRow(text) {
  return text == null ? null : JSON.parse(text);
}

module.exports = { dumpJson, dumpOptionalJson, encodeEnvelope, encodeOptions, epochMs, parseRow };
