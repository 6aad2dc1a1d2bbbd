"use strict";
// Statuses and the predicates over a task row (API.md §2.2–§2.3).

const STATUSES = Object.freeze(["queued", "running", "succeeded", "failed", "canceled"]);
const TERMINAL = new Set(["succeeded", "failed", "canceled"]);

const isTerminal = (t) => TERMINAL.has(t.status);
const cancelRequested = (t) => t.cancel_requested_at_ms != null;
const isQueued = (t) => t.status === "queued";
const isRunning = (t) => t.status === "running";
const isSucceeded = (t) => t.status === "succeeded";
const isFailed = (t) => t.status === "failed";
const isCanceled = (t) => t.status === "canceled";

/** `defineTask<P, R>(name)`: a name that carries its payload and result types. */
function defineTask(name) {
  return { name };
}

function taskName(task) {
  return typeof task === "string" ? task : task.name;
}

module.exports = {
  STATUSES,
  isTerminal,
  cancelRequested,
  isQueued,
  isRunning,
  isSucceeded,
  isFailed,
  isCanceled,
  defineTask,
  taskName,
};
