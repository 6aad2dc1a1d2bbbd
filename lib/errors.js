"use strict";
// Error classes (docs/api.md, "Errors") and the envelopes failures are recorded
// with. Errors raised in Rust arrive as a JSON reason (`{"cairnq": <class>,
// "message", fields…}`) that `fromReason` maps back onto these classes, so
// `instanceof` and `name` work the same either way. The Rust core words the
// messages (crates/core/src/error.rs); an error decoded from a reason takes its
// message as given. The constructors below keep their own wording only for
// errors users (and the JS layer) make themselves; it must read exactly as the
// Rust text does, which __test__/errors-parity.test.mjs checks for every
// variant against a fixture the Rust tests generate.

/** @typedef {import("../index.js").Task} Task */

/**
 * The stored shape of a failure.
 * @typedef {{ type: string, code: string, message: string, retryable: boolean, details: Record<string, any> }} ErrorEnvelope
 */

class CairnQError extends Error {
  /** @param {string} [message] */
  constructor(message) {
    super(message);
    this.name = "CairnQError";
  }
}

class AlreadyExists extends CairnQError {
  /** @param {string} key */
  constructor(key) {
    super(`task with key ${key} already exists`);
    this.name = "AlreadyExists";
    this.key = key;
  }
}

class QueueFull extends CairnQError {
  /**
   * @param {string} queue
   * @param {number} maxDepth
   * @param {number} waitedMs
   */
  constructor(queue, maxDepth, waitedMs) {
    super(`queue ${queue} still holds ${maxDepth} or more queued tasks after ${waitedMs}ms; refusing to enqueue more`);
    this.name = "QueueFull";
    this.queue = queue;
    this.maxDepth = maxDepth;
    this.waitedMs = waitedMs;
  }
}

// What a timed-out wait last saw, worded for the person reading the error: a
// task queued and never claimed is the classic first-run mistake.
/**
 * @param {Task | null} task
 * @param {string | null} key
 */
function timeoutDetail(task, key) {
  if (!task) {
    return key === null
      ? "task not found — wrong database file, or already purged?"
      : "no task under this key — never submitted, or already purged?";
  }
  if (task.status === "queued") {
    const delayMs = task.run_at_ms - Date.now();
    if (task.attempt === 0 && delayMs <= 0) {
      return `never claimed by a worker — is a worker running with a handler for '${task.name}' on queue '${task.queue}', against this same database?`;
    }
    const next = delayMs > 0 ? `, next run in ~${delayMs}ms` : "";
    return `still queued (attempt ${task.attempt}/${task.max_attempts})${next}`;
  }
  if (task.cancel_requested_at_ms != null) {
    return "cancel requested, waiting for the handler to observe it";
  }
  return `still running (attempt ${task.attempt}/${task.max_attempts})`;
}

class TaskTimeout extends CairnQError {
  /**
   * @param {string} taskId
   * @param {{ timeoutMs?: number | null, task?: Task | null, key?: string | null }} [opts]
   */
  constructor(taskId, opts = {}) {
    const key = opts.key ?? null;
    const subject = key === null ? `task ${taskId}` : `key ${key}`;
    super(
      opts.timeoutMs == null
        ? `${subject} did not finish in time`
        : `${subject} did not finish within ${opts.timeoutMs}ms: ${timeoutDetail(opts.task ?? null, key)}`,
    );
    this.name = "TaskTimeout";
    this.taskId = taskId;
    this.task = opts.task ?? null;
    this.key = key;
  }
}

class TaskFailed extends CairnQError {
  /** @param {any} error the stored error envelope, exactly as stored */
  constructor(error) {
    const e = error ?? {};
    super(e.message ?? "task failed");
    this.name = "TaskFailed";
    this.error = error;
    this.type = e.type ?? "TaskError";
    this.code = e.code ?? "task_error";
    this.retryable = e.retryable ?? false;
    this.details = e.details ?? {};
  }
}

class TaskCanceled extends CairnQError {
  /** @param {string} taskId */
  constructor(taskId) {
    super(`task ${taskId} was canceled`);
    this.name = "TaskCanceled";
    this.code = "task_canceled";
    this.taskId = taskId;
  }
}

/** `ctx.signal.reason` once the call's time limit passed (docs/api.md, "Time limits and aborts"). */
class HandlerTimeout extends CairnQError {
  /** @param {string} taskId */
  constructor(taskId) {
    super(`task ${taskId} exceeded its time limit; the attempt was abandoned`);
    this.name = "HandlerTimeout";
    this.code = "handler_timeout";
    this.taskId = taskId;
  }
}

/** `ctx.signal.reason` once `stop({ timeoutMs })`'s deadline passed (docs/api.md, "Time limits and aborts"). */
class WorkerShutdown extends CairnQError {
  /** @param {string} taskId */
  constructor(taskId) {
    super(`the worker stopped before task ${taskId} finished; the task was handed back to its queue`);
    this.name = "WorkerShutdown";
    this.code = "worker_shutdown";
    this.taskId = taskId;
  }
}

/**
 * The error `ctx.signal` aborts with, for the native half's `abortReason`.
 * @param {string} reason `lostLease`, `timeout`, `canceled` or `shutdown`
 * @param {string} taskId
 * @returns {CairnQError}
 */
function abortError(reason, taskId) {
  switch (reason) {
    case "timeout":
      return new HandlerTimeout(taskId);
    case "canceled":
      return new TaskCanceled(taskId);
    case "shutdown":
      return new WorkerShutdown(taskId);
    default:
      return new LostLease(taskId);
  }
}

class EventLoopBlocked extends CairnQError {
  /**
   * @param {number} lateMs
   * @param {number} intervalMs
   * @param {number} leaseMs
   */
  constructor(lateMs, intervalMs, leaseMs) {
    super(
      `heartbeat beat was ${lateMs}ms late (interval ${intervalMs}ms, lease ${leaseMs}ms): ` +
        "the event loop was blocked long enough to miss a beat, so this worker's leases are at risk. " +
        "Usually synchronous work in a handler (move it off the loop); otherwise the worker is " +
        "oversubscribed for its leaseMs.",
    );
    this.name = "EventLoopBlocked";
    this.lateMs = lateMs;
    this.intervalMs = intervalMs;
    this.leaseMs = leaseMs;
  }
}

class LostLease extends CairnQError {
  /** @param {string} taskId */
  constructor(taskId) {
    super(`lost lease on task ${taskId}`);
    this.name = "LostLease";
    this.taskId = taskId;
  }
}

/** A fetched task's write refused: another worker's id holds the task. */
class NotOwner extends CairnQError {
  /**
   * @param {string} taskId
   * @param {string} workerId
   * @param {string} owner
   */
  constructor(taskId, workerId, owner) {
    super(`task ${taskId} is held by worker ${owner}, not ${workerId}`);
    this.name = "NotOwner";
    this.taskId = taskId;
    this.workerId = workerId;
    this.owner = owner;
  }
}

/** A fetched task's write refused: the caller's own lease ran out. A LostLease. */
class LeaseExpired extends LostLease {
  /**
   * @param {string} taskId
   * @param {string} workerId
   */
  constructor(taskId, workerId) {
    super(taskId);
    this.message = `the lease of worker ${workerId} on task ${taskId} has expired`;
    this.name = "LeaseExpired";
    this.workerId = workerId;
  }
}

/** A fetched task's write refused: the task is not running (`status`), or gone (`null`). */
class NotRunning extends CairnQError {
  /**
   * @param {string} taskId
   * @param {string | null} status
   */
  constructor(taskId, status) {
    super(status === null ? `no task ${taskId}` : `task ${taskId} is ${status}, not running`);
    this.name = "NotRunning";
    this.taskId = taskId;
    this.status = status;
  }
}

class ProtocolVersionMismatch extends CairnQError {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = "ProtocolVersionMismatch";
  }
}

class SerializationError extends CairnQError {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = "SerializationError";
  }
}

/** A Postgres connection that resolves to another schema than the installation's. */
class SchemaMismatch extends CairnQError {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = "SchemaMismatch";
  }
}

/** An operation this store's dialect cannot perform (e.g. `completeIn` on SQLite). */
class UnsupportedBackend extends CairnQError {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = "UnsupportedBackend";
  }
}

/** LISTEN can never work on a connection (e.g. behind a transaction pooler). Not a CairnQError. */
class ListenUnavailable extends Error {
  /** @param {string} [message] */
  constructor(message = "LISTEN is not available on this connection") {
    super(message);
    this.name = "ListenUnavailable";
  }
}

/**
 * @param {{ type: string, code: string, message: string, retryable: boolean, details?: Record<string, any> | null }} fields
 * @returns {ErrorEnvelope}
 */
function errorEnvelope({ type, code, message, retryable, details }) {
  return { type, code, message, retryable, details: details ?? {} };
}

class TaskError extends CairnQError {
  /**
   * @param {string} message
   * @param {{ code?: string, retryable?: boolean, type?: string, details?: Record<string, any> }} [opts]
   */
  constructor(message, opts = {}) {
    super(message);
    this.name = "TaskError";
    this.code = opts.code ?? "task_error";
    this.retryable = opts.retryable ?? false;
    this.type = opts.type ?? "TaskError";
    this.details = opts.details ?? {};
  }

  envelope() {
    return errorEnvelope({
      type: this.type,
      code: this.code,
      message: this.message,
      retryable: this.retryable,
      details: this.details,
    });
  }
}

/**
 * A thrown value as a `handler_error` envelope, type from its name.
 * @param {any} err whatever was thrown
 * @param {boolean} [retryable]
 */
function exceptionEnvelope(err, retryable = true) {
  return errorEnvelope({
    type: err?.name ?? "Error",
    code: "handler_error",
    message: String(err?.message ?? err),
    retryable,
  });
}

/**
 * A `ctx.fail` reason as [envelope, retryable] (docs/api.md, "Errors").
 * @param {unknown} reason
 * @param {boolean} retryable
 * @returns {[Record<string, any>, boolean]}
 */
function asEnvelope(reason, retryable) {
  if (reason instanceof TaskError) return [reason.envelope(), reason.retryable];
  if (reason instanceof Error) return [exceptionEnvelope(reason, retryable), retryable];
  if (typeof reason === "object" && reason !== null) return [reason, retryable];
  return [new TaskError(String(reason), { retryable }).envelope(), retryable];
}

const NATIVE_PREFIX = '{"cairnq":';

/**
 * `err`, just constructed, carrying the message Rust wrote instead of the one
 * its constructor words. V8 writes `stack` when it is first read, so its
 * first line shows this message too.
 * @template {Error} E
 * @param {E} err
 * @param {string} message
 * @returns {E}
 */
function withRustMessage(err, message) {
  err.message = message;
  return err;
}

/**
 * The error a native reason describes: its class with the message Rust wrote
 * (a TaskTimeout adds what its snapshot says, worded here against the JS
 * clock), or a plain `Error` (with `code` when the database gave one).
 * @param {string} text
 * @returns {Error}
 */
function fromReason(text) {
  const body = JSON.parse(text);
  const message = body.message;
  switch (body.cairnq) {
    case "LostLease":
      return withRustMessage(new LostLease(body.taskId), message);
    case "NotOwner":
      return withRustMessage(new NotOwner(body.taskId, body.workerId, body.owner), message);
    case "LeaseExpired":
      return withRustMessage(new LeaseExpired(body.taskId, body.workerId), message);
    case "NotRunning":
      return withRustMessage(new NotRunning(body.taskId, body.status), message);
    case "AlreadyExists":
      return withRustMessage(new AlreadyExists(body.key), message);
    case "QueueFull":
      return withRustMessage(new QueueFull(body.queue, body.maxDepth, body.waitedMs), message);
    case "TaskTimeout": {
      const opts = { timeoutMs: body.timeoutMs, task: body.task ?? null, key: body.key ?? null };
      const detail = timeoutDetail(opts.task, opts.key);
      return withRustMessage(new TaskTimeout(body.taskId, opts), `${message}: ${detail}`);
    }
    case "ProtocolVersionMismatch":
      return new ProtocolVersionMismatch(message);
    case "SerializationError":
      return new SerializationError(message);
    case "SchemaMismatch":
      return new SchemaMismatch(message);
    case "UnsupportedBackend":
      return new UnsupportedBackend(message);
    case "EventLoopBlocked":
      return withRustMessage(new EventLoopBlocked(body.lateMs, body.intervalMs, body.leaseMs), message);
    default: {
      const plain = /** @type {Error & { code?: unknown }} */ (new Error(message));
      if (body.code !== undefined) plain.code = body.code;
      return plain;
    }
  }
}

/**
 * Turn a rejection from the native layer, or a reason text as `onError` hands
 * it over, into the matching error class; anything else is returned as is.
 * @param {any} err
 * @returns {unknown}
 */
function fromNative(err) {
  const text = typeof err === "string" ? err : err?.message;
  if (typeof text !== "string" || !text.startsWith(NATIVE_PREFIX)) return err;
  return fromReason(text);
}

module.exports = {
  CairnQError,
  AlreadyExists,
  QueueFull,
  TaskTimeout,
  TaskFailed,
  TaskCanceled,
  HandlerTimeout,
  WorkerShutdown,
  abortError,
  TaskError,
  LostLease,
  NotOwner,
  LeaseExpired,
  NotRunning,
  EventLoopBlocked,
  ProtocolVersionMismatch,
  SerializationError,
  SchemaMismatch,
  UnsupportedBackend,
  ListenUnavailable,
  errorEnvelope,
  exceptionEnvelope,
  asEnvelope,
  fromNative,
};
