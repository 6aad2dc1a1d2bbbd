"use strict";
// Statuses and the predicates over a task row (docs/api.md, "Tasks and
// statuses").

/**
 * @typedef {import("../index.js").Task} Task
 * @typedef {import("../index.js").TaskDef} TaskDef
 */

const { taskStatuses } = require("./native.js");

// The core's statuses (crates/core/src/task.rs), in their order.
const { all, terminal } = taskStatuses();
const STATUSES = Object.freeze(/** @type {import("../index.js").TaskStatus[]} */ (all));
const TERMINAL_STATUSES = Object.freeze(/** @type {import("../index.js").TaskStatus[]} */ (terminal));
const TERMINAL = new Set(terminal);

/**
 * @param {string} status
 * @returns {boolean}
 */
const isTerminalStatus = (status) => TERMINAL.has(status);
/** @param {{ status: string }} t anything with a status: a task, a TaskRef */
const isTerminal = (t) => TERMINAL.has(t.status);
/** @param {Task} t */
const cancelRequested = (t) => t.cancel_requested_at_ms != null;
/** @param {Task} t */
const isQueued = (t) => t.status === "queued";
/** @param {Task} t */
const isRunning = (t) => t.status === "running";
/** @param {Task} t */
const isSucceeded = (t) => t.status === "succeeded";
/** @param {Task} t */
const isFailed = (t) => t.status === "failed";
/** @param {Task} t */
const isCanceled = (t) => t.status === "canceled";

/**
 * `defineTask<P, R>(name)`: a name that carries its payload and result types.
 * @param {string} name
 * @returns {TaskDef}
 */
function defineTask(name) {
  return { name };
}

/**
 * The name a task is submitted or registered under.
 * @param {string | TaskDef} task
 * @returns {string}
 */
function taskName(task) {
  return typeof task === "string" ? task : task.name;
}

module.exports = {
  STATUSES,
  TERMINAL_STATUSES,
  isTerminal,
  isTerminalStatus,
  cancelRequested,
  isQueued,
  isRunning,
  isSucceeded,
  isFailed,
  isCanceled,
  defineTask,
  taskName,
};
