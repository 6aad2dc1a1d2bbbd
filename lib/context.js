"use strict";
// TaskContext (docs/api.md, "TaskContext"): what a handler holds for one task.
// Lease state, cancellation and settlement live in Rust, shared with the
// worker, so the heartbeat and the time limits see exactly what the handler
// did.

const { NativeContext } = require("./native.js");
const { LostLease, abortError, asEnvelope, fromNative } = require("./errors.js");
const { nativeSync, raise } = require("./native-call.js");
const { dumpOptionalJson, encodeEnvelope, encodeOptions, parseRow } = require("./json.js");
const { taskName } = require("./models.js");
const { callThrough } = require("./client.js");
const { SCHEDULE_METADATA_KEY } = require("./schedules.js");
const { backoffDelay } = require("./retry.js");
const steps = require("./steps.js");

/** Where a task's metadata holds its group: the core's `flow::GROUP_METADATA_KEY`. */
const GROUP_METADATA_KEY = "cairnq.group";

/**
 * @typedef {import("../index.js").Task} Task
 * @typedef {Pick<Task, "id" | "name" | "queue" | "payload" | "metadata" | "attempt" | "max_attempts" | "root_id" | "correlation_id"> & { queue_wait_ms?: number, backoff_fn?: boolean }} TaskFields
 *   what a context reads of its task: a worker hands over only these, how long each had been due as its call
 *   started, and whether its registration's backoff function applies
 * @typedef {import("../index.js").TaskDef} TaskDef
 * @typedef {import("../index.js").SubmitOptions} SubmitOptions
 * @typedef {import("../index.js").CallOptions} CallOptions
 * @typedef {import("../index.js").FailReason} FailReason
 * @typedef {import("../index.js").TaskContextOptions} TaskContextOptions
 * @typedef {import("../binding.js").NativeContext} NativeHalf
 * @typedef {import("./store.js").TaskStore} TaskStore
 * @typedef {import("../index.js").BackoffFunction} BackoffFn
 */

/** Lets the worker hand over a getter of the native half. */
const NATIVE = Symbol("cairnq.nativeContext");
/** Lets the worker hear that a step sent the task back to the queue. */
const SUSPENDED = Symbol("cairnq.suspended");
/** Lets the worker tell whether the call still runs (its handler has not ended). */
const RUNNING = Symbol("cairnq.running");
/** Lets the worker hand over its registration's backoff function, where the core says it applies. */
const BACKOFF = Symbol("cairnq.backoff");

/**
 * Stands in for the native half of a worker's context whose call has ended
 * and been settled: every write is refused like any write after settling.
 * @param {TaskStore} store
 * @param {string} taskId
 * @returns {NativeHalf}
 */
function endedHalf(store, taskId) {
  const refuse = () => Promise.reject(new LostLease(taskId));
  return {
    settled: true,
    lostLease: false,
    cancelSeen: false,
    abortReason: null,
    markSettled() {},
    markLeaseLost() {},
    observeCancel() {},
    progress: refuse,
    heartbeat: refuse,
    succeed: refuse,
    fail: refuse,
    completeShared: refuse,
    suspended: false,
    beginStep: refuse,
    commitStep: refuse,
    sleep: refuse,
    sleepUntil: refuse,
    retryAfter: refuse,
    callChild: refuse,
    waitForSignal: refuse,
    suspendForWaits: () => Promise.resolve(false),
    canceled: () =>
      store.get(taskId).then((row) => !row || row.cancel_requested_at_ms != null || row.status === "canceled"),
  };
}

class TaskContext {
  /**
   * @param {TaskStore} store
   * @param {TaskFields} task
   * @param {string} workerId
   * @param {number | undefined} leaseMs required for a standalone context;
   *   a worker's (`opts[NATIVE]`) leaves it to the native half
   * @param {TaskContextOptions & { [NATIVE]?: () => NativeHalf | null, [SUSPENDED]?: () => void, [RUNNING]?: () => boolean, [BACKOFF]?: BackoffFn | null }} [opts]
   */
  constructor(store, task, workerId, leaseMs, opts = {}) {
    this._workerId = workerId;
    this._store = store;
    this._task = task;
    // A worker hands over a getter: the native half is only fetched when the
    // handler uses something that needs it (most never do).
    this._nativeOf = opts[NATIVE] ?? null;
    this._onSuspended = opts[SUSPENDED] ?? null;
    this._isRunning = opts[RUNNING] ?? null;
    this._backoff = opts[BACKOFF] ?? null;
    /** @type {NativeHalf | null} */
    this._nativeHalf = this._nativeOf
      ? null
      : nativeSync(() =>
          NativeContext.standalone(
            store._native,
            JSON.stringify(task),
            workerId,
            /** @type {number} */ (leaseMs),
            opts.retryBackoffMs,
            opts.retryBackoffMaxMs,
          ),
        );
    // Created on first use of `signal`: most handlers never look at it, and a
    // worker makes one context per task.
    /** @type {AbortController | null} */
    this._abort = null;
  }

  /**
   * The Rust half; a worker's call that has ended has none left: settled.
   * (`_nativeHalf` is null only in a worker's context, which has `_nativeOf`.)
   * @returns {NativeHalf}
   */
  get _native() {
    if (this._nativeHalf === null) {
      const nativeOf = /** @type {() => NativeHalf | null} */ (this._nativeOf);
      this._nativeHalf = nativeOf() ?? endedHalf(this._store, this._task.id);
    }
    return this._nativeHalf;
  }

  get taskId() {
    return this._task.id;
  }
  get name() {
    return this._task.name;
  }
  get queue() {
    return this._task.queue;
  }
  get attempt() {
    return this._task.attempt;
  }
  /** The attempts the task gets: its `max_attempts`, under its registration's `retry.attempts`. */
  get maxAttempts() {
    return this._task.max_attempts;
  }
  /** Whether a failure now is the task's last (no retry follows). */
  get isLastAttempt() {
    return this._task.attempt >= this._task.max_attempts;
  }
  get metadata() {
    return this._task.metadata;
  }
  /** The schedule and occurrence this task was fired for (docs/api.md, "Schedules"), or null. */
  get schedule() {
    const origin = this._task.metadata?.[SCHEDULE_METADATA_KEY];
    return origin && typeof origin.name === "string" ? origin : null;
  }
  /** The group this task was submitted with (docs/api.md, "Flow control"), or null. */
  get group() {
    const group = this._task.metadata?.[GROUP_METADATA_KEY];
    return typeof group === "string" && group !== "" ? group : null;
  }
  get rootId() {
    return this._task.root_id;
  }
  get correlationId() {
    return this._task.correlation_id;
  }
  get payload() {
    return this._task.payload;
  }

  /** True once the task was finalized through this context or by the worker. */
  get settled() {
    return this._native.settled;
  }

  /** True once the lease is known lost: nothing this context writes will be recorded. */
  get lostLease() {
    return this._syncAbort();
  }

  /**
   * Aborted when the lease is lost (reason: LostLease), the time limit passes
   * (HandlerTimeout), a cancel is seen (TaskCanceled) or a shutdown deadline
   * passes (WorkerShutdown).
   */
  get signal() {
    this._abort ??= new AbortController();
    this._syncAbort();
    return this._abort.signal;
  }

  /** @internal Whether a cancel request has been observed. */
  get cancelSeen() {
    return this._native.cancelSeen;
  }

  /** @internal */
  markSettled() {
    this._native.markSettled();
  }

  /** @internal */
  markLeaseLost() {
    this._native.markLeaseLost();
    this._syncAbort();
  }

  /**
   * @internal
   * @param {boolean} requested
   */
  observeCancel(requested) {
    this._native.observeCancel(requested === true);
  }

  /** @internal Abort `signal` once the native side has aborted; whether the lease is lost. */
  _syncAbort() {
    const native = this._native;
    if (this._abort && !this._abort.signal.aborted) {
      const reason = native.abortReason;
      if (reason != null) this._abort.abort(abortError(reason, this._task.id));
    }
    return native.lostLease;
  }

  /**
   * @param {number | null | undefined} value
   * @param {string | null} [message]
   * @returns {Promise<Task>}
   */
  progress(value, message = null) {
    return this._gated(this._native.progress(value, message));
  }

  /** @returns {Promise<Task>} */
  heartbeat() {
    return this._gated(this._native.heartbeat());
  }

  /** @returns {Promise<boolean>} */
  canceled() {
    return this._native.canceled().catch(raise);
  }

  /**
   * Finish as succeeded now (a pending cancel wins); null if already settled.
   * @param {unknown} [result]
   * @returns {Promise<Task | null>}
   */
  async succeed(result = null) {
    if (this.settled) return null;
    const encoded = dumpOptionalJson(result);
    return this._gated(this._native.succeed(encoded));
  }

  /**
   * Run `write` and finish as succeeded with what it returned, both in one
   * transaction (`store.completeIn`); null if already settled. The worker
   * does not settle the task again. A lost lease rolls `write`'s rows back
   * and rejects with LostLease. Postgres only (UnsupportedBackend elsewhere).
   * @template T
   * @param {(session: any) => Promise<T>} write
   * @returns {Promise<Task | null>}
   */
  async succeedIn(write) {
    if (this.settled) return null;
    if (this.lostLease) throw new LostLease(this._task.id);
    const native = this._native;
    const { task } = await this._store._completeIn(write, (id, resultJson) =>
      this._gated(native.completeShared(id, resultJson)),
    );
    return task ?? null;
  }

  /**
   * Finish as failed now: when retryable, retried after `delayMs` or the
   * task's backoff; null if already settled.
   * @param {FailReason} [reason]
   * @param {import("../index.js").FailOptions} [opts]
   * @returns {Promise<Task | null>}
   */
  async fail(reason = "task failed", opts = {}) {
    const options = encodeOptions(opts);
    const [envelope, retryable] = asEnvelope(reason, opts.retryable ?? true);
    const backoffMs = opts.delayMs == null ? this._backoffMs(reason, retryable) : null;
    return this._gated(this._native.fail(encodeEnvelope(envelope, retryable), retryable, options, backoffMs));
  }

  /**
   * What the registration's backoff function returns for a failure with
   * `error` that is retried; null where none applies (the core checks it).
   * @param {unknown} error
   * @param {boolean} retryable
   * @returns {number | null}
   */
  _backoffMs(error, retryable) {
    if (this._backoff === null || !retryable || this.isLastAttempt) return null;
    return backoffDelay(this._backoff, this._task.attempt, error);
  }

  /**
   * Submit a child task: parent, root and correlation are wired, explicit options win.
   * @param {string | TaskDef} task
   * @param {unknown} [payload]
   * @param {SubmitOptions} [opts]
   * @returns {Promise<Task>}
   */
  submit(task, payload, opts = {}) {
    return this._store.submit({
      name: taskName(task),
      payload,
      parentId: this._task.id,
      rootId: this._task.root_id,
      correlationId: this._task.correlation_id,
      ...opts,
    });
  }

  /**
   * `submit` of many children in one transaction, all or nothing: parent,
   * root and correlation are wired, each item's explicit options win.
   * @param {import("../index.js").SubmitItem[]} items
   * @returns {Promise<import("../index.js").TaskRef[]>} in item order
   */
  submitMany(items) {
    return this._store.submitMany(items, {
      parentId: this._task.id,
      rootId: this._task.root_id,
      correlationId: this._task.correlation_id,
    });
  }

  /** The worker holding this task's lease (read-only). */
  get workerId() {
    return this._workerId;
  }

  /**
   * Waits as `CairnQ.wait` does; a context's wait has no `maxPollMs`.
   * @param {string} taskId
   * @param {{ timeoutMs?: number, pollMs?: number }} [opts]
   * @returns {Promise<Task>}
   */
  wait(taskId, opts = {}) {
    return this._store._wait(taskId, { timeoutMs: opts.timeoutMs, pollMs: opts.pollMs });
  }

  /**
   * Submit a child task and wait for its result (see `CairnQ.call`).
   * @param {string | TaskDef} task
   * @param {unknown} [payload]
   * @param {CallOptions} [opts]
   * @returns {Promise<unknown>}
   */
  call(task, payload, opts = {}) {
    return callThrough(this, task, payload, opts);
  }

  /**
   * Run `fn` once for this task: its result is stored before it is returned,
   * and every later run of the task (a retry, a redelivery, a resumption)
   * returns the stored result without calling `fn` (docs/api.md, "Durable steps").
   * @param {string} id unique within the task
   * @param {() => unknown} fn
   * @returns {Promise<any>}
   */
  step(id, fn) {
    return steps.step(this, id, fn);
  }

  /**
   * Send the task back to the queue for `ms` without holding a slot or using
   * an attempt; the handler runs again from the top when it is due.
   * @param {string} id unique within the task
   * @param {number} ms
   * @returns {Promise<void>}
   */
  sleep(id, ms) {
    return steps.sleep(this, id, ms);
  }

  /**
   * End this run without failing it: the task goes back to its queue to
   * start no sooner than `ms` from now, and the attempt is given back
   * (`return ctx.retryAfter(ms)`, e.g. on an upstream's 429 Retry-After).
   * With `{ limit: true }`, every task drawing from the name's rate-limit
   * budget waits `ms` too.
   * @param {number} ms
   * @param {{ limit?: boolean }} [options]
   * @returns {Promise<never>}
   */
  retryAfter(ms, options) {
    return steps.retryAfter(this, ms, options);
  }

  /**
   * `sleep` until `date` (a Date or epoch milliseconds).
   * @param {string} id unique within the task
   * @param {Date | number} date
   * @returns {Promise<void>}
   */
  sleepUntil(id, date) {
    return steps.sleepUntil(this, id, date);
  }

  /**
   * Submit a child once and wait for it without holding a slot: its result,
   * or TaskFailed / TaskCanceled as `call()` throws them.
   * @param {string} id unique within the task
   * @param {string | TaskDef} task
   * @param {unknown} [payload]
   * @param {import("../index.js").CallChildOptions} [opts]
   * @returns {Promise<any>}
   */
  callChild(id, task, payload, opts = {}) {
    return steps.callChild(this, id, task, payload, opts);
  }

  /**
   * Wait for a signal `name` sent to this task (`client.signal`) without
   * holding a slot or using an attempt: its payload, or `null` once
   * `timeoutMs` passed without one. A signal sent earlier is kept for the wait.
   * @param {string} id unique within the task
   * @param {string} name
   * @param {{ timeoutMs?: number }} [opts]
   * @returns {Promise<any>}
   */
  waitForSignal(id, name, opts = {}) {
    return steps.waitForSignal(this, id, name, opts);
  }

  /** @internal A step sent the task back to the queue: the worker ends the call. */
  _suspended() {
    this._onSuspended?.();
  }

  /** @internal The worker still runs the call: its handler has neither returned nor thrown. */
  _running() {
    return this._isRunning?.() ?? false;
  }

  /**
   * A write through the native half, its row parsed and its error mapped; a
   * lost lease also aborts `signal`.
   * @param {Promise<string | null>} write
   * @returns {Promise<any>} the row (a Task), or null where the native write answers none (succeed, fail)
   */
  async _gated(write) {
    try {
      return parseRow(await write);
    } catch (err) {
      const mapped = fromNative(err);
      if (mapped instanceof LostLease) this._syncAbort();
      throw mapped;
    }
  }
}

module.exports = { TaskContext, NATIVE, SUSPENDED, RUNNING, BACKOFF };
