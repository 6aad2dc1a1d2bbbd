"use strict";
// A store's watch (docs/api.md, "Watching"): the native poll's signals and,
// where notifications are heard on the JS thread, those too, handed to one
// consumer as WatchSignal objects.

const { NativeWatch } = require("./native.js");

/**
 * @typedef {import("../index.js").WatchOptions} WatchOptions
 * @typedef {import("../index.js").WatchSignal} WatchSignal
 * @typedef {{ hear(onNotify: (channel: string, payload: string) => void): () => void } | null} JsNotifications
 */

/**
 * Signals meaning "read again now" until the returned function is called. A
 * throwing consumer never stops the signals.
 * @param {import("../binding.js").NativeStore} native
 * @param {JsNotifications} notifications
 * @param {WatchOptions} opts
 * @param {(signal: WatchSignal) => void} onSignal
 * @returns {() => void} the unsubscribe function
 */
function watchSignals(native, notifications, opts, onSignal) {
  let active = true;
  const deliver = (/** @type {import("../binding.js").WatchSignalObject} */ nativeSignal) => {
    if (!active) return;
    /** @type {WatchSignal} */
    const signal = { reason: /** @type {WatchSignal["reason"]} */ (nativeSignal.reason) };
    if (nativeSignal.queue != null) signal.queue = nativeSignal.queue;
    if (nativeSignal.taskId != null) signal.taskId = nativeSignal.taskId;
    try {
      onSignal(signal);
    } catch {
      // a consumer's throw is its own: the other subscribers keep their signals
    }
  };
  const watch = new NativeWatch(native, opts?.queues, opts?.pollMs, deliver);
  // Notifications heard on the JS thread reach the consumer at once.
  const unhear = notifications?.hear((channel, payload) => {
    const signal = watch.signalOf(channel, payload);
    if (signal) deliver(signal);
  });
  return () => {
    active = false;
    unhear?.();
    watch.stop();
  };
}

module.exports = { watchSignals };
