"use strict";
// Backpressure and retention (docs/api.md, "Backpressure", "Retention"): both
// run in Rust; these classes validate through it and expose the same members as
// cairnq 0.7.0.

const { NativeGate, NativeRetention } = require("./native.js");
const { fromNative } = require("./errors.js");
const { nativeSync, raise } = require("./native-call.js");
const { backpressureArgs } = require("./store.js");

/**
 * @typedef {import("./store.js").TaskStore} TaskStore
 * @typedef {import("../index.js").BackpressureOptions} BackpressureOptions
 * @typedef {import("../index.js").RetentionOptions} RetentionOptions
 */

class QueueDepthGate {
  /**
   * @param {TaskStore} store
   * @param {BackpressureOptions} opts
   */
  constructor(store, opts) {
    this._native = nativeSync(() => new NativeGate(store._native, backpressureArgs(opts)));
  }

  /**
   * @param {string} queue
   * @returns {number | null}
   */
  limitFor(queue) {
    return this._native.limitFor(queue);
  }

  /**
   * @param {string} queue
   * @returns {Promise<void>}
   */
  acquire(queue) {
    return this._native.acquire(queue).catch(raise);
  }
}

class RetentionSweeper {
  /**
   * @param {TaskStore} store
   * @param {RetentionOptions} opts
   */
  constructor(store, opts) {
    const onError = opts.onError;
    // The hook must never take the sweep down with it: its throws are swallowed.
    const report = onError
      ? /** @param {string} reason */ (reason) => {
          try {
            onError(fromNative(reason));
          } catch {
            // the hook's own throw: swallowed (see above)
          }
        }
      : undefined;
    const args = { ...retentionCutoffs(opts.olderThanMs), intervalMs: opts.intervalMs, limit: opts.limit };
    this._native = nativeSync(() => new NativeRetention(store._native, args, report));
  }

  start() {
    this._native.start();
  }

  /** @returns {Promise<void>} */
  stop() {
    return this._native.stop();
  }

  /** @returns {Promise<number>} */
  sweep() {
    return this._native.sweep().catch(raise);
  }
}

/**
 * `olderThanMs` as the native sweeper takes it: a number (or nothing) as is,
 * a per-status map as one `{status, olderThanMs}` rule per entry in key order,
 * a rule list as given. The checks are the core's.
 * @param {RetentionOptions["olderThanMs"] | undefined} olderThanMs
 * @returns {{ olderThanMs?: number, rules?: import("../binding.js").RuleArgs[] }}
 */
function retentionCutoffs(olderThanMs) {
  if (olderThanMs == null || typeof olderThanMs === "number") return { olderThanMs: olderThanMs ?? undefined };
  if (typeof olderThanMs !== "object") throw new TypeError(`retention.olderThanMs must be a number, a map or a list of rules, got ${typeof olderThanMs}`);
  /** @type {Array<{ olderThanMs?: number, queue?: string, status?: string, name?: string }>} */
  const rules = Array.isArray(olderThanMs)
    ? olderThanMs
    : Object.entries(olderThanMs).map(([status, cutoff]) => ({ status, olderThanMs: cutoff }));
  return {
    rules: rules.map((rule) => ({
      olderThanMs: rule.olderThanMs ?? undefined,
      queue: rule.queue ?? undefined,
      status: rule.status == null ? undefined : String(rule.status),
      name: rule.name ?? undefined,
    })),
  };
}

module.exports = { QueueDepthGate, RetentionSweeper };
