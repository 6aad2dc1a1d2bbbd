"use strict";
// Backpressure (API.md §8) and retention (API.md §9): both run in Rust; these
// classes validate through it and expose the same members as cairnq 0.7.0.

const { NativeGate, NativeRetention } = require("./native.js");
const { fromNative, raise } = require("./errors.js");
const { backpressureArgs, nativeSync } = require("./store.js");

class QueueDepthGate {
  constructor(store, opts) {
    this._native = nativeSync(() => new NativeGate(store._native, backpressureArgs(opts)));
  }

  limitFor(queue) {
    return this._native.limitFor(queue);
  }

  acquire(queue) {
    return this._native.acquire(queue).catch(raise);
  }
}

class RetentionSweeper {
  constructor(store, opts) {
    const onError = opts.onError;
    // The hook must never take the sweep down with it: its throws are swallowed.
    const report = onError
      ? (reason) => {
          try {
            onError(fromNative(reason));
          } catch {}
        }
      : undefined;
    const args = { olderThanMs: opts.olderThanMs, intervalMs: opts.intervalMs, limit: opts.limit };
    this._native = nativeSync(() => new NativeRetention(store._native, args, report));
  }

  start() {
    this._native.start();
  }

  stop() {
    return this._native.stop();
  }

  sweep() {
    return this._native.sweep().catch(raise);
  }
}

module.exports = { QueueDepthGate, RetentionSweeper };
