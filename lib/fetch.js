"use strict";
// Manual fetch and settle (docs/api.md, "Manual fetch"): a script takes tasks
// holding a lease (`fetch`) and finishes them itself, here or in another
// process. The core claims, settles and tells a refusal apart (NotOwner,
// LeaseExpired, NotRunning); this side encodes the JSON values and checks the
// shape of the task handle it is given.

const { asEnvelope } = require("./errors.js");
const { raise } = require("./native-call.js");
const { dumpOptionalJson, encodeEnvelope, encodeOptions } = require("./json.js");

/**
 * @typedef {import("../index.js").Task} Task
 * @typedef {import("../index.js").FetchOptions} FetchOptions
 * @typedef {import("../index.js").FetchedTask} FetchedTask
 * @typedef {import("./native-call.js").NativeHolder} NativeHolder
 */

/**
 * `[id, workerId]` of a fetched task, or a TypeError naming what is missing.
 * @param {string} method
 * @param {FetchedTask} task
 * @returns {[string, string]}
 */
function held(method, task) {
  if (typeof task?.id !== "string") {
    throw new TypeError(`${method} needs a fetched task: task.id must be a string, got ${typeof task?.id}`);
  }
  if (typeof task.worker_id !== "string") {
    throw new TypeError(
      `${method} needs a fetched task: task.worker_id must be a string, got ${task.worker_id === null ? "null" : typeof task.worker_id}`,
    );
  }
  return [task.id, task.worker_id];
}

/**
 * @param {NativeHolder} store
 * @param {FetchOptions} opts
 * @returns {Promise<Task[]>}
 */
async function fetchTasks(store, opts = {}) {
  return store._native.fetch(encodeOptions(opts)).then(JSON.parse, raise);
}

/**
 * @param {NativeHolder} store
 * @param {FetchedTask} task
 * @param {unknown} result
 * @returns {Promise<Task>}
 */
async function completeFetched(store, task, result) {
  const [id, workerId] = held("complete", task);
  return store._native.completeFetched(id, workerId, dumpOptionalJson(result)).then(JSON.parse, raise);
}

/**
 * A `ctx.fail` reason (an Error, a TaskError, an envelope or text) stored as
 * the task's error; retried after `delayMs` while attempts remain, unless
 * `retryable` is false.
 * @param {NativeHolder} store
 * @param {FetchedTask} task
 * @param {unknown} reason
 * @param {{ retryable?: boolean, delayMs?: number }} opts
 * @returns {Promise<Task>}
 */
async function failFetched(store, task, reason, opts = {}) {
  const [id, workerId] = held("fail", task);
  const [envelope, retryable] = asEnvelope(reason, opts.retryable ?? true);
  return store._native
    .failFetched(id, workerId, encodeEnvelope(envelope, retryable), retryable, opts.delayMs)
    .then(JSON.parse, raise);
}

/**
 * @param {NativeHolder} store
 * @param {FetchedTask} task
 * @param {number | undefined} leaseMs
 * @returns {Promise<Task>}
 */
async function extendFetched(store, task, leaseMs) {
  const [id, workerId] = held("extendLease", task);
  return store._native.extendFetched(id, workerId, leaseMs).then(JSON.parse, raise);
}

module.exports = { fetchTasks, completeFetched, failFetched, extendFetched };
