"use strict";
// CairnQ, the API-side handle (API.md §5–§6): a thin face over a store.

const { TaskCanceled, TaskFailed } = require("./errors.js");
const { RetentionSweeper } = require("./housekeeping.js");
const { taskName } = require("./models.js");
const { SQLiteStore, PostgresStore } = require("./store.js");

const DEFAULT_WAIT_TIMEOUT_MS = 30_000;

class CairnQ {
  constructor(store, opts = {}) {
    this._store = store;
    // Backpressure belongs to the store, so every submit through it is gated;
    // retention belongs to this handle and starts now: connect() is optional.
    if (opts.maxQueueDepth != null) store.useBackpressure(opts);
    this._sweeper = opts.retention ? new RetentionSweeper(store, opts.retention) : null;
    this._sweeper?.start();
  }

  static sqlite(path, opts = {}) {
    const { busyTimeoutMs, ...rest } = opts;
    return new CairnQ(new SQLiteStore(path, { busyTimeoutMs }), rest);
  }

  static postgres(dsn, opts = {}) {
    const { max, ...rest } = opts;
    return new CairnQ(new PostgresStore(dsn, { max }), rest);
  }

  get store() {
    return this._store;
  }

  connect() {
    return this._store.connect();
  }

  async close() {
    await this._sweeper?.stop();
    await this._store.close();
  }

  submit(task, payload, opts = {}) {
    return this._store.submit({ ...opts, name: taskName(task), payload });
  }

  queueDepth(queue, maxDepth) {
    return this._store.queueDepth(queue, maxDepth);
  }

  get(taskId) {
    return this._store.get(taskId);
  }

  getByKey(key) {
    return this._store.getByKey(key);
  }

  list(input = {}) {
    return this._store.list(input);
  }

  cancel(taskId) {
    return this._store.cancel(taskId);
  }

  cancelByKey(key) {
    return this._store.cancelByKey(key);
  }

  retry(taskId, opts = {}) {
    return this._store.retry(taskId, opts);
  }

  retryByKey(key, opts = {}) {
    return this._store.retryByKey(key, opts);
  }

  purge(input = {}) {
    return this._store.purge(input);
  }

  stats() {
    return this._store.stats();
  }

  /** Resolves with the terminal task, whatever its status; TaskTimeout leaves it running. */
  wait(taskId, opts = {}) {
    return this._store._wait(taskId, opts.timeoutMs ?? DEFAULT_WAIT_TIMEOUT_MS, opts.pollMs);
  }

  /** Waits on whatever task `key` points at, re-resolving it on every poll. */
  waitByKey(key, opts = {}) {
    return this._store._waitByKey(key, opts.timeoutMs ?? DEFAULT_WAIT_TIMEOUT_MS, opts.pollMs);
  }

  /** submit + wait: the result, or TaskFailed / TaskCanceled / TaskTimeout. */
  call(task, payload, opts = {}) {
    return callThrough(this, task, payload, opts);
  }
}

/**
 * submit + wait through `via` (a client or a task context, whose `submit`
 * wires what it wires): the result, or TaskFailed / TaskCanceled / TaskTimeout.
 */
async function callThrough(via, task, payload, opts) {
  const { waitTimeoutMs = DEFAULT_WAIT_TIMEOUT_MS, pollMs, ...submitOpts } = opts;
  const submitted = await via.submit(task, payload, submitOpts);
  const done = await via.wait(submitted.id, { timeoutMs: waitTimeoutMs, pollMs });
  if (done.status === "succeeded") return done.result ?? null;
  if (done.status === "failed") throw new TaskFailed(done.error);
  throw new TaskCanceled(done.id);
}

module.exports = { CairnQ, callThrough, DEFAULT_WAIT_TIMEOUT_MS };
