"use strict";
// retryMany and cancelMany (docs/api.md, "Bulk retry and cancel"): what JS
// must own of them, a Date bound as its epoch milliseconds. Every check and
// decision (statuses, the page, the dry run) is the core's.

const { raise } = require("./native-call.js");
const { encodeOptions, epochMs } = require("./json.js");

/**
 * @typedef {import("../index.js").RetryManyFilter} RetryManyFilter
 * @typedef {import("../index.js").CancelManyFilter} CancelManyFilter
 * @typedef {import("../index.js").BulkPage} BulkPage
 * @typedef {import("./native-call.js").NativeHolder} NativeHolder
 */

/**
 * One page of `retryMany` or `cancelMany`.
 * @param {NativeHolder} store
 * @param {"retryMany" | "cancelMany"} op
 * @param {RetryManyFilter | CancelManyFilter} filter
 * @returns {Promise<BulkPage>}
 */
async function bulkChange(store, op, filter) {
  const given = /** @type {Record<string, unknown>} */ (filter);
  const encoded =
    given !== null && typeof given === "object" && ("finishedAfter" in given || "finishedBefore" in given)
      ? { ...given, finishedAfter: epochMs(given.finishedAfter), finishedBefore: epochMs(given.finishedBefore) }
      : filter;
  return JSON.parse(await store._native[op](encodeOptions(encoded)).catch(raise));
}

module.exports = { bulkChange };
