"use strict";
// Queue pauses (docs/api.md, "Queue pauses"): what JS must own of them, a
// queue name that is not a string refused before the binding would coerce or
// refuse it in its own words. Every other check and decision is the core's.

const { raise } = require("./native-call.js");

/**
 * @typedef {import("../index.js").QueueSummary} QueueSummary
 * @typedef {import("./native-call.js").NativeHolder} NativeHolder
 */

/**
 * @param {unknown} queue
 * @returns {asserts queue is string}
 */
function checkQueue(queue) {
  if (typeof queue !== "string") throw new Error(`queue must be a non-empty string, got ${String(queue)}`);
}

/**
 * `pauseQueue` / `resumeQueue`: whether the call changed the queue's state.
 * @param {NativeHolder} store
 * @param {"pauseQueue" | "resumeQueue"} change
 * @param {unknown} queue
 * @returns {Promise<boolean>}
 */
async function changeQueue(store, change, queue) {
  checkQueue(queue);
  return store._native[change](queue).catch(raise);
}

/**
 * Every queue with a task or a pause, by name.
 * @param {NativeHolder} store
 * @returns {Promise<QueueSummary[]>}
 */
async function queues(store) {
  return JSON.parse(await store._native.queues().catch(raise));
}

module.exports = { changeQueue, queues };
