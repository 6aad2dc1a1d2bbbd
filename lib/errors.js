"use strict";
// Error classes (API.md §4) and the envelopes failures are recorded with.
// Errors raised in Rust arrive as a JSON reason that `fromNative` maps back
// onto these classes, so `instanceof` and `name` work the same either way.

class CairnQError extends Error {
  constructor(message) {
    super(message);
    this.name = "CairnQError";
  }
}

class AlreadyExists extends CairnQError {
  constructor(key) {
    super(`task with key ${key} already exists`);
    this.name = "AlreadyExists";
    this.key = key;
  }
}

class QueueFull extends CairnQError {
  constructor(queue, maxDepth, waitedMs) {
    super(
      `queue ${queue} still holds ${maxDepth} or more queued tasks after ${waitedMs}ms; refusing to enqueue more`,
    );
    this.name = "QueueFull";
    this.queue = queue;
    this.maxDepth = maxDepth;
    this.waitedMs = waitedMs;
  }
}

// What a timed-out wait last saw, worded for the person reading the error: a
// task queued and never claimed is the classic first-run mistake.
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
  constructor(taskId) {
    super(`task ${taskId} was canceled`);
    this.name = "TaskCanceled";
    this.taskId = taskId;
  }
}

class EventLoopBlocked extends CairnQError {
  constructor(lateMs, intervalMs, leaseMs) {
    super(
      `heartbeat beat was ${lateMs}ms late (interval ${intervalMs}ms, lease ${leaseMs}ms): ` +
        "the event loop was blocked long enough to miss a beat. Leases are renewed off the " +
        "event loop, but a blocked loop delays everything else the handlers do — move long " +
        "synchronous work to a worker thread or a child process.",
    );
    this.name = "EventLoopBlocked";
    this.lateMs = lateMs;
    this.intervalMs = intervalMs;
    this.leaseMs = leaseMs;
  }
}

class LostLease extends CairnQError {
  constructor(taskId) {
    super(`lost lease on task ${taskId}`);
    this.name = "LostLease";
    this.taskId = taskId;
  }
}

class ProtocolVersionMismatch extends CairnQError {
  constructor(message) {
    super(message);
    this.name = "ProtocolVersionMismatch";
  }
}

class SerializationError extends CairnQError {
  constructor(message) {
    super(message);
    this.name = "SerializationError";
  }
}

function errorEnvelope({ type, code, message, retryable, details }) {
  return { type, code, message, retryable, details: details ?? {} };
}

class TaskError extends CairnQError {
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

/** A thrown value as a `handler_error` envelope, type from its name. */
function exceptionEnvelope(err, retryable = true) {
  return errorEnvelope({
    type: err?.name ?? "Error",
    code: "handler_error",
    message: String(err?.message ?? err),
    retryable,
  });
}

/** A `ctx.fail` reason as [envelope, retryable] (API.md §4.1). */
function asEnvelope(reason, retryable) {
  if (reason instanceof TaskError) return [reason.envelope(), reason.retryable];
  if (reason instanceof Error) return [exceptionEnvelope(reason, retryable), retryable];
  if (typeof reason === "object" && reason !== null) return [reason, retryable];
  return [new TaskError(String(reason), { retryable }).envelope(), retryable];
}

const NATIVE_PREFIX = '{"cairnq":';

/** Turn a rejection from the native layer into the matching error class. */
function fromNative(err) {
  const text = err?.message;
  if (typeof text !== "string" || !text.startsWith(NATIVE_PREFIX)) return err;
  const body = JSON.parse(text);
  switch (body.cairnq) {
    case "LostLease":
      return new LostLease(body.taskId);
    case "AlreadyExists":
      return new AlreadyExists(body.key);
    case "QueueFull":
      return new QueueFull(body.queue, body.maxDepth, body.waitedMs);
    case "TaskTimeout":
      return new TaskTimeout(body.taskId, { timeoutMs: body.timeoutMs, task: body.task, key: body.key });
    case "ProtocolVersionMismatch":
      return new ProtocolVersionMismatch(body.message);
    case "SerializationError":
      return new SerializationError(body.message);
    case "EventLoopBlocked":
      return new EventLoopBlocked(body.lateMs, body.intervalMs, body.leaseMs);
    default: {
      const plain = new Error(body.message);
      if (body.code !== undefined) plain.code = body.code;
      return plain;
    }
  }
}

function raise(err) {
  throw fromNative(err);
}

module.exports = {
  CairnQError,
  AlreadyExists,
  QueueFull,
  TaskTimeout,
  TaskFailed,
  TaskCanceled,
  TaskError,
  LostLease,
  EventLoopBlocked,
  ProtocolVersionMismatch,
  SerializationError,
  errorEnvelope,
  exceptionEnvelope,
  asEnvelope,
  fromNative,
  raise,
};
