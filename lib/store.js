"use strict";
// Stores (API.md §7): JS faces over the Rust store. Every method encodes its
// JSON values here (JSON.stringify semantics belong to JS), then hands off to
// Rust, which runs the statement off the event loop and returns the row as
// JSON text.

const { NativeStore } = require("./native.js");
const { CairnQError, SerializationError, fromNative, raise } = require("./errors.js");
const { dumpJson, dumpOptionalJson, parseRow } = require("./json.js");

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

  submit(input) {
    const args = {
      name: input.name,
      payload: dumpJson(input.payload ?? {}),
      metadata: dumpJson(input.metadata ?? {}),
      queue: input.queue,
      key: input.key,
      conflict: input.conflict,
      maxAttempts: input.maxAttempts,
      priority: input.priority,
      parentId: input.parentId,
      rootId: input.rootId,
      correlationId: input.correlationId,
      runAtDelayMs: input.runAtDelayMs,
    };
    return this._native.submit(args).then(parseRow, raise);
  }

  get(taskId) {
    return this._native.get(taskId).then(parseRow, raise);
  }

  getByKey(key) {
    return this._native.getByKey(key).then(parseRow, raise);
  }

  list(input = {}) {
    return this._native.list(input).then(parseRows, raise);
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
        leaseMs: input.leaseMs,
        limit: input.limit,
        names: input.names,
      })
      .then(parseRows, raise);
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

  succeed(input) {
    const result = dumpOptionalJson(input.result);
    return this._native.succeed(input.taskId, input.workerId, result).then(parseRow, raise);
  }

  complete(input) {
    const result = dumpOptionalJson(input.result);
    return this._native.complete(input.taskId, input.workerId, result).then(parseRow, raise);
  }

  fail(input) {
    const retryable = input.retryable !== false;
    const error = input.error ?? {};
    let envelope;
    try {
      envelope = dumpJson(error);
    } catch (err) {
      if (!(err instanceof SerializationError)) throw err;
      // A failure record must never fail to record: keep what can be kept.
      envelope = JSON.stringify({
        type: String(error.type ?? "TaskError"),
        code: String(error.code ?? "task_error"),
        message: String(error.message ?? ""),
        retryable,
        details: {},
      });
    }
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
    if (typeof NativeStore.postgres !== "function") {
      throw new CairnQError("PostgresStore is not available yet in this build of cairnq");
    }
    super(nativeSync(() => NativeStore.postgres(dsn, opts.max)));
  }

  claimWake(queues, timeoutMs) {
    return this._native.claimWake(queues, timeoutMs).catch(raise);
  }

  taskDoneWake(taskId, timeoutMs) {
    return this._native.taskDoneWake(taskId, timeoutMs).catch(raise);
  }
}

module.exports = { TaskStore, SQLiteStore, PostgresStore, backpressureArgs, nativeSync };
