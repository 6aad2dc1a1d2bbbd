"use strict";
// CairnQ, the API-side handle (docs/api.md, "CairnQ", "Waits and call"): a thin
// face over a store.

const { TaskCanceled, TaskFailed } = require("./errors.js");
const { fetchTasks, completeFetched, failFetched, extendFetched } = require("./fetch.js");
const { RetentionSweeper } = require("./housekeeping.js");
const { taskName } = require("./models.js");
const { schedule, schedules, changeSchedule, triggerSchedule } = require("./schedules.js");
const { changeQueue, queues } = require("./pauses.js");
const { bulkChange } = require("./bulk.js");
const { SQLiteStore } = require("./sqlite-store.js");
const { PostgresStore } = require("./postgres-store.js");
const { taskSteps, sendSignal } = require("./steps.js");
const { subscribe } = require("./events.js");

/**
 * @typedef {import("../index.js").Task} Task
 * @typedef {import("../index.js").TaskDef} TaskDef
 * @typedef {import("../index.js").TaskStatus} TaskStatus
 * @typedef {import("../index.js").ClientOptions} ClientOptions
 * @typedef {import("../index.js").BackpressureOptions} BackpressureOptions
 * @typedef {import("../index.js").SubmitOptions} SubmitOptions
 * @typedef {import("../index.js").SubmitItem} SubmitItem
 * @typedef {import("../index.js").CallOptions} CallOptions
 * @typedef {import("../index.js").ListInput} ListInput
 * @typedef {import("../index.js").PurgeInput} PurgeInput
 * @typedef {import("../index.js").CancelOptions} CancelOptions
 * @typedef {import("./store.js").TaskStore} TaskStore
 * @typedef {import("../index.js").WaitOptions} WaitOptions
 * @typedef {import("../index.js").TaskRef} TaskRef
 * @typedef {import("../index.js").WatchOptions} WatchOptions
 * @typedef {import("../index.js").WatchSignal} WatchSignal
 * @typedef {import("../index.js").EventsOptions} EventsOptions
 * @typedef {import("../index.js").Schedule} Schedule
 * @typedef {import("../index.js").QueueSummary} QueueSummary
 * @typedef {import("../index.js").ScheduleOptions} ScheduleOptions
 * @typedef {{ resetAttempt?: boolean, fromStep?: string }} RetryOptions
 * @typedef {import("../index.js").RetryManyFilter} RetryManyFilter
 * @typedef {import("../index.js").CancelManyFilter} CancelManyFilter
 * @typedef {import("../index.js").BulkPage} BulkPage
 */

/**
 * What `callThrough` goes through: a client or a task context.
 * @typedef {object} Submitter
 * @property {(task: string | TaskDef, payload: unknown, opts: SubmitOptions) => Promise<Task>} submit
 * @property {(taskId: string, opts: WaitOptions) => Promise<Task>} wait
 */

class CairnQ {
  /**
   * @param {TaskStore} store
   * @param {ClientOptions} [opts]
   */
  constructor(store, opts = {}) {
    this._store = store;
    // Backpressure belongs to the store, so every submit through it is gated;
    // retention belongs to this handle and starts now: connect() is optional.
    const { retention, ...backpressure } = opts;
    if (backpressure.maxQueueDepth != null) store.useBackpressure(/** @type {BackpressureOptions} */ (backpressure));
    this._sweeper = retention ? new RetentionSweeper(store, retention) : null;
    this._sweeper?.start();
  }

  /**
   * @param {string} path
   * @param {{ busyTimeoutMs?: number, propagateBaggage?: boolean } & ClientOptions} [opts]
   */
  static sqlite(path, opts = {}) {
    const { busyTimeoutMs, propagateBaggage, ...rest } = opts;
    return new CairnQ(new SQLiteStore(path, { busyTimeoutMs, propagateBaggage }), rest);
  }

  /**
   * @param {string | import("../index.js").PgExecutor} source a DSN, or the application's executor
   * @param {{ max?: number, schema?: string, propagateBaggage?: boolean } & ClientOptions} [opts]
   */
  static postgres(source, opts = {}) {
    const { max, schema, propagateBaggage, ...rest } = opts;
    return new CairnQ(new PostgresStore(source, { max, schema, propagateBaggage }), rest);
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

  /**
   * @param {string | TaskDef} task
   * @param {unknown} [payload]
   * @param {SubmitOptions} [opts]
   * @returns {Promise<Task>}
   */
  submit(task, payload, opts = {}) {
    return this._store.submit({ ...opts, name: taskName(task), payload });
  }

  /**
   * Many submits in one transaction, all or nothing (docs/api.md, "Bulk submit").
   * @param {SubmitItem[]} items
   * @returns {Promise<TaskRef[]>} in item order
   */
  submitMany(items) {
    return this._store.submitMany(items);
  }

  /**
   * `submit` written by your own connection inside your transaction
   * (docs/api.md, "The task and your rows in one transaction"): a promise on
   * Postgres, the task ref at once on SQLite.
   * @param {unknown} tx
   * @param {string | TaskDef} task
   * @param {unknown} [payload]
   * @param {SubmitOptions} [opts]
   */
  submitIn(tx, task, payload, opts = {}) {
    return this._store.submitIn(tx, { ...opts, name: taskName(task), payload });
  }

  /**
   * `submitMany` written by your own connection inside your transaction.
   * @param {unknown} tx
   * @param {import("../index.js").SubmitItem[]} items
   */
  submitManyIn(tx, items) {
    return this._store.submitManyIn(tx, items);
  }

  /**
   * @param {string} queue
   * @param {number} maxDepth
   */
  queueDepth(queue, maxDepth) {
    return this._store.queueDepth(queue, maxDepth);
  }

  /** @param {string} taskId */
  get(taskId) {
    return this._store.get(taskId);
  }

  /** @param {string} key */
  getByKey(key) {
    return this._store.getByKey(key);
  }

  /** @param {ListInput} [input] */
  list(input = {}) {
    return this._store.list(input);
  }

  /**
   * Cancels the task and, unless `opts.children` is false, its unfinished
   * `ctx.callChild` children at any depth (docs/api.md, "Durable steps").
   * @param {string} taskId
   * @param {CancelOptions} [opts]
   */
  cancel(taskId, opts) {
    return this._store.cancel(taskId, opts);
  }

  /**
   * @param {string} key
   * @param {CancelOptions} [opts]
   */
  cancelByKey(key, opts) {
    return this._store.cancelByKey(key, opts);
  }

  /**
   * @param {string} taskId
   * @param {RetryOptions} [opts]
   */
  retry(taskId, opts = {}) {
    return this._store.retry(taskId, opts);
  }

  /**
   * @param {string} key
   * @param {RetryOptions} [opts]
   */
  retryByKey(key, opts = {}) {
    return this._store.retryByKey(key, opts);
  }

  /** @param {PurgeInput} [input] */
  purge(input = {}) {
    return this._store.purge(input);
  }

  /** @param {PurgeInput} [input] */
  purgeCount(input = {}) {
    return this._store.purgeCount(input);
  }

  /**
   * Back to the queue, one bounded page at a time: the failed (or
   * `status: "canceled"`) tasks the filter picks, oldest failure first;
   * `dryRun` lists the page without writing (docs/api.md, "Bulk retry and
   * cancel"). Call again while `more`.
   * @param {RetryManyFilter} [filter]
   * @returns {Promise<BulkPage>}
   */
  retryMany(filter = {}) {
    return bulkChange(this._store, "retryMany", filter);
  }

  /**
   * Cancel, one bounded page at a time, the queued and running tasks the
   * filter picks (running ones are asked to stop, as `cancel` asks);
   * `dryRun` lists the page without writing. Call again while `more`.
   * @param {CancelManyFilter} [filter]
   * @returns {Promise<BulkPage>}
   */
  cancelMany(filter = {}) {
    return bulkChange(this._store, "cancelMany", filter);
  }

  /** @param {string | null} [queue] */
  stats(queue) {
    return this._store.stats(queue);
  }

  /**
   * Every queue with a task or a pause, by name: its counts and whether it
   * is paused (docs/api.md, "Queue pauses").
   * @returns {Promise<QueueSummary[]>}
   */
  queues() {
    return queues(this._store);
  }

  /**
   * Stop every worker of every process claiming from `queue` (within about
   * a second); true when this call paused it, false when it was paused.
   * @param {string} queue
   * @returns {Promise<boolean>}
   */
  pauseQueue(queue) {
    return changeQueue(this._store, "pauseQueue", queue);
  }

  /**
   * Let workers claim from `queue` again; true when it was paused.
   * @param {string} queue
   * @returns {Promise<boolean>}
   */
  resumeQueue(queue) {
    return changeQueue(this._store, "resumeQueue", queue);
  }

  /**
   * @param {string} taskId
   * @returns {Promise<TaskRef | null>}
   */
  getStatus(taskId) {
    return this._store.getStatus(taskId);
  }

  /**
   * @param {string} key
   * @returns {Promise<TaskRef | null>}
   */
  getStatusByKey(key) {
    return this._store.getStatusByKey(key);
  }

  /**
   * What happens to tasks, from any process (docs/api.md, "Events"): an
   * async iterator of events (and an emitter of "event"), resumable from an
   * event's `position`, that keeps the process alive until `close()`.
   * @param {EventsOptions} [opts]
   * @returns {import("./events.js").EventSubscription}
   */
  events(opts) {
    return subscribe(/** @type {any} */ (this._store), opts);
  }

  /**
   * @param {WatchOptions} opts
   * @param {(signal: WatchSignal) => void} onSignal
   * @returns {() => void} unsubscribe
   */
  watch(opts, onSignal) {
    return this._store.watch(opts, onSignal);
  }

  /**
   * Resolves with the terminal task, whatever its status; TaskTimeout leaves it running.
   * @param {string} taskId
   * @param {WaitOptions} [opts]
   * @returns {Promise<Task>}
   */
  wait(taskId, opts = {}) {
    return this._store._wait(taskId, opts);
  }

  /**
   * Waits on whatever task `key` points at, re-resolving it on every poll.
   * @param {string} key
   * @param {WaitOptions} [opts]
   * @returns {Promise<Task>}
   */
  waitByKey(key, opts = {}) {
    return this._store._waitByKey(key, opts);
  }

  /**
   * Insert or update (by name) a recurring task (docs/api.md, "Schedules").
   * @param {string} name
   * @param {ScheduleOptions} opts
   * @returns {Promise<Schedule>}
   */
  schedule(name, opts) {
    return schedule(this._store, name, opts);
  }

  /** @returns {Promise<Schedule[]>} */
  schedules() {
    return schedules(this._store);
  }

  /** @param {string} name */
  pauseSchedule(name) {
    return changeSchedule(this._store, "pauseSchedule", name);
  }

  /** @param {string} name */
  resumeSchedule(name) {
    return changeSchedule(this._store, "resumeSchedule", name);
  }

  /** @param {string} name */
  unschedule(name) {
    return changeSchedule(this._store, "unschedule", name);
  }

  /**
   * One task of the schedule now, the pending occurrence left where it is
   * (docs/api.md, "Schedules"); whatever the overlap.
   * @param {string} name
   * @returns {Promise<Task>}
   */
  triggerSchedule(name) {
    return triggerSchedule(this._store, name);
  }

  /**
   * The task's durable steps and what it is sleeping or waiting for
   * (docs/api.md, "Durable steps").
   * @param {string} taskId
   * @returns {Promise<import("../index.js").TaskSteps>}
   */
  steps(taskId) {
    return taskSteps(this._store, taskId);
  }

  /**
   * Send signal `name` to a task (docs/api.md, "Signals"): kept until a
   * `ctx.waitForSignal` of that name consumes it, and a task waiting for it
   * wakes at once. True when stored, false for a finished task, null for none.
   * @param {string} taskId
   * @param {string} name
   * @param {unknown} [payload]
   * @returns {Promise<boolean | null>}
   */
  signal(taskId, name, payload) {
    return sendSignal(this._store, taskId, false, name, payload);
  }

  /**
   * `signal` to the task `key` names.
   * @param {string} key
   * @param {string} name
   * @param {unknown} [payload]
   * @returns {Promise<boolean | null>}
   */
  signalByKey(key, name, payload) {
    return sendSignal(this._store, key, true, name, payload);
  }

  /**
   * Claim up to `count` due tasks of `queue` under `workerId` (docs/api.md,
   * "Manual fetch"); each holds a lease of `leaseMs` that no heartbeat renews.
   * @param {import("../index.js").FetchOptions} [opts]
   * @returns {Promise<Task[]>}
   */
  fetch(opts) {
    return fetchTasks(this._store, opts);
  }

  /**
   * Finish a fetched task with `result` (canceled instead when a cancel was
   * requested); NotOwner, LeaseExpired or NotRunning when it is not held.
   * @param {import("../index.js").FetchedTask} task
   * @param {unknown} [result]
   * @returns {Promise<Task>}
   */
  complete(task, result) {
    return completeFetched(this._store, task, result);
  }

  /**
   * Fail a fetched task: retried after `delayMs` while attempts remain
   * (unless `retryable` is false), else failed.
   * @param {import("../index.js").FetchedTask} task
   * @param {unknown} [reason]
   * @param {{ retryable?: boolean, delayMs?: number }} [opts]
   * @returns {Promise<Task>}
   */
  fail(task, reason = "task failed", opts) {
    return failFetched(this._store, task, reason, opts);
  }

  /**
   * Renew a fetched task's lease to `leaseMs` from now; the row tells of a
   * requested cancel (`cancel_requested_at_ms`).
   * @param {import("../index.js").FetchedTask} task
   * @param {number} [leaseMs]
   * @returns {Promise<Task>}
   */
  extendLease(task, leaseMs) {
    return extendFetched(this._store, task, leaseMs);
  }

  /**
   * submit + wait: the result, or TaskFailed / TaskCanceled / TaskTimeout.
   * @param {string | TaskDef} task
   * @param {unknown} [payload]
   * @param {CallOptions} [opts]
   * @returns {Promise<unknown>}
   */
  call(task, payload, opts = {}) {
    return callThrough(this, task, payload, opts);
  }
}

/**
 * submit + wait through `via` (a client or a task context, whose `submit`
 * wires what it wires): the result, or TaskFailed / TaskCanceled / TaskTimeout.
 * @param {Submitter} via
 * @param {string | TaskDef} task
 * @param {unknown} payload
 * @param {CallOptions} opts
 * @returns {Promise<unknown>}
 */
async function callThrough(via, task, payload, opts) {
  const { waitTimeoutMs, pollMs, maxPollMs, ...submitOpts } = opts;
  const submitted = await via.submit(task, payload, submitOpts);
  const done = await via.wait(submitted.id, { timeoutMs: waitTimeoutMs, pollMs, maxPollMs });
  if (done.status === "succeeded") return done.result ?? null;
  if (done.status === "failed") throw new TaskFailed(done.error);
  throw new TaskCanceled(done.id);
}

module.exports = { CairnQ, callThrough };
