"use strict";
// Worker (API.md §10–§11): registrations and lifecycle in JS, everything that
// must keep running while a handler blocks the event loop — claims, lease
// heartbeats, maxRunMs, retries, settlement — in Rust.

const { NativeWorker } = require("./native.js");
const { LostLease, TaskError, errorEnvelope, exceptionEnvelope, fromNative, raise } = require("./errors.js");
const { dumpJson, encodeEnvelope } = require("./json.js");
const { taskName } = require("./models.js");
const { SQLiteStore, PostgresStore, backpressureArgs, nativeSync } = require("./store.js");
const { TaskContext, NATIVE } = require("./context.js");

const SIGNALS = ["SIGINT", "SIGTERM"];

/** The outcome of a handler whose failure could not even be described. */
const UNREPORTABLE = {
  kind: "threw",
  envelope: JSON.stringify(
    errorEnvelope({ type: "Error", code: "handler_error", message: "the handler failed", retryable: true }),
  ),
  retryable: true,
};

class Worker {
  constructor(store, queues, opts = {}) {
    this._store = store;
    this._ownsStore = false;
    this._leaseMs = opts.leaseMs ?? 30_000;
    this._backoff = { retryBackoffMs: opts.retryBackoffMs, retryBackoffMaxMs: opts.retryBackoffMaxMs };
    /** name → {fn, batch} */
    this._handlers = new Map();
    /** call id → its TaskContexts, for the calls now running */
    this._running = new Map();
    /** Single-task calls that returned this tick: ids and result JSON. */
    this._returnedIds = [];
    this._returnedResults = [];
    const onError = opts.onError;
    const report = onError
      ? ({ reason, phase, taskId }) => {
          try {
            onError(fromNative(reason), taskId == null ? { phase } : { phase, taskId });
          } catch {}
        }
      : undefined;
    this._native = nativeSync(
      () =>
        new NativeWorker(
          store._native,
          queues,
          workerArgs(opts),
          (calls) => this._dispatch(calls),
          () => undefined,
          ({ call, index }) => this._running.get(call)?.[index]?._syncAbort(),
          report,
        ),
    );
    this._id = this._native.id;
  }

  static sqlite(path, opts = {}) {
    const { queues = ["default"], busyTimeoutMs, ...rest } = opts;
    return owned(new Worker(new SQLiteStore(path, { busyTimeoutMs }), queues, rest));
  }

  static postgres(dsn, opts = {}) {
    const { queues = ["default"], max, ...rest } = opts;
    return owned(new Worker(new PostgresStore(dsn, { max }), queues, rest));
  }

  get id() {
    return this._id;
  }

  /** Register a handler: task(fn) | task(name, fn) | task(name, options, fn). */
  task(nameOrFn, optsOrFn, maybeFn) {
    let name;
    let opts = {};
    let fn;
    if (typeof nameOrFn === "function") {
      fn = nameOrFn;
      name = fn.name.replace(/^(bound )+/, "");
      if (!name) {
        throw new Error(
          "worker.task(fn): the handler is anonymous; pass a name explicitly, e.g. worker.task('summary.create', fn)",
        );
      }
    } else if (typeof optsOrFn === "function") {
      name = taskName(nameOrFn);
      fn = optsOrFn;
    } else {
      name = taskName(nameOrFn);
      opts = optsOrFn ?? {};
      fn = maybeFn;
    }
    // API.md §10.3: any value that is not an integer >= 1 gets the message,
    // not only numbers (a string would otherwise fail the native conversion).
    for (const option of ["batch", "concurrency"]) {
      const value = opts[option];
      if (value != null && !(Number.isInteger(value) && value >= 1)) {
        throw new Error(`${option} must be an integer >= 1, got ${String(value)}`);
      }
    }
    nativeSync(() =>
      this._native.register(name, {
        batch: opts.batch ?? undefined,
        concurrency: opts.concurrency ?? undefined,
        resource: opts.resource ?? undefined,
      }),
    );
    this._handlers.set(name, { fn, batch: opts.batch != null });
    return this;
  }

  /** Poll until stop(), then wait for every call in flight. */
  run(opts = {}) {
    return this._native.run(opts.concurrency ?? undefined).catch(raise);
  }

  /** Stop polling now; handlers in flight finish. Irreversible. */
  stop() {
    this._native.stop();
  }

  /** run() until SIGINT/SIGTERM; closes the store if the worker created it. */
  async serve(opts = {}) {
    const onSignal = () => {
      for (const signal of SIGNALS) process.removeListener(signal, onSignal);
      this.stop();
    };
    for (const signal of SIGNALS) process.on(signal, onSignal);
    try {
      await this.run(opts);
    } finally {
      for (const signal of SIGNALS) process.removeListener(signal, onSignal);
      if (this._ownsStore) await this._store.close();
    }
  }

  /** Run the worker while `fn` runs; stop, drain and (if owned) close after. */
  async background(fn, opts = {}) {
    const running = this.run(opts);
    let outcome;
    try {
      outcome = await fn();
    } finally {
      this.stop();
      try {
        await running;
      } finally {
        if (this._ownsStore) await this._store.close();
      }
    }
    return outcome;
  }

  /** Close the store, owned or not. Call after run() settled. */
  close() {
    return this._store.close();
  }

  /** Called from Rust with the calls of one poll, as one JSON text. */
  _dispatch(text) {
    for (const call of JSON.parse(text)) this._start(call);
  }

  /** Run one call's handler; its end is reported through _settle/_returned. */
  _start(call) {
    const rows = call.tasks;
    const contexts = rows.map(
      (row, index) =>
        new TaskContext(this._store, row, this.id, this._leaseMs, {
          ...this._backoff,
          [NATIVE]: () => this._native.context(call.id, index),
        }),
    );
    this._running.set(call.id, contexts);
    let value;
    try {
      const { fn } = this._handlers.get(call.name);
      value = call.batch ? fn(contexts) : fn(contexts[0], rows[0].payload);
    } catch (thrown) {
      this._settle(call, outcomeOfThrow(thrown));
      return;
    }
    if (value !== null && typeof value?.then === "function") {
      Promise.resolve(value).then(
        (resolved) => this._returned(call, resolved),
        (thrown) => this._settle(call, outcomeOfThrow(thrown)),
      );
    } else {
      this._returned(call, value);
    }
  }

  /**
   * A handler returned. Plain single-task results are gathered over the tick
   * and handed to Rust in one call; anything else settles on its own.
   */
  _returned(call, value) {
    const results = resultsOf(value, call.tasks, call.batch);
    if (call.batch || results[0].unserializable !== undefined) {
      this._settle(call, { kind: "returned", results });
      return;
    }
    this._running.delete(call.id);
    if (this._returnedIds.push(call.id) === 1) process.nextTick(() => this._flushReturned());
    this._returnedResults.push(results[0].json ?? null);
  }

  _flushReturned() {
    const ids = this._returnedIds;
    const results = this._returnedResults;
    this._returnedIds = [];
    this._returnedResults = [];
    this._startNext(this._native.settleReturned(ids, results));
  }

  _settle(call, outcome) {
    this._running.delete(call.id);
    let next;
    try {
      next = this._native.settle(call.id, outcome);
    } catch {
      next = this._native.settle(call.id, UNREPORTABLE);
    }
    this._startNext(next);
  }

  /** Start the calls a settlement freed slots for, in the same tick. */
  _startNext(next) {
    if (next != null) this._dispatch(next);
  }
}

function owned(worker) {
  worker._ownsStore = true;
  return worker;
}

function workerArgs(opts) {
  return {
    concurrency: opts.concurrency ?? undefined,
    leaseMs: opts.leaseMs ?? undefined,
    heartbeatIntervalMs: opts.heartbeatIntervalMs ?? undefined,
    pollIntervalMs: opts.pollIntervalMs ?? undefined,
    claimBatch: opts.claimBatch ?? undefined,
    retryBackoffMs: opts.retryBackoffMs ?? undefined,
    retryBackoffMaxMs: opts.retryBackoffMaxMs ?? undefined,
    maxRunMs: opts.maxRunMs ?? undefined,
    maxInFlightBytes: opts.maxInFlightBytes ?? undefined,
    resources: opts.resources ? Object.entries(opts.resources) : undefined,
    backpressure: opts.maxQueueDepth != null ? backpressureArgs(opts) : undefined,
  };
}

/** One encoded result per task: a single return, or a batch's id → result map. */
function resultsOf(value, rows, batch) {
  if (!batch) return [encodeResult(value)];
  const byId = value !== null && typeof value === "object" ? value : {};
  return rows.map((row) => encodeResult(byId[row.id]));
}

function encodeResult(value) {
  if (value == null) return {};
  try {
    return { json: dumpJson(value) };
  } catch (err) {
    return { unserializable: String(err?.message ?? err) };
  }
}

/** API.md §4.1, "classifying a thrown value". */
function outcomeOfThrow(thrown) {
  if (thrown instanceof LostLease) return { kind: "lostLease" };
  let envelope;
  let retryable = true;
  if (thrown instanceof TaskError) {
    envelope = thrown.envelope();
    retryable = thrown.retryable;
  } else if (thrown !== null && typeof thrown === "object") {
    envelope = exceptionEnvelope(thrown, true);
  } else {
    envelope = errorEnvelope({ type: "TaskError", code: "task_error", message: String(thrown), retryable: true });
  }
  return { kind: "threw", envelope: encodeEnvelope(envelope, retryable), retryable };
}

module.exports = { Worker };
