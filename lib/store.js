"use strict";
// Stores (API.md §7): JS faces over the Rust store. Every method encodes its
// JSON values here (JSON.stringify semantics belong to JS), then hands off to
// Rust, which runs the statement off the event loop and returns the row as
// JSON text.

const { NativeStore } = require("./native.js");
const { fromNative, raise } = require("./errors.js");
const { dumpJson, dumpOptionalJson, encodeEnvelope, parseRow } = require("./json.js");

const parseRows = (text) => JSON.parse(text);

function sleep(ms, keepAlive) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, Math.max(0, ms));
    if (!keepAlive) timer.unref?.();
  });
}

/** Call a synchronous native method, mapping its error onto our classes. */
function nativeSync(fn) {
  try {
    return fn();
  } catch (err) {
    throw fromNative(err);
  }
}

class TaskStore {
  /** @param {import("../binding.js").NativeStore} native */
  constructor(native) {
    if (new.target === TaskStore) {
      throw new TypeError("TaskStore is abstract: use SQLiteStore or PostgresStore");
    }
    this._native = native;
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

  /** Settles when work may be claimable on `queues`; never keeps the process alive. */
  claimWake(_queues, timeoutMs) {
    return sleep(timeoutMs, false);
  }

  /** Settles when `taskId` may have finished; keeps the process alive like any wait. */
  taskDoneWake(_taskId, timeoutMs) {
    return sleep(timeoutMs, true);
  }

  useBackpressure(opts) {
    nativeSync(() => this._native.useBackpressure(backpressureArgs(opts)));
  }

  // async: an encoding failure must reject the returned promise, not throw synchronously.
  async submit(input) {
    const args = {
      name: input.name,
      payload: dumpJson(input.payload ?? {}),
      metadata: dumpJson(input.metadata ?? {}),
      // null means "use the default" like undefined (API.md §2.4); the native
      // layer only accepts undefined for an absent value.
      queue: input.queue ?? undefined,
      key: input.key ?? undefined,
      conflict: input.conflict ?? undefined,
      maxAttempts: input.maxAttempts ?? undefined,
      priority: input.priority ?? undefined,
      parentId: input.parentId ?? undefined,
      rootId: input.rootId ?? undefined,
      correlationId: input.correlationId ?? undefined,
      runAtDelayMs: input.runAtDelayMs ?? undefined,
    };
    return this._native.submit(args).then(parseRow, raise);
  }

  get(taskId) {
    return this._pointRead(() => this._native.getNow(taskId), () => this._native.get(taskId));
  }

  getByKey(key) {
    return this._pointRead(() => this._native.getByKeyNow(key), () => this._native.getByKey(key));
  }

  // A point read answered inline on a WAL reader costs ~7 µs; through a reader
  // thread, 25–130 µs on the development machine (bench/client.mjs). So it is
  // answered inline whenever SQLite can answer without waiting, and otherwise
  // (not connected yet, busy, Postgres) takes the asynchronous path.
  async _pointRead(now, later) {
    let row;
    try {
      row = now();
    } catch (err) {
      throw fromNative(err);
    }
    return parseRow(row === null || row === undefined ? await later().catch(raise) : row);
  }

  async list(input = {}) {
    // null filters mean "no filter" (API.md §2.4).
    const args = {
      status: input.status ?? undefined,
      queue: input.queue ?? undefined,
      name: input.name ?? undefined,
      rootId: input.rootId ?? undefined,
      correlationId: input.correlationId ?? undefined,
      limit: input.limit ?? undefined,
      offset: input.offset ?? undefined,
    };
    return this._native.list(args).then(parseRows, raise);
  }

  cancel(taskId) {
    return this._native.cancel(taskId).then(parseRow, raise);
  }

  cancelByKey(key) {
    return this._native.cancelByKey(key).then(parseRow, raise);
  }

  retry(taskId, opts = {}) {
    return this._native.retry(taskId, opts.resetAttempt === true).then(parseRow, raise);
  }

  retryByKey(key, opts = {}) {
    return this._native.retryByKey(key, opts.resetAttempt === true).then(parseRow, raise);
  }

  purge(input = {}) {
    return this._native.purge(input.olderThanMs, input.limit).catch(raise);
  }

  stats() {
    return this._native.stats().then(parseRows, raise);
  }

  queueDepth(queue, maxDepth) {
    return this._native.queueDepth(queue, maxDepth).catch(raise);
  }

  claim(input) {
    return this._native
      .claim({
        queues: input.queues,
        workerId: input.workerId,
        leaseMs: input.leaseMs ?? undefined,
        limit: input.limit ?? undefined,
        names: input.names ?? undefined,
      })
      .then(parseRows, raise);
  }

  /**
   * One claim transaction whose draws `plan` makes: the probe (SQLite), lease
   * recovery, then `plan(draw)`, then commit — or roll back if `plan` throws.
   * Resolves with what `plan` returned, or undefined when nothing was claimable.
   * `plan` must await nothing but `draw`: the write lock is held meanwhile.
   */
  async claimSession(input, plan) {
    const session = this._native.openClaimSession({
      queues: input.queues,
      workerId: input.workerId,
      leaseMs: input.leaseMs ?? undefined,
      names: input.names ?? undefined,
    });
    if (!(await session.opened().catch(raise))) return undefined;
    const draw = (names, limit) => session.draw(names ?? undefined, limit).then(parseRows, raise);
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

  heartbeat(input) {
    return this._native.heartbeat(input.taskId, input.workerId, input.leaseMs).then(parseRow, raise);
  }

  async heartbeatBatch(input) {
    if (input.taskIds.length === 0) return new Map();
    const pairs = await this._native
      .heartbeatBatch(input.taskIds, input.workerId, input.leaseMs)
      .catch(raise);
    return new Map(pairs);
  }

  progress(input) {
    return this._native
      .progress(input.taskId, input.workerId, input.progress ?? null, input.message ?? null)
      .then(parseRow, raise);
  }

  async succeed(input) {
    const result = dumpOptionalJson(input.result);
    return this._native.succeed(input.taskId, input.workerId, result).then(parseRow, raise);
  }

  async complete(input) {
    const result = dumpOptionalJson(input.result);
    return this._native.complete(input.taskId, input.workerId, result).then(parseRow, raise);
  }

  async fail(input) {
    const retryable = input.retryable !== false;
    const envelope = encodeEnvelope(input.error ?? {}, retryable);
    return this._native
      .fail(input.taskId, input.workerId, envelope, retryable, input.delayMs ?? 0)
      .then(parseRow, raise);
  }

  /** @internal Poll until terminal (API.md §6); used by CairnQ.wait/call. */
  _wait(taskId, timeoutMs, pollMs) {
    return this._native.wait(taskId, timeoutMs, pollMs).then(parseRow, raise);
  }

  /** @internal */
  _waitByKey(key, timeoutMs, pollMs) {
    return this._native.waitByKey(key, timeoutMs, pollMs).then(parseRow, raise);
  }
}

function backpressureArgs(opts) {
  return {
    maxQueueDepth: opts.maxQueueDepth,
    maxQueueWaitMs: opts.maxQueueWaitMs,
    queuePollIntervalMs: opts.queuePollIntervalMs,
  };
}

class SQLiteStore extends TaskStore {
  constructor(path, opts = {}) {
    super(NativeStore.sqlite(path, opts.busyTimeoutMs));
    this.path = path;
  }
}

class PostgresStore extends TaskStore {
  constructor(dsn, opts = {}) {
    super(nativeSync(() => NativeStore.postgres(dsn, opts.max ?? undefined)));
  }

  claimWake(queues, timeoutMs) {
    return this._native.claimWake(queues, timeoutMs).catch(raise);
  }

  taskDoneWake(taskId, timeoutMs) {
    return this._native.taskDoneWake(taskId, timeoutMs).catch(raise);
  }
}

module.exports = { TaskStore, SQLiteStore, PostgresStore, backpressureArgs, nativeSync };
