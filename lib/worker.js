"use strict";
// Worker (docs/api.md, "Registrations" to "TaskContext"): registrations and
// lifecycle in JS, everything that must keep running while a handler blocks the
// event loop — claims, lease heartbeats, time limits, cancel and shutdown
// aborts, retries, settlement — in Rust.

const { NativeWorker } = require("./native.js");
const { LostLease, TaskError, errorEnvelope, exceptionEnvelope, fromNative } = require("./errors.js");
const { nativeSync, raise } = require("./native-call.js");
const { dumpJson, encodeEnvelope, encodeOptions } = require("./json.js");
const { taskName } = require("./models.js");
const { SQLiteStore } = require("./sqlite-store.js");
const { PostgresStore } = require("./postgres-store.js");
const { replacedMethods } = require("./own-store.js");
const { TaskContext, NATIVE, SUSPENDED, RUNNING, BACKOFF } = require("./context.js");
const { backoffTagged } = require("./retry.js");
const { childStepOf } = require("./steps.js");
const { activeTracer, startProcess, runInSpan, endProcess } = require("./telemetry/trace.js");
const { activeInstruments, startMetered, endMetered } = require("./telemetry/meter.js");

/**
 * @typedef {import("../index.js").Task} Task
 * @typedef {import("../index.js").TaskDef} TaskDef
 * @typedef {import("../index.js").WorkerOptions} WorkerOptions
 * @typedef {import("../index.js").BackpressureOptions} BackpressureOptions
 * @typedef {import("../binding.js").OutcomeArg} OutcomeArg
 * @typedef {{ kind: "returned" | "threw" | "lostLease" | "suspended" | "childFailed", results?: ResultArg[], envelope?: string, retryable?: boolean, backoffMs?: (number | null)[], stepId?: string }} Outcome
 *   how a handler ended, as NativeWorker.settle takes it (an OutcomeArg)
 * @typedef {import("../binding.js").ResultArg} ResultArg
 * @typedef {import("../binding.js").ErrorArg} ErrorArg
 * @typedef {import("../binding.js").ContextArg} ContextArg
 * @typedef {import("./store.js").TaskStore} TaskStore
 * @typedef {{ concurrency?: number }} RunOptions
 * @typedef {RunOptions & { shutdownTimeoutMs?: number }} ServeOptions
 * @typedef {import("../index.js").StopOptions} StopOptions
 * @typedef {(...args: any[]) => unknown} HandlerFn a handler: `(ctx, payload)`, or `(contexts)` for a batch
 * @typedef {import("../index.js").BackoffFunction} BackoffFunction
 * @typedef {{ fn: HandlerFn, batch: boolean, backoff: BackoffFunction | null }} Registration
 * @typedef {import("../index.js").RateLimit} RateLimit
 * @typedef {{ batch?: number, concurrency?: number, resource?: string, rateLimit?: RateLimit | null, groupConcurrency?: number | null, timeoutMs?: number | null, retry?: import("../index.js").RegistrationRetryPolicy | null, deadLetter?: string | null, [option: string]: unknown }} TaskOptions
 * @typedef {import("./context.js").TaskFields} TaskFields
 * @typedef {{ id: number, name: string, batch: boolean, tasks: TaskFields[], traced?: Traced, metered?: Metered }} Call
 *   one handler call, as Rust dispatches it: of each task, what its context reads (`traced`: its consumer span,
 *   when tracing; `metered`: its OpenTelemetry measurement, when a meter provider is registered)
 * @typedef {import("./telemetry/trace.js").Traced} Traced
 * @typedef {import("./telemetry/meter.js").Metered} Metered
 * @typedef {import("./telemetry/meter.js").Instruments} Instruments
 * @typedef {import("@opentelemetry/api").Tracer} Tracer
 */

const SIGNALS = ["SIGINT", "SIGTERM"];

/** The `code` of the warning a worker emits once when its declared limits replace another worker's (docs/api.md, "Flow control"). */
const FLOW_NOTICE_CODE = "CAIRNQ_FLOW_LIMITS_REPLACED";

/**
 * The outcome of a handler whose failure could not even be described.
 * @type {Outcome}
 */
const UNREPORTABLE = {
  kind: "threw",
  envelope: JSON.stringify(
    errorEnvelope({ type: "Error", code: "handler_error", message: "the handler failed", retryable: true }),
  ),
  retryable: true,
};

class Worker {
  /**
   * @param {TaskStore} store
   * @param {string[]} queues
   * @param {WorkerOptions} [opts]
   */
  constructor(store, queues, opts = {}) {
    const replaced = replacedMethods(store);
    if (replaced === null || replaced.length > 0) {
      // The worker's claims, heartbeats and settlements run in Rust, on the
      // native store: JS methods of another store would never be called.
      const what =
        replaced === null
          ? "an object that is not one"
          : `one whose ${replaced.join(", ")} ${replaced.length === 1 ? "is" : "are"} replaced`;
      throw new TypeError(
        `Worker needs a SQLiteStore or PostgresStore of this package with its own methods (the native worker calls the store natively, never a JS method), got ${what}`,
      );
    }
    this._store = store;
    this._ownsStore = false;
    /**
     * name → {fn, batch}
     * @type {Map<string, Registration>}
     */
    this._handlers = new Map();
    /**
     * call id → its TaskContexts, for the calls now running
     * @type {Map<number, TaskContext[]>}
     */
    this._running = new Map();
    /**
     * Calls that returned this tick: ids, result counts and result JSON.
     * @type {number[]}
     */
    this._returnedIds = [];
    /** @type {number[]} how many results each of those calls has */
    this._returnedCounts = [];
    /** @type {(string | null)[]} */
    this._returnedResults = [];
    const onError = opts.onError;
    const report = onError
      ? /** @param {ErrorArg} arg */ ({ reason, phase: p, taskId }) => {
          const phase = /** @type {"claim" | "execute"} */ (p);
          try {
            onError(fromNative(reason), taskId == null ? { phase } : { phase, taskId });
          } catch {
            // The hook must never take the worker down with it: its throws are swallowed.
          }
        }
      : undefined;
    /** @param {string} calls */
    const dispatch = (calls) => this._dispatch(calls);
    /** @param {ContextArg} aborted */
    const abortContext = ({ call, index }) => this._running.get(call)?.[index]?._syncAbort();
    this._native = nativeSync(
      () =>
        new NativeWorker(
          store._native,
          queues,
          encodeOptions(opts),
          dispatch,
          answerPing,
          abortContext,
          report,
          warnFlowLimitsReplaced,
        ),
    );
    this._id = this._native.id;
  }

  /**
   * @param {string} path
   * @param {WorkerOptions & { queues?: string[], busyTimeoutMs?: number, propagateBaggage?: boolean }} [opts]
   */
  static sqlite(path, opts = {}) {
    const { queues = ["default"], busyTimeoutMs, propagateBaggage, ...rest } = opts;
    return owningItsStore(new Worker(new SQLiteStore(path, { busyTimeoutMs, propagateBaggage }), queues, rest));
  }

  /**
   * @param {string | import("../index.js").PgExecutor} source a DSN, or the application's executor
   * @param {WorkerOptions & { queues?: string[], max?: number, schema?: string, propagateBaggage?: boolean }} [opts]
   */
  static postgres(source, opts = {}) {
    const { queues = ["default"], max, schema, propagateBaggage, ...rest } = opts;
    return owningItsStore(new Worker(new PostgresStore(source, { max, schema, propagateBaggage }), queues, rest));
  }

  /** This worker's id, the `worker_id` on the tasks it holds. */
  get workerId() {
    return this._id;
  }

  /** 0.7.0's name for `workerId`, kept so 0.7.0 code runs unchanged. */
  get id() {
    return this._id;
  }

  /**
   * Register a handler: task(fn) | task(name, fn) | task(name, options, fn).
   * @param {string | TaskDef | HandlerFn} nameOrFn
   * @param {TaskOptions | HandlerFn | null} [optsOrFn]
   * @param {HandlerFn} [maybeFn]
   * @returns {this}
   */
  task(nameOrFn, optsOrFn, maybeFn) {
    /** @type {string} */
    let name;
    /** @type {TaskOptions} */
    let opts = {};
    /** @type {HandlerFn | undefined} */
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
    nativeSync(() => this._native.register(name, encodeOptions(backoffTagged(opts))));
    const backoff = opts.retry?.backoff;
    // A missing fn is not refused here: each call of it fails as a handler that threw.
    this._handlers.set(name, {
      fn: /** @type {HandlerFn} */ (fn),
      batch: opts.batch != null,
      backoff: typeof backoff === "function" ? backoff : null,
    });
    return this;
  }

  /**
   * Poll until stop(), then wait for every call in flight.
   * @param {RunOptions} [opts]
   * @returns {Promise<void>}
   */
  run(opts = {}) {
    return this._native.run(opts.concurrency).catch(raise);
  }

  /**
   * Stop polling now; handlers in flight finish, or with `timeoutMs` are
   * aborted at that deadline and their tasks handed back. Irreversible.
   * @param {StopOptions} [opts]
   */
  stop(opts = {}) {
    nativeSync(() => this._native.stop(encodeOptions(opts)));
  }

  /**
   * run() until SIGINT/SIGTERM; closes the store if the worker created it.
   * With `shutdownTimeoutMs`, every stop without its own `timeoutMs` has that deadline.
   * @param {ServeOptions} [opts]
   */
  async serve(opts = {}) {
    const { shutdownTimeoutMs, ...runOpts } = opts;
    nativeSync(() => this._native.setShutdownTimeout(encodeOptions({ shutdownTimeoutMs })));
    const onSignal = () => {
      for (const signal of SIGNALS) process.removeListener(signal, onSignal);
      this.stop();
    };
    for (const signal of SIGNALS) process.on(signal, onSignal);
    try {
      await this.run(runOpts);
    } finally {
      for (const signal of SIGNALS) process.removeListener(signal, onSignal);
      if (this._ownsStore) await this._store.close();
    }
  }

  /**
   * Run the worker while `fn` runs; stop, drain and (if owned) close after.
   * @template T
   * @param {() => T | Promise<T>} fn
   * @param {RunOptions} [opts]
   * @returns {Promise<T>}
   */
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

  /**
   * Close the store, owned or not. Call after run() settled.
   * @returns {Promise<void>}
   */
  close() {
    return this._store.close();
  }

  /**
   * Called from Rust with the calls of one poll, as one JSON text.
   * @param {string} text
   */
  _dispatch(text) {
    const tracer = activeTracer();
    const instruments = activeInstruments();
    for (const call of /** @type {Call[]} */ (JSON.parse(text))) this._start(call, tracer, instruments);
  }

  /**
   * Run one call's handler (inside its consumer span when tracing); its end is
   * reported through _settle/_returned.
   * @param {Call} call
   * @param {Tracer | null} tracer
   * @param {Instruments | null} instruments
   */
  _start(call, tracer, instruments) {
    const rows = call.tasks;
    // Rust dispatches only registered names.
    const { fn, backoff } = /** @type {Registration} */ (this._handlers.get(call.name));
    const contexts = rows.map(
      (row, index) =>
        // The native half carries the lease and backoff settings.
        new TaskContext(this._store, row, this.id, undefined, {
          [NATIVE]: () => this._native.context(call.id, index),
          [SUSPENDED]: () => this._suspended(call),
          [RUNNING]: () => this._running.has(call.id),
          [BACKOFF]: row.backoff_fn ? backoff : null,
        }),
    );
    this._running.set(call.id, contexts);
    if (instruments !== null) call.metered = startMetered(instruments, call.name, rows);
    /** @type {any} whatever the handler returned */
    let value;
    try {
      if (tracer === null) {
        value = callHandler(fn, call, contexts);
      } else {
        call.traced = startProcess(tracer, call.name, call.batch, rows);
        value = runInSpan(call.traced, callHandler, fn, call, contexts);
      }
    } catch (thrown) {
      this._settle(call, outcomeOfThrow(thrown), thrown);
      return;
    }
    if (value !== null && typeof value?.then === "function") {
      Promise.resolve(value).then(
        (resolved) => this._returned(call, resolved),
        (thrown) => this._settle(call, outcomeOfThrow(thrown), thrown),
      );
    } else {
      this._returned(call, value);
    }
  }

  /**
   * A handler returned. Results that encode are gathered over the tick and
   * handed to Rust in one call (each call's tasks' results in order); a call
   * with a result that does not encode settles on its own.
   * @param {Call} call
   * @param {unknown} value
   */
  _returned(call, value) {
    // A handler stopped by a suspension settles no more (it cannot, unless it
    // went on without awaiting its step).
    if (!this._running.has(call.id)) return;
    const results = resultsOf(value, call.tasks, call.batch);
    const unserializable = results.find((r) => r.unserializable !== undefined);
    if (unserializable) {
      this._settle(call, { kind: "returned", results }, unserializable.unserializable);
      return;
    }
    if (call.traced) endProcess(call.traced, "succeeded");
    if (call.metered) endMetered(call.metered, "succeeded");
    this._running.delete(call.id);
    if (this._returnedIds.push(call.id) === 1) process.nextTick(() => this._flushReturned());
    this._returnedCounts.push(results.length);
    for (const result of results) this._returnedResults.push(result.json ?? null);
  }

  _flushReturned() {
    const ids = this._returnedIds;
    const counts = this._returnedCounts;
    const results = this._returnedResults;
    this._returnedIds = [];
    this._returnedCounts = [];
    this._returnedResults = [];
    this._startNext(this._native.settleReturned(ids, counts, results));
  }

  /**
   * @param {Call} call
   * @param {Outcome} outcome
   * @param {unknown} [thrown] what the handler threw (or why its result could not be stored)
   */
  _settle(call, outcome, thrown) {
    const contexts = this._running.get(call.id);
    if (contexts === undefined) return;
    if (outcome.kind === "threw" && contexts.some((context) => context._backoff !== null)) {
      const retryable = /** @type {boolean} */ (outcome.retryable);
      const backoffMs = contexts.map((context) => (context.settled ? null : context._backoffMs(thrown, retryable)));
      outcome = { ...outcome, backoffMs };
    }
    const ended = outcome.kind === "lostLease" ? "lost_lease" : "failed";
    if (call.traced) endProcess(call.traced, ended, thrown);
    if (call.metered) endMetered(call.metered, ended, thrown);
    this._running.delete(call.id);
    let next;
    // The casts: binding.d.ts may declare the kinds as a const enum, which JS cannot name.
    try {
      next = this._native.settle(call.id, /** @type {OutcomeArg} */ (outcome));
    } catch {
      next = this._native.settle(call.id, /** @type {OutcomeArg} */ (UNREPORTABLE));
    }
    this._startNext(next);
  }

  /**
   * A step sent the call's task back to the queue (docs/api.md, "Durable
   * steps"): the call ends now, its slot free, though its handler never returns.
   * @param {Call} call
   */
  _suspended(call) {
    if (!this._running.delete(call.id)) return;
    if (call.traced) endProcess(call.traced, "suspended");
    if (call.metered) endMetered(call.metered, "suspended");
    this._startNext(this._native.settle(call.id, /** @type {OutcomeArg} */ ({ kind: "suspended" })));
  }

  /**
   * Start the calls a settlement freed slots for, in the same tick.
   * @param {string | null} next
   */
  _startNext(next) {
    if (next != null) this._dispatch(next);
  }
}

/**
 * Call a handler the way its registration asks: `(contexts)` for a batch,
 * else `(context, payload)`.
 * @param {HandlerFn} fn
 * @param {Call} call
 * @param {TaskContext[]} contexts
 */
function callHandler(fn, call, contexts) {
  return call.batch ? fn(contexts) : fn(contexts[0], call.tasks[0].payload);
}

/**
 * `worker`, marked as owning its store (made by Worker.sqlite/postgres):
 * serve() and background() close the store when they end.
 * @param {Worker} worker
 * @returns {Worker}
 */
function owningItsStore(worker) {
  worker._ownsStore = true;
  return worker;
}

/**
 * The heartbeat's ping: the core measures how late the JS thread runs it
 * (EventLoopBlocked); running at all is the answer.
 */
function answerPing() {}

/**
 * The notice the core gives once when this worker's declared limits replace
 * another worker's (docs/api.md, "Flow control"): a process warning.
 * @param {string} message
 */
function warnFlowLimitsReplaced(message) {
  process.emitWarning(message, { code: FLOW_NOTICE_CODE });
}

/**
 * One encoded result per task: a single return, or a batch's id → result map.
 * @param {unknown} value
 * @param {TaskFields[]} rows
 * @param {boolean} batch
 * @returns {ResultArg[]}
 */
function resultsOf(value, rows, batch) {
  if (!batch) return [encodeResult(value)];
  const byId = /** @type {Record<string, unknown>} */ (value !== null && typeof value === "object" ? value : {});
  return rows.map((row) => encodeResult(byId[row.id]));
}

/** @type {ResultArg} */
const NO_RESULT = Object.freeze({});

/**
 * @param {unknown} value
 * @returns {ResultArg}
 */
function encodeResult(value) {
  if (value == null) return NO_RESULT;
  try {
    return { json: dumpJson(value) };
  } catch (err) {
    return { unserializable: String(/** @type {any} */ (err)?.message ?? err) };
  }
}

/**
 * docs/api.md, "Errors": classifying a thrown value (and "Durable steps":
 * a child failure thrown on).
 * @param {unknown} thrown
 * @returns {Outcome}
 */
function outcomeOfThrow(thrown) {
  if (thrown instanceof LostLease) return { kind: "lostLease" };
  const stepId = childStepOf(thrown);
  if (stepId !== undefined) return { kind: "childFailed", stepId };
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
