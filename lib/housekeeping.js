"use strict";
// Backpressure and retention (docs/api.md, "Backpressure", "Retention"): both
// run in Rust; these classes validate through it and expose the same members as
// cairnq 0.7.0. A store that is not this package's own (wrapped, subclassed,
// a test double) is driven through its JS methods, on the same Rust timers.

const { NativeGate, NativeRetention } = require("./native.js");
const { fromNative } = require("./errors.js");
const { nativeSync, raise } = require("./native-call.js");
const { encodeOptions } = require("./json.js");
const { ownNative } = require("./own-store.js");

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
    const native = ownNative(store, ["queueDepth"]);
    const foreign = native ? null : foreignStore(store, "queueDepth", "QueueDepthGate");
    this._raise = raiseFrom(foreign);
    const args = encodeOptions(opts);
    this._native = nativeSync(() =>
      native ? new NativeGate(native, args) : NativeGate.foreign(/** @type {ForeignStore} */ (foreign).call, args),
    );
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
    return this._native.acquire(queue).catch(this._raise);
  }
}

class RetentionSweeper {
  /**
   * @param {TaskStore} store
   * @param {RetentionOptions} opts
   */
  constructor(store, opts) {
    const native = ownNative(store, ["purge"]);
    const foreign = native ? null : foreignStore(store, "purge", "RetentionSweeper");
    this._raise = raiseFrom(foreign);
    const onError = opts.onError;
    // The hook must never take the sweep down with it: its throws are swallowed.
    const report = onError
      ? /** @param {string} reason */ (reason) => {
          try {
            onError(foreign?.takeThrown() ?? fromNative(reason));
          } catch {
            // the hook's own throw: swallowed (see above)
          }
        }
      : undefined;
    const args = encodeOptions(opts);
    this._native = nativeSync(() =>
      native
        ? new NativeRetention(native, args, report)
        : NativeRetention.foreign(/** @type {ForeignStore} */ (foreign).call, args, report),
    );
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
    return this._native.sweep().catch(this._raise);
  }
}

/**
 * @typedef {{ call: (request: string) => Promise<string>, takeThrown: () => unknown }} ForeignStore
 */

/**
 * A rejection handler: what a foreign store's method threw, as thrown (not
 * as its message), else the native error mapped onto our classes.
 * @param {ForeignStore | null} foreign
 * @returns {(err: unknown) => never}
 */
function raiseFrom(foreign) {
  return (err) => {
    const thrown = foreign?.takeThrown();
    if (thrown !== undefined) throw thrown;
    return raise(err);
  };
}

/**
 * A store that is not this package's own, as the core calls it: each request
 * names a method and its arguments, answered with the value as JSON.
 * @param {unknown} store
 * @param {string} method the method the component needs
 * @param {string} component for the TypeError
 * @returns {ForeignStore}
 */
function foreignStore(store, method, component) {
  const given = /** @type {any} */ (store);
  if (given == null || typeof given[method] !== "function") {
    throw new TypeError(
      `${component} needs a TaskStore, or an object with a ${method}() method like a TaskStore's, got ${given === null ? "null" : typeof given}`,
    );
  }
  /** @type {unknown} */
  let thrown;
  return {
    async call(request) {
      const { method: name, args } = JSON.parse(request);
      try {
        return JSON.stringify((await given[name](...args)) ?? null);
      } catch (err) {
        thrown = err;
        throw err;
      }
    },
    takeThrown() {
      const last = thrown;
      thrown = undefined;
      return last;
    },
  };
}

module.exports = { QueueDepthGate, RetentionSweeper };
