"use strict";
// Calls into the addon: its errors carry a JSON reason (errors.js) that is
// mapped back onto the error classes here, on the synchronous and the promise
// side alike. Every call into the addon whose failure reaches the caller goes
// through one of these.

const { fromNative } = require("./errors.js");

/**
 * What a feature module needs of a store: its native handle, typed as
 * binding.d.ts generates it, so every call into it is checked.
 * @typedef {{ _native: import("../binding.js").NativeStore }} NativeHolder
 */

/**
 * Call a synchronous native method, mapping its error onto our classes.
 * @template T
 * @param {() => T} fn
 * @returns {T}
 */
function nativeSync(fn) {
  try {
    return fn();
  } catch (err) {
    throw fromNative(err);
  }
}

/**
 * The rejection handler of a native promise: rethrows the reason mapped onto
 * our classes (`native.call().catch(raise)`, `.then(parse, raise)`).
 * @param {unknown} err
 * @returns {never}
 */
function raise(err) {
  throw fromNative(err);
}

module.exports = { nativeSync, raise };
