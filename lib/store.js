"use strict";
// TaskStore (docs/api.md, "Stores"): the JS face over the Rust store that
// SQLiteStore and PostgresStore share. Every method encodes its JSON values
// here (JSON.stringify semantics belong to JS), then hands off to Rust, which
// runs the statement off the event loop and returns the row as JSON text.

const { DEFAULT_WATCH_POLL_MS, onBadRow } = require("./native.js");
const { UnsupportedBackend } = require("./errors.js");
const { TickWrites } = require("./tick-writes.js");
const { nativeSync, raise } = require("./native-call.js");
const { inSharedTransaction, nativeSession } = require("./shared-tx.js");
const { dumpOptionalJson, encodeEnvelope, encodeOptions, parseRow } = require("./json.js");
const { activeTracer, tracedSubmit } = require("./telemetry/trace.js");
const { submitArgs, encodeSubmitItems } = require("./submit-args.js");
const { sleep, namesTask, waitForTask } = require("./store-waits.js");
const { watchSignals } = require("./store-watch.js");
const { restartFromStep } = require("./steps.js");

/**
 * @typedef {import("../index.js").Task} Task
 * @typedef {import("../index.js").TaskStatus} TaskStatus
 * @typedef {import("../index.js").SubmitInput} SubmitInput
 * @typedef {import("../index.js").SubmitItem} SubmitItem
 * @typedef {import("../index.js").ListInput} ListInput
 * @typedef {import("../index.js").PurgeInput} PurgeInput
 * @typedef {import("../index.js").TaskRef} TaskRef
 * @typedef {import("../index.js").WaitOptions} WaitOptions
 * @typedef {import("../index.js").WatchOptions} WatchOptions
 * @typedef {import("../index.js").WatchSignal} WatchSignal
 * @typedef {import("../index.js").BackpressureOptions} BackpressureOptions
 * @typedef {{ resetAttempt?: boolean, fromStep?: string }} RetryOptions
 * @typedef {(names: string[] | null | undefined, limit: number) => Promise<Task[]>} Draw
 * @typedef {import("./tick-writes.js").WriteArgs} WriteArgs
 */

// A row of cairnq's own tables that another program wrote in a shape the
// core cannot read is skipped and reported once per process, as a warning
// (docs/security.md, "Rows written by others").
onBadRow((/** @type {string} */ message) => process.emitWarning(message, { code: "CAIRNQ_BAD_ROW" }));

/**
 * A JSON array of rows (or any JSON text), parsed.
 * @param {string} text
 * @returns {any}
 */
const parseRows = (text) => JSON.parse(text);

const NO_TASK = Promise.resolve(null);

class TaskStore {
  /**
   * @param {import("../binding.js").NativeStore} native
   */
  constructor(native) {
    if (new.target === TaskStore) {
      throw new TypeError("TaskStore is abstract: use SQLiteStore or PostgresStore");
    }
    this._native = native;
    /** Whether a traced submit stores the context's baggage in metadata too. */
    this._propagateBaggage = native.propagateBaggage;
    /**
     * Where this store hears notifications on the JS thread (an executor's
     * `listen`), or null when they arrive natively.
     * @type {{ hear(onNotify: (channel: string, payload: string) => void): () => void } | null}
     */
    this._notifications = null;
    /** This store's writes, gathered per JS tick. */
    this._writes = new TickWrites(native);
  }

  /**
   * Every single-row write goes through here (see TickWrites).
   * @param {WriteArgs} args
   * @returns {Promise<any>} the row Rust replied with, or null
   */
  _write(args) {
    return this._writes.write(args);
  }

  connect() {
    return this._native.connect().catch(raise);
  }

  close() {
    return this._native.close().catch(raise);
  }

  protocolVersion() {
    return this._native.protocolVersion().catch(raise);
  }

  /**
   * Settles when work may be claimable on `queues`; never keeps the process alive.
   * @param {string[]} _queues
   * @param {number} timeoutMs
   * @returns {Promise<void>}
   */
  claimWake(_queues, timeoutMs) {
    return sleep(timeoutMs, false);
  }

  /**
   * Settles when `taskId` may have finished; keeps the process alive like any wait.
   * @param {string} _taskId
   * @param {number} timeoutMs
   * @returns {Promise<void>}
   */
  taskDoneWake(_taskId, timeoutMs) {
    return sleep(timeoutMs, true);
  }

  /** @param {BackpressureOptions} opts */
  useBackpressure(opts) {
    nativeSync(() => this._native.useBackpressure(encodeOptions(opts)));
  }

  /**
   * An encoding failure rejects the returned promise rather than throwing.
   * (Not an async function: one promise per submit, not two.)
   * @param {SubmitInput} input
   * @returns {Promise<Task>}
   */
  submit(input) {
    const tracer = activeTracer();
    if (tracer !== null) {
      return tracedSubmit(tracer, input, this._propagateBaggage, (traced) => this._submitNow(traced));
    }
    return this._submitNow(input);
  }

  /**
   * @param {SubmitInput} input
   * @returns {Promise<Task>}
   */
  _submitNow(input) {
    let args;
    try {
      args = this._submitArgs(input);
    } catch (err) {
      return Promise.reject(err);
    }
    return this._write({ kind: "submit", submit: args });
  }

  /**
   * `submitMany` (docs/api.md, "Bulk submit"): the items in one transaction,
   * all or nothing; their task refs in item order.
   * @param {SubmitItem[]} items
   * @param {Partial<SubmitInput>} [wired] options every item gets unless it
   *   gives its own (a task context's parent, root and correlation)
   * @returns {Promise<TaskRef[]>}
   */
  submitMany(items, wired = {}) {
    let text;
    try {
      text = encodeSubmitItems(items, wired);
    } catch (err) {
      return Promise.reject(err);
    }
    return this._native.submitMany(text).then(parseRows, raise);
  }

  /**
   * `submitIn` (docs/api.md, "The task and your rows in one transaction"):
   * the submit written by `tx`, the application's own connection, inside its
   * transaction; the task ref. Postgres stores answer a promise, SQLite
   * stores at once (a better-sqlite3 transaction cannot await).
   * @param {unknown} tx
   * @param {SubmitInput} input
   * @returns {TaskRef | Promise<TaskRef>}
   */
  submitIn(tx, input) {
    return this._submitIn(
      tx,
      false,
      () => encodeOptions(this._submitArgs(input)),
      (refs) => refs[0],
    );
  }

  /**
   * `submitMany`'s items written by `tx` inside its transaction.
   * @param {unknown} tx
   * @param {SubmitItem[]} items
   * @returns {TaskRef[] | Promise<TaskRef[]>}
   */
  submitManyIn(tx, items) {
    return this._submitIn(
      tx,
      true,
      () => encodeSubmitItems(items, {}),
      (refs) => refs,
    );
  }

  /**
   * @internal The dialect's `submitIn`: `encode()` gives the submit's options
   * (or the items) as the core reads them, `answer` picks the result.
   * @template R
   * @param {unknown} _tx
   * @param {boolean} _many
   * @param {() => string} _encode
   * @param {(refs: TaskRef[]) => R} _answer
   * @returns {R | Promise<R>}
   */
  // eslint-disable-next-line no-unused-vars -- SQLiteStore and PostgresStore override it
  _submitIn(_tx, _many, _encode, _answer) {
    throw new UnsupportedBackend(
      "this store cannot write through your transaction (submitIn needs a SQLiteStore or a PostgresStore)",
    );
  }

  /**
   * @internal The submit's arguments as the core reads them (submit-args.js),
   * for a child submit too.
   * @param {SubmitInput} input
   */
  _submitArgs(input) {
    return submitArgs(input);
  }

  /**
   * @param {string} taskId
   * @returns {Promise<Task | null>}
   */
  get(taskId) {
    if (!namesTask(taskId)) return NO_TASK;
    return this._pointRead(
      () => this._native.getNow(taskId),
      () => this._native.get(taskId),
    );
  }

  /**
   * @param {string} key
   * @returns {Promise<Task | null>}
   */
  getByKey(key) {
    if (!namesTask(key)) return NO_TASK;
    return this._pointRead(
      () => this._native.getByKeyNow(key),
      () => this._native.getByKey(key),
    );
  }

  // A point read answered inline on a WAL reader costs a fraction of one sent
  // through a reader thread (bench/history/2026-12-04.md). So it is answered
  // inline whenever SQLite can answer without waiting, and otherwise (not
  // connected yet, busy, Postgres) takes the asynchronous path.
  /**
   * @param {() => string | null} now
   * @param {() => Promise<string | null>} later
   * @returns {Promise<Task | null>}
   */
  async _pointRead(now, later) {
    const row = nativeSync(now);
    return parseRow(row === null || row === undefined ? await later().catch(raise) : row);
  }

  /**
   * @param {ListInput} [input]
   * @returns {Promise<Task[]>}
   */
  async list(input = {}) {
    return this._native.list(encodeOptions(input)).then(parseRows, raise);
  }

  /**
   * Also cancels the task's unfinished `ctx.callChild` children, at any
   * depth, unless `opts.children` is false.
   * @param {string} taskId
   * @param {{ children?: boolean }} [opts]
   * @returns {Promise<Task | null>}
   */
  cancel(taskId, opts) {
    if (!namesTask(taskId)) return NO_TASK;
    return this._write({ kind: "cancel", taskId, children: opts?.children });
  }

  /**
   * @param {string} key
   * @param {{ children?: boolean }} [opts]
   * @returns {Promise<Task | null>}
   */
  cancelByKey(key, opts) {
    if (!namesTask(key)) return NO_TASK;
    return this._write({ kind: "cancelByKey", key, children: opts?.children });
  }

  /**
   * @param {string} taskId
   * @param {RetryOptions} [opts]
   * @returns {Promise<Task | null>}
   */
  retry(taskId, opts = {}) {
    if (opts.fromStep !== undefined) return restartFromStep(this, taskId, false, opts);
    if (!namesTask(taskId)) return NO_TASK;
    return this._write({ kind: "retry", taskId, resetAttempt: opts.resetAttempt === true });
  }

  /**
   * @param {string} key
   * @param {RetryOptions} [opts]
   * @returns {Promise<Task | null>}
   */
  retryByKey(key, opts = {}) {
    if (opts.fromStep !== undefined) return restartFromStep(this, key, true, opts);
    if (!namesTask(key)) return NO_TASK;
    return this._write({ kind: "retryByKey", key, resetAttempt: opts.resetAttempt === true });
  }

  /**
   * @param {PurgeInput} [input]
   * @returns {Promise<string[]>}
   */
  purge(input = {}) {
    return this._native.purge(encodeOptions(input)).catch(raise);
  }

  /**
   * How many tasks `purge(input)` would delete now (at most its `limit`),
   * checked as `purge` checks it; deletes nothing.
   * @param {PurgeInput} [input]
   * @returns {Promise<number>}
   */
  purgeCount(input = {}) {
    return this._native.purgeCount(encodeOptions(input)).catch(raise);
  }

  /**
   * Every queue's counts, or only `queue`'s (present even with no rows).
   * @param {string | null} [queue]
   * @returns {Promise<Record<string, Record<TaskStatus, number>>>}
   */
  stats(queue) {
    return this._native.stats(queue).then(parseRows, raise);
  }

  /**
   * The task's id and status only, or null: a cheap probe.
   * @param {string} taskId
   * @returns {Promise<TaskRef | null>}
   */
  getStatus(taskId) {
    if (!namesTask(taskId)) return NO_TASK;
    return /** @type {Promise<TaskRef | null>} */ (this._native.getStatus(taskId).catch(raise));
  }

  /**
   * The id and status of the task `key` points at now, or null.
   * @param {string} key
   * @returns {Promise<TaskRef | null>}
   */
  getStatusByKey(key) {
    if (!namesTask(key)) return NO_TASK;
    return /** @type {Promise<TaskRef | null>} */ (this._native.getStatusByKey(key).catch(raise));
  }

  /**
   * Signals meaning "read again now": a poll every `pollMs` (default
   * DEFAULT_WATCH_POLL_MS), and on Postgres one per notification. A throwing
   * consumer never stops the signals. Returns the unsubscribe function.
   * @param {WatchOptions} opts
   * @param {(signal: WatchSignal) => void} onSignal
   * @returns {() => void}
   */
  watch(opts, onSignal) {
    return watchSignals(this._native, this._notifications, opts, onSignal);
  }

  /**
   * @param {string} queue
   * @param {number} maxDepth
   * @returns {Promise<number>}
   */
  queueDepth(queue, maxDepth) {
    return this._native.queueDepth(queue, maxDepth).catch(raise);
  }

  /**
   * @param {{ queues: string[], workerId: string, leaseMs?: number, limit?: number, names?: string[] | null }} input
   * @returns {Promise<Task[]>}
   */
  claim(input) {
    return this._native.claim(encodeOptions(input)).then(parseRows, raise);
  }

  /**
   * One claim transaction whose draws `plan` makes: the probe (SQLite), lease
   * recovery, then `plan(draw)`, then commit — or roll back if `plan` throws.
   * Resolves with what `plan` returned, or undefined when nothing was claimable.
   * `plan` must await nothing but `draw`: the write lock is held meanwhile.
   * @template T
   * @param {{ queues: string[], workerId: string, leaseMs?: number, names?: string[] | null }} input
   * @param {(draw: Draw) => Promise<T>} plan
   * @returns {Promise<T | undefined>}
   */
  async claimSession(input, plan) {
    const session = nativeSync(() => this._native.openClaimSession(encodeOptions(input)));
    if (!(await session.opened().catch(raise))) return undefined;
    /** @type {Draw} */
    const draw = (names, limit) => session.draw(names, limit).then(parseRows, raise);
    let outcome;
    try {
      outcome = await plan(draw);
    } catch (err) {
      await session.finish(false).catch(() => {});
      throw err;
    }
    await session.finish(true).catch(raise);
    return outcome;
  }

  /**
   * @param {{ taskId: string, workerId: string, leaseMs?: number }} input
   * @returns {Promise<Task>}
   */
  heartbeat(input) {
    return this._write({
      kind: "heartbeat",
      taskId: input.taskId,
      workerId: input.workerId,
      leaseMs: input.leaseMs,
    });
  }

  /**
   * @param {{ taskIds: string[], workerId: string, leaseMs?: number }} input
   * @returns {Promise<Map<string, boolean>>}
   */
  async heartbeatBatch(input) {
    if (input.taskIds.length === 0) return new Map();
    const pairs = await this._native.heartbeatBatch(input.taskIds, input.workerId, input.leaseMs).catch(raise);
    return new Map(pairs);
  }

  /**
   * @param {{ taskId: string, workerId: string, progress?: number | null, message?: string | null }} input
   * @returns {Promise<Task>}
   */
  progress(input) {
    return this._write({
      kind: "progress",
      taskId: input.taskId,
      workerId: input.workerId,
      progress: input.progress,
      message: input.message,
    });
  }

  /**
   * @param {{ taskId: string, workerId: string, result?: unknown }} input
   * @returns {Promise<Task>}
   */
  async succeed(input) {
    const json = dumpOptionalJson(input.result);
    return this._write({ kind: "succeed", taskId: input.taskId, workerId: input.workerId, json });
  }

  /**
   * @param {{ taskId: string, workerId: string, result?: unknown }} input
   * @returns {Promise<Task>}
   */
  async complete(input) {
    const json = dumpOptionalJson(input.result);
    return this._write({ kind: "complete", taskId: input.taskId, workerId: input.workerId, json });
  }

  /**
   * @param {{ taskId: string, workerId: string, error?: Record<string, any> | null, retryable?: boolean, delayMs?: number }} input
   * @returns {Promise<Task>}
   */
  async fail(input) {
    const retryable = input.retryable !== false;
    return this._write({
      kind: "fail",
      taskId: input.taskId,
      workerId: input.workerId,
      json: encodeEnvelope(input.error ?? {}, retryable),
      retryable,
      delayMs: input.delayMs ?? 0,
    });
  }

  /**
   * Run `fn` in a transaction, then settle the task as `complete` with what
   * it returned, in that same transaction: both commit or neither does. A
   * lost lease rolls both back with LostLease; a pending cancel ends the row
   * `canceled` and still commits `fn`'s writes. Postgres only: elsewhere it
   * rejects with UnsupportedBackend. `fn` must be safe to run again.
   * @template S, T
   * @param {{ taskId: string, workerId: string }} owner
   * @param {(session: S) => Promise<T>} fn
   * @returns {Promise<{ task: Task, value: T }>}
   */
  completeIn(owner, fn) {
    const { taskId, workerId } = owner;
    return this._completeIn(fn, (id, resultJson) =>
      this._native
        .sharedTxComplete(id, taskId, workerId, resultJson)
        .then((row) => /** @type {Task} */ (parseRow(row)), raise),
    );
  }

  /**
   * @internal `completeIn` with its settlement given: `settle(transaction id,
   * result JSON)` completes the task in the shared transaction and commits.
   * @template T, R
   * @param {(session: any) => Promise<T>} fn
   * @param {(id: number, resultJson: string | null) => Promise<R>} settle
   * @returns {Promise<{ task: R, value: T }>}
   */
  _completeIn(fn, settle) {
    return inSharedTransaction(this._native, (shared) => this._sessionOf(shared), fn, settle);
  }

  /**
   * @internal The caller's session in a shared transaction on the native
   * connection.
   * @param {{ id: number, session?: number | null }} shared
   * @returns {import("../index.js").PgSession}
   */
  _sessionOf(shared) {
    return nativeSession(this._native, shared);
  }

  /**
   * @internal Poll until terminal (docs/api.md, "Waits and call"); used by
   * CairnQ.wait/call.
   * @param {string} taskId
   * @param {WaitOptions} opts
   * @returns {Promise<Task>}
   */
  _wait(taskId, opts) {
    return waitForTask(this._native, taskId, false, opts);
  }

  /**
   * @internal
   * @param {string} key
   * @param {WaitOptions} opts
   * @returns {Promise<Task>}
   */
  _waitByKey(key, opts) {
    return waitForTask(this._native, key, true, opts);
  }
}

module.exports = { TaskStore, DEFAULT_WATCH_POLL_MS };
