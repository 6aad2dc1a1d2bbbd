// Public types of cairnq 0.7.0 (docs/api.md). One declaration file serves
// both entry points: `import` (index.mjs) and `require` (index.js) load the
// very same objects, so `instanceof` and these types agree across the two.

// ---------------------------------------------------------------------------
// Data model and plain types (docs/api.md, "Tasks and statuses", "Values and
// JSON")
// ---------------------------------------------------------------------------

/** The five task statuses, in protocol order. */
export declare const STATUSES: readonly ["queued", "running", "succeeded", "failed", "canceled"];

/** One of {@link STATUSES}. Terminal: `succeeded`, `failed`, `canceled`. */
export type TaskStatus = (typeof STATUSES)[number];

/**
 * A task row: exactly the 23 columns of `cairnq_tasks`, snake_case, JSON
 * columns already parsed, every integer a `number`.
 */
export type Task = {
  /** `task_` + 26-char Crockford ULID. */
  id: string;
  /** Handler name; the only routing key that crosses languages. */
  name: string;
  queue: string;
  status: TaskStatus;
  /** Parsed JSON; `{}` when submitted without one. */
  payload: any;
  /** Parsed JSON; default `{}`. */
  metadata: any;
  /** Set by succeed/complete; `null` otherwise. */
  result: any | null;
  /** Error envelope `{type, code, message, retryable, details}` or `null`. */
  error: any | null;
  progress: number | null;
  message: string | null;
  /** 0 until the first claim; +1 per claim. */
  attempt: number;
  max_attempts: number;
  priority: number;
  worker_id: string | null;
  /** Non-null iff `status === "running"`. */
  lease_until_ms: number | null;
  run_at_ms: number;
  cancel_requested_at_ms: number | null;
  parent_id: string | null;
  root_id: string | null;
  correlation_id: string | null;
  created_at_ms: number;
  updated_at_ms: number;
  completed_at_ms: number | null;
};

/** A status a task never leaves on its own: `succeeded`, `failed` or `canceled`. */
export type TerminalStatus = "succeeded" | "failed" | "canceled";

/** What the status probes return: a task's id and status, nothing else. */
export type TaskRef = { id: string; status: TaskStatus };

/** True when the status is `succeeded`, `failed` or `canceled`. */
export declare function isTerminal(task: { status: TaskStatus }): boolean;
/** True when `status` is terminal; narrows it to {@link TerminalStatus}. */
export declare function isTerminalStatus(status: TaskStatus): status is TerminalStatus;
/** True when a cooperative cancel was requested (`cancel_requested_at_ms != null`). */
export declare function cancelRequested(task: Task): boolean;
export declare function isQueued(task: Task): boolean;
export declare function isRunning(task: Task): boolean;
export declare function isSucceeded(task: Task): boolean;
export declare function isFailed(task: Task): boolean;
export declare function isCanceled(task: Task): boolean;

/** What a keyed submit does when the key already points at a task. Default `"reuse"`. */
export type Conflict = "reuse" | "reuse-succeeded" | "reject" | "replace";

/** The store-level submit argument (`TaskStore.submit`). */
export type SubmitInput = {
  name: string;
  /** Required key, may be `undefined`; `undefined`/`null` are stored as `{}`. */
  payload: unknown;
  /** Default `"default"`. */
  queue?: string;
  /** `null`/absent = unkeyed submit; `""` is a real key. */
  key?: string | null;
  /** Default `"reuse"`. */
  conflict?: Conflict;
  /** Default 3; must be >= 1. */
  maxAttempts?: number;
  /** Default 0; higher claims first. */
  priority?: number;
  /** Default `{}`. */
  metadata?: unknown;
  parentId?: string | null;
  /** Default: the new task's own id. */
  rootId?: string | null;
  correlationId?: string | null;
  /** Default 0; must be >= 0. Not with `debounceMs`. */
  runAtDelayMs?: number;
  /**
   * Debounce (docs/api.md, "Debounce"): while the key's task is still queued,
   * this submit replaces its payload and moves its start to `debounceMs` from
   * now; once it has started, this submit makes a new task. Needs `key`; a
   * finite number >= 1; not with a `conflict` other than `"reuse"`.
   */
  debounceMs?: number;
  /** With `debounceMs`: the latest start, counted from the burst's first submit; >= `debounceMs`. */
  maxDelayMs?: number;
  /**
   * Flow control (docs/api.md, "Flow control"): the task's group, a
   * non-empty string, kept in `metadata["cairnq.group"]`; `groupConcurrency`
   * and per-group rate limits count tasks by it.
   */
  group?: string | null;
  /**
   * Time limit of each run of the task (docs/api.md, "Time limits and
   * aborts"), over its registration's `timeoutMs` and the worker's
   * `maxRunMs`: a number > 0, at most 1e15, kept in
   * `metadata["cairnq.timeoutMs"]` (a Python worker ignores it).
   */
  timeoutMs?: number;
  /** Retry policy (docs/api.md, "Retry policy"); its `attempts` is `maxAttempts`. */
  retry?: RetryPolicy | null;
  /**
   * Uniqueness window (docs/api.md, "Uniqueness window"): with `key`, the
   * key stays held for `forMs` (a number > 0) after the task finished —
   * `reject` refuses and `reuse` returns the task until then; after it the
   * key is free. Not with `conflict: "replace"` or `debounceMs`; kept in
   * `metadata["cairnq.unique"]` (a Python submit ignores it).
   */
  unique?: UniqueWindow | null;
  /**
   * Dead-letter queue (docs/api.md, "Dead letters"): when the task fails for
   * good, a task of the same name and payload is submitted to this queue in
   * the same transaction, its metadata saying where it came from
   * (`"cairnq.deadLettered"`). Over the registration's; kept in
   * `metadata["cairnq.deadLetter"]` (a Python worker ignores it).
   */
  deadLetter?: string | null;
};

/** {@link SubmitInput.unique}: how long after its task finished a key stays held. */
export type UniqueWindow = { forMs: number };

/** Submit options: {@link SubmitInput} without `name` and `payload`. */
export type SubmitOptions = Omit<SubmitInput, "name" | "payload">;

/**
 * One task of `submitMany` (docs/api.md, "Bulk submit"): `submit`'s three
 * arguments as fields. Other fields, and unknown option keys, are refused.
 */
export type SubmitItem = {
  task: string | TaskDef<any, any>;
  payload?: unknown;
  options?: SubmitOptions;
};

/** `call` options: submit options plus how long and how to wait. */
/** `client.fetch` (docs/api.md, "Manual fetch"). */
export type FetchOptions = {
  /** Default `"default"`. */
  queue?: string;
  /** Only tasks of these names; all names when absent. */
  names?: string[];
  /** At most this many tasks (an integer >= 1). Default 1. */
  count?: number;
  /** The lease each task holds, in ms (an integer >= 1); no heartbeat renews it. Default 30 000. */
  leaseMs?: number;
  /** The owner the tasks are claimed for. Default a fresh `worker_` id. */
  workerId?: string;
};

/** What `complete`, `fail` and `extendLease` need of a fetched task: a `Task` `fetch` returned will do. */
export type FetchedTask = Pick<Task, "id" | "worker_id">;

export type CallOptions = SubmitOptions & {
  /** Default 30 000. */
  waitTimeoutMs?: number;
  /** First poll interval, default 100 (grows ×1.5 up to `maxPollMs`). */
  pollMs?: number;
  /** Poll interval ceiling, default 500. Not passed on to submit. */
  maxPollMs?: number;
};

/**
 * `ctx.callChild` options (docs/api.md, "Durable steps"): submit options but
 * those the step owns (the child's key is its parent's and its step's, and
 * its parent is the calling task), plus how long the parent may wait before
 * it reads its child again by itself.
 */
export type CallChildOptions = Omit<SubmitOptions, "key" | "conflict" | "debounceMs" | "maxDelayMs" | "parentId"> & {
  /**
   * Default 30 000; >= 1. A child's completion wakes its parent at once;
   * this bounds the wait when nothing does (another SDK's worker ran it).
   */
  pollMs?: number;
};

/** What a stored step records: `ctx.step`, `ctx.sleep`/`sleepUntil`, `ctx.callChild`. */
export type StepKind = "step" | "sleep" | "child";

/** One stored step of a task (`client.steps(id)`). */
export type TaskStep = {
  id: string;
  kind: StepKind;
  storedAtMs: number;
  /** Bytes of the stored result (0 without one). */
  size: number;
  /** A sleep's wake time. */
  wakeAtMs: number | null;
  /** A child step's child. */
  childId: string | null;
  /** The child's status; `null` for other kinds, or once the child is purged. */
  childStatus: TaskStatus | null;
};

/** What a queued task waits for: the sleep, the child or the signal its last run stopped at. */
export type StepSuspension =
  | { kind: "sleep"; step: string; untilMs: number }
  | { kind: "child"; step: string; childId: string; childStatus: TaskStatus | null; recheckAtMs: number }
  | { kind: "signal"; step: string; name: string; timeoutAtMs: number };

/** A signal sent to a task that no `ctx.waitForSignal` has consumed yet. */
export type PendingSignal = {
  name: string;
  /** Bytes of the payload (0 without one). */
  size: number;
  sentAtMs: number;
};

/**
 * `client.steps(id)`: a task's stored steps, in the order stored, what it
 * waits for, and its signals not consumed yet, in the order sent.
 */
export type TaskSteps = { steps: TaskStep[]; suspended: StepSuspension | null; signals: PendingSignal[] };

/** `ctx.waitForSignal` options (docs/api.md, "Signals"). */
export type WaitForSignalOptions = {
  /** How long the first run to reach the wait waits (>= 0); default: no end. */
  timeoutMs?: number;
};

/** How `wait`/`waitByKey` poll. */
export type WaitOptions = {
  /** Default 30 000 (also when `undefined`). */
  timeoutMs?: number;
  /** First poll interval, default 100 (grows ×1.5, at least +1). */
  pollMs?: number;
  /** Poll interval ceiling, default 500. */
  maxPollMs?: number;
};

/** `list` filters; `null`/absent means "no filter". */
export type ListInput = {
  status?: TaskStatus | null;
  queue?: string | null;
  name?: string | null;
  rootId?: string | null;
  correlationId?: string | null;
  /** Default 100. */
  limit?: number;
  /** Default 0. */
  offset?: number;
  /** Default true; false lists `TaskSummary` rows: no payload, result, error or metadata, which are then not even read. */
  bodies?: boolean;
};

/** A task row without its JSON bodies, as `list({ bodies: false })` returns it. */
export type TaskSummary = Omit<Task, "payload" | "result" | "error" | "metadata">;

/** `purge` input: finished tasks completed more than `olderThanMs` ago (or past the newest `keepLast`); each filter is an equality, absent = off. */
export type PurgeInput = {
  /** Default 0; finite and >= 0. */
  olderThanMs?: number;
  /** Instead of `olderThanMs`: keep the most recently completed this many of the matched tasks, delete the rest. An integer >= 0. */
  keepLast?: number;
  queue?: string;
  /** A terminal status. */
  status?: TaskStatus;
  name?: string;
  /** Default 1000; >= 1. */
  limit?: number;
};

/** `retryMany` filter (docs/api.md, "Bulk retry and cancel"): each filter an equality, absent = off. */
export type RetryManyFilter = {
  queue?: string;
  name?: string;
  /** Default "failed". */
  status?: "failed" | "canceled";
  /** Finished at or after this time (a Date, or epoch milliseconds). */
  finishedAfter?: Date | number;
  /** Finished before this time (a Date, or epoch milliseconds). */
  finishedBefore?: Date | number;
  /** As `retry`'s: the attempt count back to 0. Default false. */
  resetAttempt?: boolean;
  /** The page's size: default 1000, an integer from 1 to 10000. */
  limit?: number;
  /** List the page a call would change now, and write nothing. */
  dryRun?: boolean;
};

/** `cancelMany` filter: each filter an equality, absent = off (both statuses). */
export type CancelManyFilter = {
  queue?: string;
  name?: string;
  status?: "queued" | "running";
  /** The page's size: default 1000, an integer from 1 to 10000. */
  limit?: number;
  /** List the page a call would change now, and write nothing. */
  dryRun?: boolean;
};

/** One page of `retryMany` / `cancelMany`: the tasks changed (or, for a dry run, that would be). */
export type BulkPage = {
  count: number;
  ids: string[];
  /** The page was full: more tasks may match; call again (a further call may find none). */
  more: boolean;
  dryRun: boolean;
};

/** Per-status cutoffs (or, under `keepLast`, counts); a terminal status left out is never swept. */
export type RetentionCutoffs = Partial<Record<TerminalStatus, number>>;

/** One retention rule: the finished tasks it matches, and their cutoff, or how many of the newest to keep. */
export type RetentionRule = { queue?: string; status?: TerminalStatus; name?: string } & (
  { olderThanMs: number; keepLast?: never } | { keepLast: number; olderThanMs?: never }
);

/** `watch` options: which queues' "queued" signals to deliver (default all), and the poll period. */
export type WatchOptions = {
  queues?: string[];
  /** Default {@link DEFAULT_WATCH_POLL_MS}; at least 1. */
  pollMs?: number;
};

/** "Read again now": why, and for push signals which queue or task. */
export type WatchSignal = { reason: "queued" | "done" | "poll"; queue?: string; taskId?: string };

/** `watch`'s default poll period (2000 ms). */
export declare const DEFAULT_WATCH_POLL_MS: number;

/** `client.events` options (docs/api.md, "Events"): each filter matches exactly; without `after`, from the newest event on. */
export type EventsOptions = {
  queue?: string;
  name?: string;
  taskId?: string;
  /** Resume after this event's `position` (`"0"`: from the oldest event kept). */
  after?: string;
  /** The longest sleep between reads when no wake arrives; default 1000, at least 1. */
  pollMs?: number;
};

/** What happened to a task: every transition, in the order it happened for that task. */
export type TaskEventKind =
  | "queued"
  | "started"
  | "progress"
  | "retrying"
  | "succeeded"
  | "failed"
  | "canceled"
  | "cancel_requested"
  | "lease_lost"
  | "suspended"
  | "resumed";

/** One event; `position` is what `after` takes to resume after it. */
export type TaskEvent = {
  position: string;
  kind: TaskEventKind;
  taskId: string;
  queue: string;
  name: string;
  attempt: number;
  /** When the change was made (epoch ms). */
  at: number;
  workerId?: string;
  /** queued, retrying, suspended, lease_lost, resumed: when the task is due. */
  runAt?: number;
  /** progress: the values the update stored. */
  progress?: number;
  message?: string;
  /** succeeded: the result, unless larger than 8 KiB (`resultTruncated`). */
  result?: unknown;
  resultBytes?: number;
  resultTruncated?: boolean;
  /** retrying, failed: the error envelope. */
  error?: { type?: string; message?: string; [key: string]: unknown };
};

/** Retention swept events after `after` up to `position` before this subscription read them. */
export type EventGap = { kind: "gap"; position: string; after: string };

/** A subscription: an async iterator, and an emitter of "event", "error" and "close". Keeps the process alive until `close()`. */
export declare class EventSubscription implements AsyncIterableIterator<TaskEvent | EventGap> {
  readonly closed: boolean;
  /** Resolves once the subscription holds its position: every later change is among its events. */
  ready(): Promise<void>;
  next(): Promise<IteratorResult<TaskEvent | EventGap, undefined>>;
  return(): Promise<IteratorResult<TaskEvent | EventGap, undefined>>;
  [Symbol.asyncIterator](): EventSubscription;
  close(): void;
  on(event: "event", listener: (event: TaskEvent | EventGap) => void): this;
  on(event: "error", listener: (err: Error) => void): this;
  on(event: "close", listener: () => void): this;
  off(event: "event" | "error" | "close", listener: (...args: any[]) => void): this;
  once(event: "close", listener: () => void): this;
}

/** A single limit for every queue, or per-queue limits (unlisted queues are ungated). */
export type QueueDepthLimit = number | Record<string, number>;

export type BackpressureOptions = {
  maxQueueDepth: QueueDepthLimit;
  /** Default 600 000. */
  maxQueueWaitMs?: number;
  /** First backoff between depth probes, default 250 (doubles up to 5000). */
  queuePollIntervalMs?: number;
};

/** Retention rules in one of three forms: one for every finished task, one per status, or a list. */
type RetentionForm = number | RetentionCutoffs | RetentionRule[];

/**
 * `olderThanMs`: one cutoff for every finished task, per-status cutoffs, or
 * rules; `keepLast`: how many of the newest to keep, in the same forms. At
 * least one of them; swept in order, `olderThanMs`'s first (each rule with
 * the sweeper's `limit`).
 */
export type RetentionOptions = (
  { olderThanMs: RetentionForm; keepLast?: RetentionForm } | { olderThanMs?: RetentionForm; keepLast: RetentionForm }
) & {
  /** Default 3 600 000. */
  intervalMs?: number;
  /** Default 1000. */
  limit?: number;
  /** Receives sweep failures; its own exceptions are swallowed. */
  onError?(err: unknown): void;
};

export type ClientOptions = Partial<BackpressureOptions> & { retention?: RetentionOptions };

export type TaskContextOptions = {
  /** Default 1000; <= 0 disables backoff. */
  retryBackoffMs?: number;
  /** Default 30 000. */
  retryBackoffMaxMs?: number;
};

/** A `ctx.fail` reason. */
export type FailReason = string | Error | TaskError | Record<string, unknown>;

/** `ctx.fail`'s options (docs/api.md, "Retry policy"). */
export type FailOptions = {
  /** Default true. */
  retryable?: boolean;
  /** When retried: start no sooner than this (a number >= 0), instead of the backoff's delay. */
  delayMs?: number;
};

/**
 * A retry policy (docs/api.md, "Retry policy"), per registration or per
 * submit. `attempts` (an integer >= 1): a submit's is the task's
 * `max_attempts` (not with `maxAttempts`); a registration's caps it.
 * `backoff` `"exponential"` (equal jitter, as `retryBackoffMs`) or
 * `"fixed"` (`baseMs` every time); `baseMs`/`maxMs` default to the
 * worker's backoff (a registration's) or 1000 / 30 000 (a submit's, kept
 * in `metadata["cairnq.retry"]`; a Python worker ignores it).
 */
export type RetryPolicy = {
  attempts?: number;
  backoff?: "exponential" | "fixed";
  baseMs?: number;
  maxMs?: number;
};

/**
 * A registration's backoff as a function: the delay in ms (a finite number
 * >= 0) before retrying after failed attempt `attempt` (1-based) with `error`
 * (what the handler threw, or `ctx.fail`'s reason). Any other value, or a
 * throw, retries after the worker's backoff and reaches `onError`.
 */
export type BackoffFunction = (attempt: number, error: unknown) => number;

/**
 * A registration's retry policy: a {@link RetryPolicy}, or `attempts` and a
 * {@link BackoffFunction} (no `baseMs`/`maxMs` beside it). A submit's cannot
 * hold a function: it is stored with the task.
 */
export type RegistrationRetryPolicy =
  RetryPolicy | { attempts?: number; backoff: BackoffFunction; baseMs?: never; maxMs?: never };

/** A handler for single delivery: `(ctx, payload)`. May be synchronous. */
export type Handler = (ctx: TaskContext, payload: any) => unknown | Promise<unknown>;

/** A handler typed by a {@link TaskDef}. */
export type TypedHandler<P, R> = (ctx: TaskContext, payload: P) => R | Promise<R>;

/** A handler for batch delivery; may return a `taskId → result` map. */
export type BatchHandler = (
  items: TaskContext[],
) => void | Record<string, unknown> | Promise<void | Record<string, unknown>>;

/**
 * A task name that carries its payload and result types. `__payload` and
 * `__result` are type-only: they never exist at runtime.
 */
export type TaskDef<P = unknown, R = unknown> = {
  readonly name: string;
  __payload?: P;
  __result?: R;
};

/** Returns `{ name }`, typed so `submit`, `call` and `worker.task` check payload and result. */
export declare function defineTask<P = unknown, R = unknown>(name: string): TaskDef<P, R>;

// Blocks inference from the positions it wraps, so P and R come from the
// TaskDef alone (a structural stand-in for TypeScript 5.4's NoInfer that
// works with every TypeScript version a consumer may have).
type FromDef<T> = [T][T extends any ? 0 : never];

/**
 * `retry` options: `resetAttempt` counts attempts from 0 again; `fromStep`
 * drops the stored step of that id and those stored after it, and takes a
 * succeeded task too (docs/api.md, "Restart from a step").
 */
type RetryOptions = { resetAttempt?: boolean; fromStep?: string };
/**
 * `cancel` options: `children: false` leaves the task's unfinished
 * `ctx.callChild` children alone (by default they are canceled, at any depth).
 */
export type CancelOptions = { children?: boolean };
type RunOptions = { concurrency?: number };
/** `worker.stop(opts)` (docs/api.md, "Time limits and aborts"). */
export type StopOptions = {
  /**
   * A number >= 0: the calls still running that long after the stop are
   * aborted (`ctx.signal.reason` a `WorkerShutdown`) and their tasks handed
   * back to their queues at once, their attempts given back.
   */
  timeoutMs?: number;
};
/** `worker.serve(opts)`: with `shutdownTimeoutMs`, every stop without its own `timeoutMs` gets it. */
type ServeOptions = RunOptions & { shutdownTimeoutMs?: number };

// ---------------------------------------------------------------------------
// Errors (docs/api.md, "Errors")
// ---------------------------------------------------------------------------

/** Base class of every cairnq error. */
export declare class CairnQError extends Error {
  constructor(message?: string);
}

/** A keyed submit with `conflict: "reject"` found a task under the key. */
export declare class AlreadyExists extends CairnQError {
  constructor(key: string);
  key: string;
}

/** A gated submit waited `maxQueueWaitMs` without headroom; nothing was enqueued. */
export declare class QueueFull extends CairnQError {
  constructor(queue: string, maxDepth: number, waitedMs: number);
  queue: string;
  maxDepth: number;
  waitedMs: number;
}

/** A wait deadline passed; the task itself is not stopped. */
export declare class TaskTimeout extends CairnQError {
  constructor(taskId: string, opts?: { timeoutMs?: number; task?: Task | null; key?: string | null });
  taskId: string;
  /** The last snapshot read, or `null`. */
  task: Task | null;
  /** The key for key waits, `null` otherwise. */
  key: string | null;
}

/** `call` observed a `failed` task. */
export declare class TaskFailed extends CairnQError {
  constructor(error: any);
  /** The stored error envelope, exactly as stored. */
  error: any;
  type: string;
  code: string;
  retryable: boolean;
  details: any;
}

/** `call` observed a `canceled` task; also `ctx.signal.reason` once a cancel is seen. */
export declare class TaskCanceled extends CairnQError {
  constructor(taskId: string);
  /** `"task_canceled"`. */
  code: string;
  taskId: string;
}

/** `ctx.signal.reason` once the call's time limit passed: the attempt failed with `handler_timeout`. */
export declare class HandlerTimeout extends CairnQError {
  constructor(taskId: string);
  /** `"handler_timeout"`. */
  code: string;
  taskId: string;
}

/** `ctx.signal.reason` once `stop({ timeoutMs })`'s deadline passed: the task was handed back. */
export declare class WorkerShutdown extends CairnQError {
  constructor(taskId: string);
  /** `"worker_shutdown"`. */
  code: string;
  taskId: string;
}

/** The stored shape of a failure. */
type ErrorEnvelope = {
  type: string;
  code: string;
  message: string;
  retryable: boolean;
  details: Record<string, any>;
};

/** Thrown by handlers to control the recorded failure. */
export declare class TaskError extends CairnQError {
  constructor(
    message: string,
    opts?: { code?: string; retryable?: boolean; type?: string; details?: Record<string, any> },
  );
  /** Default `"task_error"`. */
  code: string;
  /** Default `false`. */
  retryable: boolean;
  /** Default `"TaskError"`. */
  type: string;
  /** Default `{}`. */
  details: Record<string, any>;
  /** `{type, code, message, retryable, details}`. */
  envelope(): ErrorEnvelope;
}

/** The lease on a task is gone: a write through its owner was refused. */
export declare class LostLease extends CairnQError {
  constructor(taskId: string);
  taskId: string;
}

/** A fetched task's write was refused: another worker's id holds the task (nothing written). */
export declare class NotOwner extends CairnQError {
  constructor(taskId: string, workerId: string, owner: string);
  taskId: string;
  /** The id the refused write gave. */
  workerId: string;
  /** The worker id the task is running under. */
  owner: string;
}

/** A fetched task's write was refused: the caller's own lease ran out (nothing written). */
export declare class LeaseExpired extends LostLease {
  constructor(taskId: string, workerId: string);
  workerId: string;
}

/** A fetched task's write was refused: the task is `status`, or there is none (`null`). */
export declare class NotRunning extends CairnQError {
  constructor(taskId: string, status: TaskStatus | null);
  taskId: string;
  status: TaskStatus | null;
}

/** Reported through `onError` (never thrown) when a heartbeat beat was late. */
export declare class EventLoopBlocked extends CairnQError {
  constructor(lateMs: number, intervalMs: number, leaseMs: number);
  readonly lateMs: number;
  readonly intervalMs: number;
  readonly leaseMs: number;
}

/** The database's `protocol_version` is not the one this SDK speaks (1). */
export declare class ProtocolVersionMismatch extends CairnQError {
  constructor(message: string);
}

/** A value cannot cross the JSON boundary. */
export declare class SerializationError extends CairnQError {
  constructor(message: string);
}

/** A Postgres connection resolves to another schema than the installation's. */
export declare class SchemaMismatch extends CairnQError {
  constructor(message: string);
}

/** The store's dialect cannot do this (e.g. share a transaction on SQLite). */
export declare class UnsupportedBackend extends CairnQError {
  constructor(message: string);
}

/** LISTEN can never work on a connection. Extends `Error`, not `CairnQError`. */
export declare class ListenUnavailable extends Error {
  constructor(message?: string);
}

// ---------------------------------------------------------------------------
// Postgres through the application's connection (docs/api.md, "PgExecutor")
// ---------------------------------------------------------------------------

/** A result row as the driver produced it. */
export type Row = Record<string, unknown>;

/** A connection or transaction: parameterized statements and parameterless SQL. */
export interface PgSession {
  /** One statement with `$1…$n` placeholders; resolves to the row objects. */
  query(text: string, values?: readonly unknown[]): Promise<Row[]>;
  /** Parameterless SQL, possibly several statements (simple query protocol). */
  exec(sql: string): Promise<void>;
}

/** The application's Postgres connection, which cairnq runs everything through and never closes. */
export interface PgExecutor extends PgSession {
  /** BEGIN on one connection, `fn(session)`, COMMIT; ROLLBACK and rethrow if `fn` throws. */
  tx<T>(fn: (session: PgSession) => Promise<T>): Promise<T>;
  /**
   * Optional: LISTEN on `channels`; resolves to a stop function. Throw
   * `ListenUnavailable` when it can never work; other failures are retried.
   */
  listen?(
    channels: string[],
    onNotify: (channel: string, payload: string) => void,
    onClose: () => void,
  ): Promise<() => void | Promise<void>>;
  /** Called only on executors cairnq created itself. */
  close?(): Promise<void>;
}

// ---------------------------------------------------------------------------
// Submits inside the application's own transaction (docs/api.md, "The task
// and your rows in one transaction")
// ---------------------------------------------------------------------------

/**
 * The application's Postgres transaction `submitIn` writes through: a `pg`
 * Client or PoolClient inside BEGIN, a PgSession (a PgExecutor's `tx`, or
 * an ORM's transaction wrapped as one), or a postgres.js transaction (the
 * `sql` that `sql.begin` hands its callback).
 */
export type PgTransaction =
  | { query(text: string, values?: any[]): PromiseLike<unknown> }
  | { unsafe(text: string, values?: any[]): PromiseLike<unknown> };

/**
 * The application's own SQLite connection to the store's file, inside its
 * open transaction: a better-sqlite3 `Database`, a `node:sqlite`
 * `DatabaseSync` or a `bun:sqlite` `Database`.
 */
export interface SqliteConnection {
  prepare(sql: string): { run(...params: any[]): unknown; all(...params: any[]): unknown[] };
  exec(sql: string): unknown;
}

/** `submit`'s options inside the caller's transaction: all of them, keys and debounce included. */
export type SubmitInOptions = SubmitOptions;

/**
 * A `PgExecutor` over a node-postgres pool (the `pg` package must be
 * installed). With `schema`, the schema is created if absent and every
 * connection's search_path is that schema only.
 */
export declare function createPoolExecutor(
  dsn: string,
  opts?: { max?: number; schema?: string },
): Promise<PgExecutor & { close(): Promise<void> }>;

// ---------------------------------------------------------------------------
// Stores (docs/api.md, "Stores")
// ---------------------------------------------------------------------------

/** `draw(names, limit)`: one claim statement inside a claim session. */
type Draw = (names: string[] | null, limit: number) => Promise<Task[]>;

/** The storage seam shared by both backends. */
export declare abstract class TaskStore {
  /** Open, migrate, check the protocol version. Optional: every operation connects on first use. */
  abstract connect(): Promise<void>;
  abstract close(): Promise<void>;
  /** The stored `protocol_version`, `0` if the row is missing. */
  abstract protocolVersion(): Promise<number>;

  /** Settles when work on `queues` may be claimable, at `timeoutMs` at the latest. */
  claimWake(queues: string[], timeoutMs: number): Promise<void>;
  /** Settles when `taskId` may have finished, at `timeoutMs` at the latest. */
  taskDoneWake(taskId: string, timeoutMs: number): Promise<void>;
  /** Install (replace) the store's queue-depth gate. */
  useBackpressure(opts: BackpressureOptions): void;

  submit(input: SubmitInput): Promise<Task>;
  /** `CairnQ.submitMany`; `wired`: options every item takes unless it gives its own. */
  submitMany(items: readonly SubmitItem[], wired?: Partial<SubmitInput>): Promise<TaskRef[]>;
  /** `CairnQ.submitIn`: at once on SQLite, a promise on Postgres. */
  submitIn(tx: SqliteConnection, input: SubmitInput): TaskRef;
  submitIn(tx: PgTransaction, input: SubmitInput): Promise<TaskRef>;
  submitManyIn(tx: SqliteConnection, items: readonly SubmitItem[]): TaskRef[];
  submitManyIn(tx: PgTransaction, items: readonly SubmitItem[]): Promise<TaskRef[]>;
  get(taskId: string): Promise<Task | null>;
  getByKey(key: string): Promise<Task | null>;
  list(input: ListInput & { bodies: false }): Promise<TaskSummary[]>;
  list(input?: ListInput): Promise<Task[]>;
  cancel(taskId: string, opts?: CancelOptions): Promise<Task | null>;
  cancelByKey(key: string, opts?: CancelOptions): Promise<Task | null>;
  retry(taskId: string, opts?: RetryOptions): Promise<Task | null>;
  retryByKey(key: string, opts?: RetryOptions): Promise<Task | null>;
  purge(input?: PurgeInput): Promise<string[]>;
  /** How many tasks `purge(input)` would delete now (at most its `limit`); deletes nothing. */
  purgeCount(input?: PurgeInput): Promise<number>;
  /** Every queue's counts; with `queue`, only that queue (present even with no rows). */
  stats(queue?: string | null): Promise<Record<string, Record<TaskStatus, number>>>;
  /** The task's id and status only (a cheap probe), or `null`. */
  getStatus(taskId: string): Promise<TaskRef | null>;
  /** The id and status of the task `key` points at now, or `null`. */
  getStatusByKey(key: string): Promise<TaskRef | null>;
  /** Signals meaning "read again now"; returns the unsubscribe function. */
  watch(opts: WatchOptions, onSignal: (signal: WatchSignal) => void): () => void;
  /** Headroom: `max(0, maxDepth − queued tasks of queue)`. */
  queueDepth(queue: string, maxDepth: number): Promise<number>;

  claim(input: {
    queues: string[];
    workerId: string;
    leaseMs?: number;
    limit?: number;
    names?: string[] | null;
  }): Promise<Task[]>;
  /**
   * One claim transaction: lease recovery, then `plan(draw)`. Resolves
   * `undefined` when the SQLite probe finds nothing claimable (plan not called).
   */
  claimSession<T>(
    input: { queues: string[]; workerId: string; leaseMs?: number; names: string[] | null },
    plan: (draw: Draw) => Promise<T>,
  ): Promise<T | undefined>;
  heartbeat(input: { taskId: string; workerId: string; leaseMs?: number }): Promise<Task>;
  /** `taskId → cancel requested?` for every task this worker still owns. */
  heartbeatBatch(input: { taskIds: string[]; workerId: string; leaseMs?: number }): Promise<Map<string, boolean>>;
  progress(input: { taskId: string; workerId: string; progress: number | null; message: string | null }): Promise<Task>;
  succeed(input: { taskId: string; workerId: string; result: unknown }): Promise<Task>;
  complete(input: { taskId: string; workerId: string; result: unknown }): Promise<Task>;
  /**
   * `fn(session)`, then `complete` with its value, in one transaction
   * (Postgres only; `UnsupportedBackend` elsewhere). A lost lease rolls both
   * back with `LostLease`.
   */
  completeIn<S = PgSession, T = unknown>(
    owner: { taskId: string; workerId: string },
    fn: (session: S) => Promise<T>,
  ): Promise<{ task: Task; value: T }>;
  fail(input: {
    taskId: string;
    workerId: string;
    error: unknown;
    retryable?: boolean;
    delayMs?: number;
  }): Promise<Task>;
}

/** What every store takes (docs/api.md, "Tracing"). */
export interface StoreTracingOptions {
  /**
   * A traced submit stores the OpenTelemetry baggage of its context in the
   * task's metadata too (key `baggage`). Default false: only `traceparent`
   * and `tracestate`, since baggage often carries user ids and e-mail addresses.
   */
  propagateBaggage?: boolean;
}

/** SQLite backend. `":memory:"` or a `mode=memory` URI is in-memory. */
export declare class SQLiteStore extends TaskStore {
  /** `busyTimeoutMs` default 5000. */
  constructor(path: string, opts?: { busyTimeoutMs?: number } & StoreTracingOptions);
  connect(): Promise<void>;
  close(): Promise<void>;
  protocolVersion(): Promise<number>;
}

/**
 * PostgreSQL backend: a libpq connection string (the store owns its pool),
 * or the application's `PgExecutor` (used as is, never closed).
 */
export declare class PostgresStore extends TaskStore {
  /** `max`: pool size (DSN only). */
  /** `schema`: the installation's schema (a DSN store creates it; see docs/api.md). */
  constructor(source: string | PgExecutor, opts?: { max?: number; schema?: string } & StoreTracingOptions);
  connect(): Promise<void>;
  close(): Promise<void>;
  protocolVersion(): Promise<number>;
  claimWake(queues: string[], timeoutMs: number): Promise<void>;
  taskDoneWake(taskId: string, timeoutMs: number): Promise<void>;
}

// ---------------------------------------------------------------------------
// Client (docs/api.md, "CairnQ", "Waits and call")
// ---------------------------------------------------------------------------

/** The API-side handle: submit, inspect, wait, call. */
export declare class CairnQ {
  constructor(store: TaskStore, opts?: ClientOptions);
  static sqlite(path: string, opts?: { busyTimeoutMs?: number } & StoreTracingOptions & ClientOptions): CairnQ;
  static postgres(
    source: string | PgExecutor,
    opts?: { max?: number; schema?: string } & StoreTracingOptions & ClientOptions,
  ): CairnQ;

  get store(): TaskStore;
  connect(): Promise<void>;
  /** Stops the retention sweeper, then closes the store (even an injected one). */
  close(): Promise<void>;

  submit<P>(task: TaskDef<P, any>, payload?: FromDef<P>, opts?: SubmitOptions): Promise<Task>;
  submit(task: string, payload?: unknown, opts?: SubmitOptions): Promise<Task>;
  /**
   * Many submits in one transaction, all or nothing: a bad item rejects the
   * call naming its place (`items[3].options.priority`) and nothing is
   * stored; keyed items follow their conflict rule, each seeing the items
   * before it. The task refs, in item order.
   */
  submitMany(items: readonly SubmitItem[]): Promise<TaskRef[]>;
  /**
   * `submit` written by your own connection inside your open transaction, so
   * the task commits or rolls back with your rows (docs/api.md, "The task and
   * your rows in one transaction"). SQLite (your connection to the store's
   * file): the task ref at once, no keys. Postgres: a promise of it.
   */
  submitIn<P>(tx: SqliteConnection, task: TaskDef<P, any>, payload?: FromDef<P>, opts?: SubmitInOptions): TaskRef;
  submitIn(tx: SqliteConnection, task: string, payload?: unknown, opts?: SubmitInOptions): TaskRef;
  submitIn<P>(tx: PgTransaction, task: TaskDef<P, any>, payload?: FromDef<P>, opts?: SubmitInOptions): Promise<TaskRef>;
  submitIn(tx: PgTransaction, task: string, payload?: unknown, opts?: SubmitInOptions): Promise<TaskRef>;
  /** `submitMany` written by your own connection inside your transaction. */
  submitManyIn(tx: SqliteConnection, items: readonly SubmitItem[]): TaskRef[];
  submitManyIn(tx: PgTransaction, items: readonly SubmitItem[]): Promise<TaskRef[]>;

  queueDepth(queue: string, maxDepth: number): Promise<number>;
  get(taskId: string): Promise<Task | null>;
  getByKey(key: string): Promise<Task | null>;
  list(input: ListInput & { bodies: false }): Promise<TaskSummary[]>;
  list(input?: ListInput): Promise<Task[]>;
  cancel(taskId: string, opts?: CancelOptions): Promise<Task | null>;
  cancelByKey(key: string, opts?: CancelOptions): Promise<Task | null>;
  retry(taskId: string, opts?: RetryOptions): Promise<Task | null>;
  retryByKey(key: string, opts?: RetryOptions): Promise<Task | null>;
  purge(input?: PurgeInput): Promise<string[]>;
  /** How many tasks `purge(input)` would delete now (at most its `limit`); deletes nothing. */
  purgeCount(input?: PurgeInput): Promise<number>;
  /** Every queue's counts; with `queue`, only that queue (present even with no rows). */
  stats(queue?: string | null): Promise<Record<string, Record<TaskStatus, number>>>;
  /** One page of failed (or canceled) tasks back to the queue, oldest failure first; call again while `more`. */
  retryMany(filter?: RetryManyFilter): Promise<BulkPage>;
  /** One page of queued tasks canceled and running ones asked to cancel; call again while `more`. */
  cancelMany(filter?: CancelManyFilter): Promise<BulkPage>;
  /** Every queue with a task or a pause, by name: its counts and whether it is paused. */
  queues(): Promise<QueueSummary[]>;
  /** Stop every worker of every process claiming from `queue` (any name); `true` when this call paused it. */
  pauseQueue(queue: string): Promise<boolean>;
  /** Let workers claim from `queue` again; `true` when it was paused. */
  resumeQueue(queue: string): Promise<boolean>;
  /** The task's id and status only (a cheap probe), or `null`. */
  getStatus(taskId: string): Promise<TaskRef | null>;
  /** The id and status of the task `key` points at now, or `null`. */
  getStatusByKey(key: string): Promise<TaskRef | null>;
  /** What happens to tasks, from any process (docs/api.md, "Events"). */
  events(opts?: EventsOptions): EventSubscription;
  /** Signals meaning "read again now"; returns the unsubscribe function. */
  watch(opts: WatchOptions, onSignal: (signal: WatchSignal) => void): () => void;

  /** Resolves with the terminal task, whatever its status; rejects `TaskTimeout`. */
  wait(taskId: string, opts?: WaitOptions): Promise<Task>;
  /** Waits on whatever task `key` points at, re-resolving it on every poll. */
  waitByKey(key: string, opts?: WaitOptions): Promise<Task>;

  /** submit + wait: the result, or `TaskFailed` / `TaskCanceled` / `TaskTimeout`. */
  call<P, R>(task: TaskDef<P, R>, payload?: FromDef<P>, opts?: CallOptions): Promise<R>;
  call(task: string, payload?: unknown, opts?: CallOptions): Promise<unknown>;

  /** Claims up to `count` due tasks of the queue, each holding a lease no heartbeat renews (docs/api.md, "Manual fetch"). */
  fetch(opts?: FetchOptions): Promise<Task[]>;
  /**
   * Finishes a fetched task with `result` (`canceled` instead when a cancel was requested).
   * Rejects `NotOwner`, `LeaseExpired` or `NotRunning`, writing nothing, when the task is not held.
   */
  complete(task: FetchedTask, result?: unknown): Promise<Task>;
  /** Fails a fetched task (a `ctx.fail` reason): queued again after `delayMs` while attempts remain unless `retryable` is false. */
  fail(task: FetchedTask, reason?: unknown, opts?: { retryable?: boolean; delayMs?: number }): Promise<Task>;
  /** Renews a fetched task's lease to `leaseMs` (default 30 000) from now; the row shows a requested cancel. */
  extendLease(task: FetchedTask, leaseMs?: number): Promise<Task>;

  /**
   * Insert, or update in place, the recurring task `name` (docs/api.md,
   * "Schedules"): every running worker whose queues include its queue fires
   * each occurrence as one ordinary task. Refuses bad input naming the field;
   * nothing is written then.
   */
  schedule<P>(name: string, opts: ScheduleOptions<P>): Promise<Schedule>;
  /** Every schedule, by name (none on a database that never had one). */
  schedules(): Promise<Schedule[]>;
  /** Stop firing `name`; the schedule, or `null` when there is none of that name. */
  pauseSchedule(name: string): Promise<Schedule | null>;
  /** Fire `name` again from its next occurrence after now; the schedule, or `null`. */
  resumeSchedule(name: string): Promise<Schedule | null>;
  /** Remove `name` (the tasks it fired stay); the schedule removed, or `null`. */
  unschedule(name: string): Promise<Schedule | null>;
  /** One task of `name` now (`ctx.schedule.triggered`), the pending occurrence left, whatever the overlap; an unknown name is refused. */
  triggerSchedule(name: string): Promise<Task>;

  /** The task's durable steps and what it is sleeping or waiting for (docs/api.md, "Durable steps"). */
  steps(taskId: string): Promise<TaskSteps>;
  /**
   * Send signal `name` (and `payload`, by the JSON rules of a submit's) to a
   * task (docs/api.md, "Signals"): kept until a `ctx.waitForSignal` of that
   * name consumes it; a task waiting for it runs at once. `true` when stored,
   * `false` for a finished task (nothing stored), `null` for no such task.
   */
  signal(taskId: string, name: string, payload?: unknown): Promise<boolean | null>;
  /** `signal` to the task `key` names. */
  signalByKey(key: string, name: string, payload?: unknown): Promise<boolean | null>;
}

/** What happens to occurrences that fell due while no worker ran. */
export type CatchUp = "none" | "latest" | "all";

/** `client.schedule(name, opts)`: a `cron` or an `every`, exactly one. */
export type ScheduleOptions<P = unknown> = ScheduleCommonOptions<P> &
  (
    | {
        /** 5 fields, or 6 with seconds first; `@hourly`, `@daily`, `@weekly`, `@monthly`, `@yearly`. */
        cron: string;
        every?: never;
      }
    | {
        /** An interval schedule: an occurrence every this many ms (an integer >= 1), from `startAt` or one period after `schedule()`. */
        every: number;
        cron?: never;
      }
  );

/** What an occurrence does while a task of its schedule is queued or running: fire anyway, or be skipped (and counted). */
export type ScheduleOverlap = "allow" | "skip";

/** The options every schedule takes, beside its `cron` or `every`. */
export type ScheduleCommonOptions<P = unknown> = {
  /** The task each occurrence submits: a name or a TaskDef. */
  task: string | TaskDef<P, any>;
  /** IANA zone the expression is read in; default `"UTC"`. */
  tz?: string;
  /** Every occurrence's payload; default `{}`. */
  payload?: P;
  /** Default `"default"`. */
  queue?: string;
  /** Default 0. */
  priority?: number;
  /** Default 3; must be >= 1. */
  maxAttempts?: number;
  /** A plain object; each task gets it plus the `"cairnq.schedule"` entry. */
  metadata?: Record<string, unknown>;
  /** Default `"latest"`; `"all"` fires at most the latest 100. */
  catchUp?: CatchUp;
  /** Each task's flow-control group (as `submit`'s), kept in the metadata as `"cairnq.group"`. */
  group?: string | null;
  /** Default `"allow"`. */
  overlap?: ScheduleOverlap;
  /** No occurrence before it (a Date or epoch ms). */
  startAt?: Date | number;
  /** No occurrence after it (a Date or epoch ms); must be after `startAt`. */
  endAt?: Date | number;
  /** The number of occurrences it fires, then stops (an integer >= 1; triggers and skips do not count). */
  limit?: number;
};

/** A stored schedule (`client.schedules()`). */
/** A queue of `client.queues()` (docs/api.md, "Queue pauses"). */
export type QueueSummary = {
  queue: string;
  counts: Record<TaskStatus, number>;
  /** No worker of this SDK claims from it (Python workers do not know of pauses). */
  paused: boolean;
  /** When it was paused (epoch ms), or `null`. */
  pausedAtMs: number | null;
};

export type Schedule = {
  name: string;
  /** The task name each occurrence submits. */
  task: string;
  /** `null` for an interval schedule. */
  cron: string | null;
  /** An interval schedule's period (ms), else `null`. */
  every: number | null;
  tz: string;
  queue: string;
  payload: any;
  metadata: Record<string, unknown>;
  priority: number;
  maxAttempts: number;
  catchUp: CatchUp;
  paused: boolean;
  /** The pending occurrence: the next one to fire (epoch ms). */
  nextRunAtMs: number;
  /** The latest occurrence fired, or `null`. */
  lastRunAtMs: number | null;
  createdAtMs: number;
  updatedAtMs: number;
  overlap: ScheduleOverlap;
  startAtMs: number | null;
  endAtMs: number | null;
  limit: number | null;
  /** Occurrences that made a task. */
  firedCount: number;
  /** Occurrences `overlap: "skip"` skipped. */
  skippedCount: number;
  lastSkippedAtMs: number | null;
  /** Past its `endAt`, or its `limit` fired: it fires no more. */
  finished: boolean;
};

/** Where a fired task names its schedule: `metadata["cairnq.schedule"]`, and `ctx.schedule`. */
export type ScheduleOrigin = {
  name: string;
  /** The occurrence's time (epoch ms). */
  occurrenceAtMs: number;
  /** Set on the earliest task of a `catchUp: "all"` that left older occurrences out. */
  earlierOccurrencesSkipped?: true;
  /** Set on a task `triggerSchedule` made (its `occurrenceAtMs` is the trigger's time). */
  triggered?: true;
};

// ---------------------------------------------------------------------------
// Backpressure and retention (docs/api.md, "Backpressure", "Retention")
// ---------------------------------------------------------------------------

export declare class QueueDepthGate {
  constructor(store: TaskStore, opts: BackpressureOptions);
  /** The limit for `queue`, or `null` when it is ungated. */
  limitFor(queue: string): number | null;
  /** Waits for headroom on `queue`; rejects `QueueFull` after `maxQueueWaitMs`. */
  acquire(queue: string): Promise<void>;
}

export declare class RetentionSweeper {
  constructor(store: TaskStore, opts: RetentionOptions);
  /** Sleep `intervalMs`, sweep, repeat until stopped. No-op while active. */
  start(): void;
  /** Interrupts the sleep and waits for an in-flight sweep. */
  stop(): Promise<void>;
  /** Each rule in order, purging until a batch comes back short; resolves with the total deleted. */
  sweep(): Promise<number>;
}

// ---------------------------------------------------------------------------
// Worker (docs/api.md, "Worker options" to "Heartbeat and blocked loops")
// ---------------------------------------------------------------------------

export type WorkerOptions = TaskContextOptions &
  Partial<BackpressureOptions> & {
    /** Handler calls in flight (a batch call counts 1). Default 1. */
    concurrency?: number;
    /** Default 4 000: a crashed worker's task runs elsewhere within about 4.5 s (docs/api.md, "Worker options"). */
    leaseMs?: number;
    /** Default 1 000 with the default lease, else `max(50, floor(leaseMs / 3))`. */
    heartbeatIntervalMs?: number;
    /** Idle sleep between empty polls, default 500. */
    pollIntervalMs?: number;
    /** Cap on rows per draw; unset = no cap. */
    claimBatch?: number;
    /** Wall-clock limit per call, under a registration's or a submit's `timeoutMs`; unset = none. */
    maxRunMs?: number;
    /** Budget of resident payload bytes; unset = none. */
    maxInFlightBytes?: number;
    /** Shared call ceilings, per worker process. */
    resources?: Record<string, number>;
    /** Errors the loop survives. */
    onError?(err: unknown, info: { phase: "claim" | "execute"; taskId?: string }): void;
  };

/**
 * A rate limit (docs/api.md, "Flow control"): at most `max` starts (an
 * integer >= 1) in any window of `perMs` milliseconds (>= 1), of the task
 * name as a whole or, with `perGroup`, of each group. With `key` (a
 * non-empty string), every task name declaring the same key draws from one
 * budget, across processes.
 */
export type RateLimit = { key?: string; max: number; perMs: number; perGroup?: boolean };

/** `ctx.retryAfter`'s options (docs/api.md, "Push-back"). */
export type RetryAfterOptions = {
  /**
   * Every task drawing from the name's rate-limit budget (every name of its
   * `key`; its group's only under `perGroup`) waits `ms` too. Refused on a
   * name registered without `rateLimit`.
   */
  limit?: boolean;
};

/**
 * Per-name limits for `worker.task(name, opts, fn)`: `concurrency` and
 * `resource` hold this worker; `rateLimit` and `groupConcurrency` (an integer
 * >= 1: running tasks per group) hold every worker that declares them, across
 * processes (docs/api.md, "Flow control").
 */
export type TaskOptions = {
  concurrency?: number;
  resource?: string;
  rateLimit?: RateLimit | null;
  groupConcurrency?: number | null;
  /** Time limit per call (> 0), over the worker's `maxRunMs` (docs/api.md, "Time limits and aborts"). */
  timeoutMs?: number | null;
  /** Retry policy of the name's tasks, over the worker's backoff (docs/api.md, "Retry policy"). */
  retry?: RegistrationRetryPolicy | null;
  /** Dead-letter queue of the name's tasks, under a submit's (docs/api.md, "Dead letters"). */
  deadLetter?: string | null;
};
/** Batch delivery for `worker.task(name, opts, fn)`: `fn` receives an array of contexts. */
export type BatchTaskOptions = TaskOptions & { batch: number };

export declare class Worker {
  /** The worker does not own an injected store. */
  constructor(store: TaskStore, queues: string[], opts?: WorkerOptions);
  /** Creates and owns a `SQLiteStore`; `queues` default `["default"]`. */
  static sqlite(
    path: string,
    opts?: WorkerOptions & StoreTracingOptions & { queues?: string[]; busyTimeoutMs?: number },
  ): Worker;
  /** Creates and owns a `PostgresStore`; `queues` default `["default"]`. */
  static postgres(
    source: string | PgExecutor,
    opts?: WorkerOptions & StoreTracingOptions & { queues?: string[]; max?: number; schema?: string },
  ): Worker;

  /** `worker_` + 26-char ULID. */
  /** This worker's id (the `worker_id` of the tasks it holds). */
  get workerId(): string;
  /** 0.7.0's name for {@link Worker.workerId}. */
  get id(): string;

  /** Register a named function under its own name (`fn.name`). */
  task(fn: Handler): this;
  /** Register a typed handler: payload `P`, result `R`. */
  task<P, R>(def: TaskDef<P, R>, fn: TypedHandler<FromDef<P>, FromDef<R>>): this;
  task(name: string, fn: Handler): this;
  /** Batch delivery: `fn` receives the contexts of up to `batch` tasks. */
  task(nameOrDef: string | TaskDef<any, any>, opts: BatchTaskOptions, fn: BatchHandler): this;
  /** Single delivery with per-name `concurrency` and/or a shared `resource`. */
  task(nameOrDef: string | TaskDef<any, any>, opts: TaskOptions, fn: Handler): this;

  /** Poll until `stop()`, then wait for every call in flight. */
  run(opts?: RunOptions): Promise<void>;
  /** Stop polling (irreversible); in-flight handlers finish, or are aborted at `timeoutMs`. */
  stop(opts?: StopOptions): void;
  /** `run` until SIGINT/SIGTERM; closes the store if the worker owns it. */
  serve(opts?: ServeOptions): Promise<void>;
  /** Runs the worker while `fn` runs; then stops, drains and closes an owned store. */
  background<T>(fn: () => Promise<T>, opts?: RunOptions): Promise<T>;
  /** Closes the store, owned or not. Call after `run` settled. */
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------
// TaskContext (docs/api.md, "TaskContext")
// ---------------------------------------------------------------------------

/** What a handler holds for one task. */
export declare class TaskContext {
  constructor(store: TaskStore, task: Task, workerId: string, leaseMs: number, opts?: TaskContextOptions);

  /** The worker holding the lease; read-only (assigning throws). */
  get workerId(): string;
  get taskId(): string;
  get name(): string;
  get queue(): string;
  /** The attempt at claim time (1 on the first run). */
  get attempt(): number;
  /** The attempts the task gets: its `max_attempts`, under its registration's `retry.attempts`. */
  get maxAttempts(): number;
  /** Whether a failure now is the last attempt's (no retry follows). */
  get isLastAttempt(): boolean;
  get metadata(): any;
  /** The schedule and occurrence this task was fired for, or `null`. */
  get schedule(): ScheduleOrigin | null;
  /** The group it was submitted with (docs/api.md, "Flow control"), or `null`. */
  get group(): string | null;
  get rootId(): string | null;
  get correlationId(): string | null;
  get payload(): any;
  /** True once the task was finalized through this context or by the worker. */
  get settled(): boolean;
  /** True once the lease is known lost. */
  get lostLease(): boolean;
  /**
   * Aborted, with the first of these reasons: a `LostLease` when the lease is
   * lost, a `HandlerTimeout` when the time limit passes, a `TaskCanceled`
   * when a cancel is seen (within about a second of the request), a
   * `WorkerShutdown` when `stop({ timeoutMs })`'s deadline passes.
   */
  get signal(): AbortSignal;

  /** Internal: used by the worker. */
  markSettled(): void;
  /** Internal: used by the worker. */
  markLeaseLost(): void;
  /** Internal: used by the worker. */
  observeCancel(flag: boolean): void;

  /** `null` leaves a field unchanged. */
  progress(value: number | null, message?: string | null): Promise<Task>;
  heartbeat(): Promise<Task>;
  /** True once a cancel was requested (or the task is gone or canceled). */
  canceled(): Promise<boolean>;
  /** Finish as succeeded now (a pending cancel wins); `null` if already settled. */
  succeed(result?: unknown): Promise<Task | null>;
  /**
   * `write(session)` and the settlement as succeeded, in one transaction
   * (`store.completeIn`); `null` if already settled. Postgres only.
   */
  succeedIn<T>(write: (session: PgSession) => Promise<T>): Promise<Task | null>;
  /** Finish as failed now (retryable by default, with backoff); `null` if already settled. */
  fail(reason?: FailReason, opts?: FailOptions): Promise<Task | null>;

  /** Submit a child task: parent, root and correlation are wired; explicit options win. */
  submit<P>(task: TaskDef<P, any>, payload?: FromDef<P>, opts?: SubmitOptions): Promise<Task>;
  submit(task: string, payload?: unknown, opts?: SubmitOptions): Promise<Task>;
  /** `CairnQ.submitMany` of child tasks: parent, root and correlation are wired; explicit options win. */
  submitMany(items: readonly SubmitItem[]): Promise<TaskRef[]>;

  wait(taskId: string, opts?: { timeoutMs?: number; pollMs?: number }): Promise<Task>;

  /**
   * Submit a child task (wired as `submit` does) and wait for its result, as
   * `CairnQ.call`. The child needs a free worker slot of its own: do not call
   * from a worker whose only slot this handler holds. (An addition over 0.7.0.)
   */
  call<P, R>(task: TaskDef<P, R>, payload?: FromDef<P>, opts?: CallOptions): Promise<R>;
  call(task: string, payload?: unknown, opts?: CallOptions): Promise<unknown>;

  /**
   * A durable step (docs/api.md, "Durable steps"): the first run that reaches
   * `id` runs `fn` and stores its result (the JSON rules of a handler's
   * result) before resolving; every later run of the task (a retry, a
   * redelivery, a resumption) resolves with the stored result without
   * calling `fn`. Either way the value is what its JSON reads back as
   * (`undefined` is `null`). `id` is unique within the task.
   */
  step<T>(id: string, fn: () => T | PromiseLike<T>): Promise<T>;
  /**
   * Send the task back to the queue for `ms` (>= 0) without holding a slot or
   * using an attempt: this run stops here (the promise never settles) and the
   * handler runs again from the top when the time comes, replaying its
   * steps; there the sleep resolves at once. Not in a batch handler.
   */
  sleep(id: string, ms: number): Promise<void>;
  /** `sleep` until `date` (a `Date` or epoch milliseconds). */
  sleepUntil(id: string, date: Date | number): Promise<void>;
  /**
   * Push-back (docs/api.md, "Push-back"): `return ctx.retryAfter(ms)` ends
   * this run without failing it; the task goes back to its queue to start no
   * sooner than `ms` from now, and the attempt is given back. Not in a batch
   * handler. With `{ limit: true }`, nothing drawing from the name's
   * rate-limit budget starts sooner either (BullMQ's `worker.rateLimit`).
   */
  retryAfter(ms: number, options?: RetryAfterOptions): Promise<never>;
  /**
   * Submit a child once (wired as `submit` does) and wait for it without
   * holding a slot: the task waits in the queue until the child finishes,
   * then runs again and resolves with the child's result, or rejects with
   * `TaskFailed` / `TaskCanceled` as `call()` does. Not in a batch handler.
   */
  callChild<P, R>(id: string, task: TaskDef<P, R>, payload?: FromDef<P>, opts?: CallChildOptions): Promise<R>;
  callChild(id: string, task: string, payload?: unknown, opts?: CallChildOptions): Promise<unknown>;
  /**
   * Wait for a signal `name` sent to this task (`client.signal`) without
   * holding a slot or using an attempt (docs/api.md, "Signals"): resolves with
   * the payload of the oldest signal of that name not consumed yet (one sent
   * before the wait counts), or `null` once `timeoutMs` passed without one.
   * Stored like a step: every later run resolves with the same value at once.
   * Not in a batch handler.
   */
  waitForSignal<T = unknown>(id: string, name: string, opts?: WaitForSignalOptions): Promise<T | null>;
}

// ---------------------------------------------------------------------------
// The web dashboard for embedding (an addition over 0.7.0; README, "Dashboard").

/** Options of `createDashboard`. Give `client` or `db`. */
export interface DashboardOptions {
  /** A client on the database to show; the dashboard never closes it. */
  client?: CairnQ;
  /**
   * A SQLite path or `postgres://` DSN, opened for the dashboard without ever
   * creating or migrating it; `close()` closes it.
   */
  db?: string;
  /** The path the handler is mounted under (default `/`). */
  basePath?: string;
  /** No retry, cancel or purge (default false). */
  readOnly?: boolean;
  /**
   * Required on every request when set: `?token=` (traded for a cookie),
   * the cookie, or `Authorization: Bearer <token>`. At least 16 characters
   * (a shorter or empty one throws a TypeError).
   */
  token?: string;
  /**
   * `Host` names to answer (`"queue.example.com"` on any port,
   * `"queue.example.com:8443"` on that port); any other is 421. Default:
   * loopback names only (`localhost`, `127.x.x.x`, `[::1]`), against DNS
   * rebinding. `true` answers any host: only behind a token or a proxy that
   * checks the host.
   */
  allowedHosts?: string[] | true;
  /**
   * How often pages refresh, in ms (default 2000): the period of a page
   * without live updates, and of the one read a live page makes after a
   * burst of changes.
   */
  refreshMs?: number;
  /**
   * Live updates (default true): open pages read again when the client's
   * task events (`client.events()`) say what they show changed, instead of
   * every `refreshMs`. The first subscription creates the events tables on a
   * database that has none (docs/api.md, "Events"); false keeps pages polling.
   */
  live?: boolean;
  /** Workers of this process whose queue waits and run times `/metrics` shows. */
  workers?: Worker[];
}

/** The dashboard as a fetch-style handler (Bun.serve, Hono, Deno, …). */
export interface DashboardHandler {
  (request: Request): Promise<Response>;
  /** Closes the database the dashboard opened from `db` (nothing for `client`). */
  close(): Promise<void>;
}

/** Node's `http` / Express shape: `(req, res, next?)`. */
export type NodeRequestHandler = (
  req: import("node:http").IncomingMessage,
  res: import("node:http").ServerResponse,
  next?: (err?: unknown) => void,
) => void;

/** The dashboard's `Request → Response` handler. */
export declare function createDashboard(options: DashboardOptions): DashboardHandler;
/** `handler` for Node's http server or Express (mount it at its `basePath`). */
export declare function toNodeHandler(handler: DashboardHandler): NodeRequestHandler;

export interface MetricsOptions {
  /** The database to read (every scrape: one `stats` and one queue-age read). */
  client: CairnQ;
  /** Workers of this process whose queue waits and run times are shown. */
  workers?: Worker[];
}

/** A Prometheus exporter (docs/api.md, "Metrics"). */
export interface Metrics {
  /** `text/plain; version=0.0.4; charset=utf-8` */
  readonly contentType: string;
  /** The text exposition, read now. */
  render(): Promise<string>;
}

/** The Prometheus metrics `/metrics` serves, for a server of your own. */
export declare function createMetrics(options: MetricsOptions): Metrics;

// Only the declarations marked `export` above are part of the package.
export {};
