"use strict";
// cairnq: the public entry (CommonJS; index.mjs re-exports it for ESM).

const { CairnQ } = require("./lib/client.js");
const { TaskContext } = require("./lib/context.js");
const { Worker } = require("./lib/worker.js");
const { QueueDepthGate, RetentionSweeper } = require("./lib/housekeeping.js");
const { TaskStore, DEFAULT_WATCH_POLL_MS } = require("./lib/store.js");
const { SQLiteStore } = require("./lib/sqlite-store.js");
const { PostgresStore } = require("./lib/postgres-store.js");
const models = require("./lib/models.js");
const errors = require("./lib/errors.js");
const { createPoolExecutor } = require("./lib/executor.js");
const { EventSubscription } = require("./lib/events.js");

// The dashboard loads on first use: importing the package stays as cheap as before.
/** @param {import("./index.js").DashboardOptions} options */
function createDashboard(options) {
  return require("./lib/dashboard/handler.js").createDashboard(options);
}
/** @param {import("./index.js").MetricsOptions} options */
function createMetrics(options) {
  return require("./lib/metrics.js").createMetrics(options);
}
/** @param {import("./index.js").DashboardHandler} handler */
function toNodeHandler(handler) {
  return require("./lib/dashboard/node-adapter.js").toNodeHandler(handler);
}

module.exports = {
  CairnQ,
  QueueDepthGate,
  RetentionSweeper,
  Worker,
  TaskContext,
  TaskStore,
  EventSubscription,
  SQLiteStore,
  PostgresStore,
  STATUSES: models.STATUSES,
  defineTask: models.defineTask,
  isTerminal: models.isTerminal,
  isTerminalStatus: models.isTerminalStatus,
  cancelRequested: models.cancelRequested,
  isQueued: models.isQueued,
  isRunning: models.isRunning,
  isSucceeded: models.isSucceeded,
  isFailed: models.isFailed,
  isCanceled: models.isCanceled,
  CairnQError: errors.CairnQError,
  AlreadyExists: errors.AlreadyExists,
  QueueFull: errors.QueueFull,
  TaskTimeout: errors.TaskTimeout,
  TaskFailed: errors.TaskFailed,
  TaskCanceled: errors.TaskCanceled,
  HandlerTimeout: errors.HandlerTimeout,
  WorkerShutdown: errors.WorkerShutdown,
  TaskError: errors.TaskError,
  LostLease: errors.LostLease,
  NotOwner: errors.NotOwner,
  LeaseExpired: errors.LeaseExpired,
  NotRunning: errors.NotRunning,
  EventLoopBlocked: errors.EventLoopBlocked,
  ProtocolVersionMismatch: errors.ProtocolVersionMismatch,
  SerializationError: errors.SerializationError,
  createDashboard,
  createMetrics,
  toNodeHandler,
  SchemaMismatch: errors.SchemaMismatch,
  UnsupportedBackend: errors.UnsupportedBackend,
  ListenUnavailable: errors.ListenUnavailable,
  createPoolExecutor,
  DEFAULT_WATCH_POLL_MS,
};
