"use strict";
// The store's waits (docs/api.md, "Waits and call"): the JS timers of the
// wakes, the native wait until a task is terminal, and the rule for which
// values can name a task at all.

const { TaskTimeout } = require("./errors.js");
const { raise } = require("./native-call.js");
const { encodeOptions, parseRow } = require("./json.js");

/**
 * @typedef {import("../index.js").Task} Task
 * @typedef {import("../index.js").WaitOptions} WaitOptions
 */

/**
 * A JS timer: a delay it cannot hold (NaN, negative, past 2^31 − 1 ms) fires
 * at once, the rule the core's `timer_ms` follows for the native wakes.
 * @param {number} ms
 * @param {boolean} keepAlive
 * @returns {Promise<void>}
 */
function sleep(ms, keepAlive) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    if (!keepAlive) timer.unref?.();
  });
}

/**
 * Whether a task id or key can name a task. One that is not a string names
 * none, as in 0.7.0 (which bound it as a value no row holds): lookups and
 * writes by it answer null, and waits on it run out their deadline.
 * @param {unknown} value
 * @returns {value is string}
 */
const namesTask = (value) => typeof value === "string";

/**
 * Poll until the task `ref` names (its id, or its key when `byKey`) is
 * terminal; TaskTimeout at the deadline.
 * @param {import("../binding.js").NativeStore} native
 * @param {string} ref
 * @param {boolean} byKey
 * @param {WaitOptions} opts
 * @returns {Promise<Task>}
 */
function waitForTask(native, ref, byKey, opts) {
  const args = encodeOptions(opts);
  if (!namesTask(ref)) return runOut(native, ref, byKey ? ref : null, args);
  const row = byKey ? native.waitByKey(ref, args) : native.wait(ref, args);
  // The native wait resolves with a row (never "no row") or rejects.
  return /** @type {Promise<Task>} */ (row.then(parseRow, raise));
}

/**
 * A wait on an id or key that names no task: TaskTimeout once the core's
 * deadline for it passes (never, for a timeout that is not finite).
 * @param {import("../binding.js").NativeStore} native
 * @param {unknown} taskId
 * @param {unknown} key
 * @param {string} args the wait's options, encoded
 * @returns {Promise<never>}
 */
async function runOut(native, taskId, key, args) {
  const timeoutMs = await native.runOutWait(args).catch(raise);
  throw new TaskTimeout(/** @type {string} */ (taskId), {
    timeoutMs,
    task: null,
    key: /** @type {string | null} */ (key),
  });
}

module.exports = { sleep, namesTask, waitForTask };
