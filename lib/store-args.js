"use strict";
// Store options as the core takes them: null means "absent" (docs/api.md,
// "Values and JSON"), and the native layer takes only undefined for that.

/**
 * @typedef {import("../index.js").PurgeInput} PurgeInput
 * @typedef {import("../index.js").WaitOptions} WaitOptions
 * @typedef {import("../index.js").BackpressureOptions} BackpressureOptions
 */

/**
 * `purge` input as the core takes it: null filters are off.
 * @param {PurgeInput} input
 */
function purgeArgs(input) {
  const { olderThanMs, queue, status, name, limit } = input;
  return {
    olderThanMs: olderThanMs ?? undefined,
    queue: queue ?? undefined,
    // Any non-null status reaches the core's check, which words the refusal.
    status: status == null ? undefined : String(status),
    name: name ?? undefined,
    limit: limit ?? undefined,
  };
}

/**
 * The core's open mode for a store's options (`existing`, `ownOnly`).
 * @param {{ existing?: boolean, ownOnly?: boolean }} opts
 * @returns {string | undefined}
 */
function openMode(opts) {
  if (opts.existing === true) return "existing";
  return opts.ownOnly === true ? "own" : undefined;
}

/**
 * What every store takes: `propagateBaggage` (docs/api.md, "Tracing"), off
 * unless `true`; checked before anything is opened.
 * @param {{ propagateBaggage?: boolean }} opts
 * @returns {{ propagateBaggage: boolean }}
 */
function storeOptions(opts) {
  const value = opts.propagateBaggage;
  if (value != null && typeof value !== "boolean") {
    throw new TypeError(
      `propagateBaggage must be a boolean, got ${typeof value === "string" ? JSON.stringify(value) : String(value)}`,
    );
  }
  return { propagateBaggage: value === true };
}

/**
 * @param {WaitOptions} opts
 * @returns {import("../binding.js").WaitArgs}
 */
function waitArgs(opts) {
  return {
    timeoutMs: opts.timeoutMs ?? undefined,
    pollMs: opts.pollMs ?? undefined,
    maxPollMs: opts.maxPollMs ?? undefined,
  };
}

/**
 * @param {BackpressureOptions} opts
 * @returns {import("../binding.js").BackpressureArgs}
 */
function backpressureArgs(opts) {
  return {
    maxQueueDepth: opts.maxQueueDepth,
    maxQueueWaitMs: opts.maxQueueWaitMs,
    queuePollIntervalMs: opts.queuePollIntervalMs,
  };
}

module.exports = { storeOptions, purgeArgs, openMode, waitArgs, backpressureArgs };
