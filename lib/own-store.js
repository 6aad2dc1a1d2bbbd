"use strict";
// Whether a store is one of this package's own, with its own methods: then
// the core drives it through its native handle; otherwise (a subclass that
// replaces methods, a wrapper, a test double) through its JS methods.

const { TaskStore } = require("./store.js");
const { SQLiteStore } = require("./sqlite-store.js");
const { PostgresStore } = require("./postgres-store.js");

/**
 * The methods of `store` that replace this package's own (by a subclass or
 * on the instance), among `methods` (every store method when not given);
 * null when `store` is not one of this package's stores at all.
 * @param {unknown} store
 * @param {string[]} [methods]
 * @returns {string[] | null}
 */
function replacedMethods(store, methods) {
  const own = [SQLiteStore, PostgresStore].find((kind) => store instanceof kind);
  if (!own) return null;
  /** @type {Record<string, unknown>} */
  const candidate = /** @type {any} */ (store);
  const ours = /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (own.prototype));
  return (methods ?? storeMethods(own)).filter((name) => candidate[name] !== ours[name]);
}

/**
 * The native store behind `store` when it is one of this package's stores
 * and its `methods` (every store method when not given) are this package's
 * own; null otherwise: such a store is driven through its JS methods, or
 * refused where that cannot be.
 * @param {unknown} store
 * @param {string[]} [methods]
 * @returns {import("../binding.js").NativeStore | null}
 */
function ownNative(store, methods) {
  const replaced = replacedMethods(store, methods);
  return replaced !== null && replaced.length === 0
    ? /** @type {import("./native-call.js").NativeHolder} */ (store)._native
    : null;
}

/**
 * The methods of a store class and of TaskStore.
 * @param {Function} kind
 * @returns {string[]}
 */
function storeMethods(kind) {
  const names = new Set();
  for (const proto of [TaskStore.prototype, kind.prototype]) {
    for (const [name, descriptor] of Object.entries(Object.getOwnPropertyDescriptors(proto))) {
      if (name !== "constructor" && typeof descriptor.value === "function") names.add(name);
    }
  }
  return [...names];
}

module.exports = { ownNative, replacedMethods };
