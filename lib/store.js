"use strict";
// Stores (docs/api.md, "Stores"): JS faces over the Rust store. Every method
// encodes its JSON values here (JSON.stringify semantics belong to JS), then
// hands off to Rust, which runs the statement off the event loop and returns
// the row as JSON text.

const { NativeStore, NativeWatch, DEFAULT_WATCH_POLL_MS } = require("./native.js");
const { TaskTimeout, fromNative } = require("./errors.js");
const { nativeSync, raise } = require("./native-call.js");
const { ExecutorBridge, isExecutor, bigints } = require("./executor.js");
const { dumpJson, dumpOptionalJson, encodeEnvelope, parseRow } = require("./json.js");
const { activeTracer, tracedSubmit } = require("./telemetry/trace.js");

/**
 * @typedef {import("../index.js").Task} Task
 * @typedef {import("../index.js").TaskStatus} TaskStatus
 * @typedef {import("../index.js").SubmitInput} SubmitInput
 * @typedef {import("../index.js").ListInput} ListInput
 * @typedef {import("../index.js").PurgeInput} PurgeInput
 * @typedef {import("../index.js").TaskRef} TaskRef
 * @typedef {import("../index.js").WaitOptions} WaitOptions
 * @typedef {import("../index.js").WatchOptions} WatchOptions
 * @typedef {import("../index.js").WatchSignal} WatchSignal
 * @typedef {import("../index.js").BackpressureOptions} BackpressureOptions
 * @typedef {{ resetAttempt?: boolean }} RetryOptions
 * @typedef {(names: string[] | null | undefined, limit: number) => Promise<Task[]>} Draw
 * @typedef {{ kind: string, [field: string]: unknown }} WriteArgs
 */

/**
 * A JSON array of rows (or any JSON text), parsed.
 * @param {string} text
 * @returns {any}
 */
const parseRows = (text) => JSON.parse(text);

/**
 * @param {number} ms
 * @param {boolean} keepAlive
 * @returns {Promise<void>}
 */
function sleep(ms, keepAlive) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, Math.max(0, ms));
    if (!keepAlive) timer.unref?.();
  });
}

/**
 * Whether a task id or key can name a task. One that is not a string names
 * none, as in 0.7.0 (which bound it as a value no row holds): lookups and
 * writes by it answer null, and waits on it run out their deadline.
 * @param {unknown} value
 * @returns {value is string}
 */
const namesTask = (value) => typeof value === "string";

const NO_TASK = Promise.resolve(null);

/** The longest delay a Node timer takes (a longer one fires at once). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * A wait on a task id or key that names no task: TaskTimeout at its deadline,
 * which, as for the native wait, a timeout that is not finite never reaches.
 * @param {unknown} taskId
 * @param {unknown} key
 * @param {WaitOptions} opts
 * @returns {Promise<never>}
 */
async function untilDeadline(taskId, key, opts) {
  const timeoutMs = opts.timeoutMs ?? null;
  let left = timeoutMs === null ? 0 : Number.isFinite(timeoutMs) ? timeoutMs : Infinity;
  for (; left > 0; left -= MAX_TIMER_MS) await sleep(Math.min(left, MAX_TIMER_MS), true);
  throw new TaskTimeout(/** @type {string} */ (taskId), { timeoutMs, task: null, key: /** @type {string | null} */ (key) });
}

class TaskStore {
  /** @param {import("../binding.js").NativeStore} native */
  constructor(native) {
    if (new.target === TaskStore) {
      throw new TypeError("TaskStore is abstract: use SQLiteStore or PostgresStore");
    }
    this._native = native;
    /**
     * Writes issued in this tick, encoded, not yet handed to Rust.
     * @type {string[]}
     */
    this._tick = [];
    /**
     * This tick's replies, in the order of `_tick`.
     * @type {Promise<any[]>}
     */
    this._tickReplies = Promise.resolve(/** @type {any[]} */ ([]));
    /** Whether a tick's writes may be tried on this thread first. */
    this._inlineWrites = true;
  }

  /**
   * Every single-row write goes through here. Writes issued in the same JS
   * tick are handed to Rust together once the tick's microtasks have run
   * (process.nextTick queued from a microtask runs after all of them) and
   * share one commit; they are tried on this thread first, which SQLite
   * answers without waiting when nobody else is writing.
   * @param {WriteArgs} args
   * @returns {Promise<any>} the row Rust replied with, or null
   */
  _write(args) {
    // Encoded now, so an argument JSON cannot carry refuses this write alone.
    let encoded;
    try {
      encoded = encodeWrite(args);
    } catch (err) {
      return Promise.reject(new Error(`${args.kind}: an argument JSON cannot carry: ${err instanceof Error ? err.message : String(err)}`));
    }
    const index = this._tick.push(encoded) - 1;
    if (index === 0) {
      this._tickReplies = new Promise((resolve, reject) => process.nextTick(() => this._flush(resolve, reject)));
    }
    // One promise settles the whole tick; each write only derives its own from
    // it (no settler functions per write: less garbage for long submit runs).
    return this._tickReplies.then(replyAt(index));
  }

  /**
   * @param {(replies: any[]) => void} resolve
   * @param {(err: unknown) => void} reject
   */
  _flush(resolve, reject) {
    // One JSON text crosses to Rust, and one comes back.
    const text = `[${this._tick.join(",")}]`;
    this._tick = [];
    if (this._inlineWrites) {
      let now;
      try {
        now = this._native.writeNow(text);
      } catch (err) {
        reject(fromNative(err));
        return;
      }
      if (now != null) {
        resolve(JSON.parse(now));
        return;
      }
    }
    this._native.writeMany(text).then(
      (replies) => resolve(JSON.parse(replies)),
      (err) => reject(fromNative(err)),
    );
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
    nativeSync(() => this._native.useBackpressure(backpressureArgs(opts)));
  }

  /**
   * An encoding failure rejects the returned promise rather than throwing.
   * (Not an async function: one promise per submit, not two.)
   * @param {SubmitInput} input
   * @returns {Promise<Task>}
   */
  submit(input) {
    const tracer = activeTracer();
    if (tracer !== null) return tracedSubmit(tracer, input, (traced) => this._submitNow(traced));
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

  /** @param {SubmitInput} input */
  _submitArgs(input) {
    return {
      name: input.name,
      payload: dumpJson(input.payload ?? {}),
      metadata: dumpJson(input.metadata ?? {}),
      // null means "use the default" like undefined (docs/api.md, "Values and
      // JSON"); the native layer only accepts undefined for an absent value.
      queue: input.queue ?? undefined,
      key: input.key ?? undefined,
      conflict: input.conflict ?? undefined,
      maxAttempts: input.maxAttempts ?? undefined,
      priority: input.priority ?? undefined,
      parentId: input.parentId ?? undefined,
      rootId: input.rootId ?? undefined,
      correlationId: input.correlationId ?? undefined,
      runAtDelayMs: input.runAtDelayMs ?? undefined,
      debounceMs: input.debounceMs ?? undefined,
      maxDelayMs: input.maxDelayMs ?? undefined,
    };
  }

  /**
   * @param {string} taskId
   * @returns {Promise<Task | null>}
   */
  get(taskId) {
    if (!namesTask(taskId)) return NO_TASK;
    return this._pointRead(() => this._native.getNow(taskId), () => this._native.get(taskId));
  }

  /**
   * @param {string} key
   * @returns {Promise<Task | null>}
   */
  getByKey(key) {
    if (!namesTask(key)) return NO_TASK;
    return this._pointRead(() => this._native.getByKeyNow(key), () => this._native.getByKey(key));
  }

  // A point read answered inline on a WAL reader costs ~7 µs; through a reader
  // thread, 25–130 µs on the development machine (bench/client.mjs). So it is
  // answered inline whenever SQLite can answer without waiting, and otherwise
  // (not connected yet, busy, Postgres) takes the asynchronous path.
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
    // null filters mean "no filter" (docs/api.md, "Values and JSON").
    const args = {
      status: input.status ?? undefined,
      queue: input.queue ?? undefined,
      name: input.name ?? undefined,
      rootId: input.rootId ?? undefined,
      correlationId: input.correlationId ?? undefined,
      limit: input.limit ?? undefined,
      offset: input.offset ?? undefined,
      bodies: input.bodies ?? undefined,
    };
    return this._native.list(args).then(parseRows, raise);
  }

  /**
   * @param {string} taskId
   * @returns {Promise<Task | null>}
   */
  cancel(taskId) {
    if (!namesTask(taskId)) return NO_TASK;
    return this._write({ kind: "cancel", taskId });
  }

  /**
   * @param {string} key
   * @returns {Promise<Task | null>}
   */
  cancelByKey(key) {
    if (!namesTask(key)) return NO_TASK;
    return this._write({ kind: "cancelByKey", key });
  }

  /**
   * @param {string} taskId
   * @param {RetryOptions} [opts]
   * @returns {Promise<Task | null>}
   */
  retry(taskId, opts = {}) {
    if (!namesTask(taskId)) return NO_TASK;
    return this._write({ kind: "retry", taskId, resetAttempt: opts.resetAttempt === true });
  }

  /**
   * @param {string} key
   * @param {RetryOptions} [opts]
   * @returns {Promise<Task | null>}
   */
  retryByKey(key, opts = {}) {
    if (!namesTask(key)) return NO_TASK;
    return this._write({ kind: "retryByKey", key, resetAttempt: opts.resetAttempt === true });
  }

  /**
   * @param {PurgeInput} [input]
   * @returns {Promise<string[]>}
   */
  purge(input = {}) {
    return this._native.purge(purgeArgs(input)).catch(raise);
  }

  /**
   * How many tasks `purge(input)` would delete now (at most its `limit`),
   * checked as `purge` checks it; deletes nothing.
   * @param {PurgeInput} [input]
   * @returns {Promise<number>}
   */
  purgeCount(input = {}) {
    return this._native.purgeCount(purgeArgs(input)).catch(raise);
  }

  /**
   * Every queue's counts, or only `queue`'s (present even with no rows).
   * @param {string | null} [queue]
   * @returns {Promise<Record<string, Record<TaskStatus, number>>>}
   */
  stats(queue) {
    return this._native.stats(queue ?? undefined).then(parseRows, raise);
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
    let active = true;
    const deliver = (/** @type {import("../binding.js").WatchSignalObject} */ native) => {
      if (!active) return;
      /** @type {WatchSignal} */
      const signal = { reason: /** @type {WatchSignal["reason"]} */ (native.reason) };
      if (native.queue != null) signal.queue = native.queue;
      if (native.taskId != null) signal.taskId = native.taskId;
      try {
        onSignal(signal);
      } catch {
        // a consumer's throw is its own: the other subscribers keep their signals
      }
    };
    const watch = new NativeWatch(this._native, opts?.queues ?? undefined, opts?.pollMs ?? undefined, deliver);
    return () => {
      active = false;
      watch.stop();
    };
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
   * @template T
   * @param {{ queues: string[], workerId: string, leaseMs?: number, names?: string[] | null }} input
   * @param {(draw: Draw) => Promise<T>} plan
   * @returns {Promise<T | undefined>}
   */
  async claimSession(input, plan) {
    const session = nativeSync(() =>
      this._native.openClaimSession({
        queues: input.queues,
        workerId: input.workerId,
        leaseMs: input.leaseMs ?? undefined,
        names: input.names ?? undefined,
      }),
    );
    if (!(await session.opened().catch(raise))) return undefined;
    /** @type {Draw} */
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

  /**
   * @param {{ taskId: string, workerId: string, leaseMs?: number }} input
   * @returns {Promise<Task>}
   */
  heartbeat(input) {
    return this._write({
      kind: "heartbeat",
      taskId: input.taskId,
      workerId: input.workerId,
      leaseMs: input.leaseMs ?? undefined,
    });
  }

  /**
   * @param {{ taskIds: string[], workerId: string, leaseMs?: number }} input
   * @returns {Promise<Map<string, boolean>>}
   */
  async heartbeatBatch(input) {
    if (input.taskIds.length === 0) return new Map();
    const pairs = await this._native
      .heartbeatBatch(input.taskIds, input.workerId, input.leaseMs)
      .catch(raise);
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
      progress: input.progress ?? undefined,
      message: input.message ?? undefined,
    });
  }

  /**
   * @param {{ taskId: string, workerId: string, result?: unknown }} input
   * @returns {Promise<Task>}
   */
  async succeed(input) {
    const json = dumpOptionalJson(input.result) ?? undefined;
    return this._write({ kind: "succeed", taskId: input.taskId, workerId: input.workerId, json });
  }

  /**
   * @param {{ taskId: string, workerId: string, result?: unknown }} input
   * @returns {Promise<Task>}
   */
  async complete(input) {
    const json = dumpOptionalJson(input.result) ?? undefined;
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
   * @param {(id: number, resultJson: string | undefined) => Promise<R>} settle
   * @returns {Promise<{ task: R, value: T }>}
   */
  async _completeIn(fn, settle) {
    const shared = await this._native.sharedTxOpen().catch(raise);
    let value;
    let resultJson;
    try {
      value = await fn(this._sessionOf(shared));
      resultJson = dumpOptionalJson(value) ?? undefined;
    } catch (err) {
      await this._native.sharedTxAbort(shared.id).catch(() => {});
      throw err;
    }
    return { task: await settle(shared.id, resultJson), value };
  }

  /**
   * @internal The caller's session in a shared transaction on the native
   * connection: `query(text, values)` resolves to row objects, `exec(sql)`
   * runs parameterless SQL.
   * @param {{ id: number, session?: number | null }} shared
   * @returns {import("../index.js").PgSession}
   */
  _sessionOf(shared) {
    const native = this._native;
    return {
      query: (text, values = []) =>
        native.sharedTxQuery(shared.id, text, JSON.stringify(values, bigints)).then((rows) => JSON.parse(rows), raise),
      exec: (sql) => native.sharedTxQuery(shared.id, sql, undefined).then(() => undefined, raise),
    };
  }

  /**
   * @internal Poll until terminal (docs/api.md, "Waits and call"); used by
   * CairnQ.wait/call.
   * @param {string} taskId
   * @param {WaitOptions} opts
   * @returns {Promise<Task>}
   */
  _wait(taskId, opts) {
    if (!namesTask(taskId)) return untilDeadline(taskId, null, opts);
    // The native wait resolves with a row (never "no row") or rejects.
    return /** @type {Promise<Task>} */ (this._native.wait(taskId, waitArgs(opts)).then(parseRow, raise));
  }

  /**
   * @internal
   * @param {string} key
   * @param {WaitOptions} opts
   * @returns {Promise<Task>}
   */
  _waitByKey(key, opts) {
    if (!namesTask(key)) return untilDeadline(key, key, opts);
    return /** @type {Promise<Task>} */ (this._native.waitByKey(key, waitArgs(opts)).then(parseRow, raise));
  }
}

/**
 * `purge` input as the core takes it: null filters are off.
 * @param {PurgeInput} input
 */
function purgeArgs(input) {
  const { olderThanMs, queue, status, name, limit } = input;
  return {
    olderThanMs: olderThanMs ?? undefined,
    queue: queue ?? undefined,
    // Any non-null status reaches the core's check, which words the refusal.
    status: status == null ? undefined : String(status),
    name: name ?? undefined,
    limit: limit ?? undefined,
  };
}

/**
 * The core's open mode for a store's options (`existing`, `ownOnly`).
 * @param {{ existing?: boolean, ownOnly?: boolean }} opts
 * @returns {string | undefined}
 */
function openMode(opts) {
  if (opts.existing === true) return "existing";
  return opts.ownOnly === true ? "own" : undefined;
}

/**
 * @param {WaitOptions} opts
 * @returns {import("../binding.js").WaitArgs}
 */
function waitArgs(opts) {
  return {
    timeoutMs: opts.timeoutMs ?? undefined,
    pollMs: opts.pollMs ?? undefined,
    maxPollMs: opts.maxPollMs ?? undefined,
  };
}

/** Tick positions whose reply readers are made once and kept. */
const KEPT_READERS = 1024;
/** @type {((replies: any[]) => any)[]} */
const keptReaders = [];

/**
 * The reader of reply `index` of a tick: the row (or null), or the write's own
 * error. The first KEPT_READERS positions share one function across ticks.
 * @param {number} index
 * @returns {(replies: any[]) => any}
 */
function replyAt(index) {
  if (index >= KEPT_READERS) return readerOf(index);
  return (keptReaders[index] ??= readerOf(index));
}

/**
 * @param {number} index
 * @returns {(replies: any[]) => any}
 */
function readerOf(index) {
  return (replies) => {
    const reply = replies[index];
    if (reply !== null && reply.cairnq !== undefined) throw fromNative(JSON.stringify(reply));
    return reply;
  };
}

/**
 * A write as JSON; numbers JSON cannot carry travel as their String(n) (so
 * Rust names them in its error). A replacer slows every key down, so it is
 * used only for the writes that hold such a number.
 * @param {WriteArgs} args
 * @returns {string}
 */
function encodeWrite(args) {
  return holdsNonFinite(args) ? JSON.stringify(args, nonFiniteAsText) : JSON.stringify(args);
}

/**
 * @param {Record<string, unknown>} value a write's arguments (plain objects and arrays)
 * @returns {boolean}
 */
function holdsNonFinite(value) {
  for (const key in value) {
    const item = value[key];
    if (typeof item === "number") {
      if (!Number.isFinite(item)) return true;
    } else if (item !== null && typeof item === "object" && holdsNonFinite(/** @type {any} */ (item))) {
      return true;
    }
  }
  return false;
}

/**
 * @param {string} _key
 * @param {unknown} value
 */
function nonFiniteAsText(_key, value) {
  return typeof value === "number" && !Number.isFinite(value) ? String(value) : value;
}

/**
 * @param {BackpressureOptions} opts
 * @returns {import("../binding.js").BackpressureArgs}
 */
function backpressureArgs(opts) {
  return {
    maxQueueDepth: opts.maxQueueDepth,
    maxQueueWaitMs: opts.maxQueueWaitMs,
    queuePollIntervalMs: opts.queuePollIntervalMs,
  };
}

class SQLiteStore extends TaskStore {
  /**
   * `existing` (not part of the 0.7.0 API; the command line and dashboard set
   * it): open only an existing cairnq database, never creating or migrating
   * one; anything else rejects with a plain Error whose `code` is
   * `CAIRNQ_NO_DATABASE` or `CAIRNQ_NOT_CAIRNQ`. `ownOnly` (the command
   * line's `submit`): create or migrate, but refuse (`CAIRNQ_NOT_CAIRNQ`) a
   * file holding another application's tables and no cairnq installation.
   * @param {string} path
   * @param {{ busyTimeoutMs?: number, existing?: boolean, ownOnly?: boolean }} [opts]
   */
  constructor(path, opts = {}) {
    super(nativeSync(() => NativeStore.sqlite(path, opts.busyTimeoutMs, openMode(opts))));
    this.path = path;
  }
}

class PostgresStore extends TaskStore {
  /**
   * `source`: a DSN (the store opens and owns a native pool) or the
   * application's `PgExecutor` (every statement, transaction and LISTEN runs
   * through it; the store never closes it, and `max` does not apply).
   * `schema`: the installation's schema. A DSN store creates it if absent
   * and resolves every connection to it alone; an executor must set its own
   * search_path to it. Either way connect refuses with SchemaMismatch when
   * the connection resolves elsewhere, or (without `schema`) when it would
   * start a second installation beside an existing one.
   * `existing`: as for SQLiteStore.
   * @param {string | import("../index.js").PgExecutor} source
   * @param {{ max?: number, schema?: string, existing?: boolean, ownOnly?: boolean }} [opts]
   */
  constructor(source, opts = {}) {
    if (typeof source === "string") {
      super(
        nativeSync(() =>
          NativeStore.postgres(source, opts.max ?? undefined, opts.schema ?? undefined, openMode(opts)),
        ),
      );
      /** @type {ExecutorBridge | null} */
      this._bridge = null;
    } else if (isExecutor(source)) {
      const bridge = new ExecutorBridge(/** @type {import("../index.js").PgExecutor} */ (source));
      super(NativeStore.executor((/** @type {string} */ text) => bridge.handle(text), opts.schema ?? undefined));
      bridge.native = this._native;
      this._bridge = bridge;
    } else {
      throw new TypeError(
        "PostgresStore needs a connection string or a PgExecutor (an object with query, exec and tx functions)",
      );
    }
    // Every Postgres write crosses the network: none can run inline.
    this._inlineWrites = false;
  }

  /**
   * @internal The caller's session in a shared transaction: the executor's
   * own one, or the native transaction's `query`/`exec`.
   * @param {{ id: number, session?: number | null }} shared
   * @returns {import("../index.js").PgSession}
   */
  _sessionOf(shared) {
    if (this._bridge && shared.session != null) return this._bridge.session(shared.session);
    return super._sessionOf(shared);
  }

  /**
   * @param {string[]} queues
   * @param {number} timeoutMs
   * @returns {Promise<void>}
   */
  claimWake(queues, timeoutMs) {
    return this._native.claimWake(queues, timeoutMs).catch(raise);
  }

  /**
   * @param {string} taskId
   * @param {number} timeoutMs
   * @returns {Promise<void>}
   */
  taskDoneWake(taskId, timeoutMs) {
    return this._native.taskDoneWake(taskId, timeoutMs).catch(raise);
  }
}

/**
 * The methods of `store` that replace this package's own (by a subclass or
 * on the instance), among `methods` (every store method when not given);
 * null when `store` is not one of this package's stores at all.
 * @param {unknown} store
 * @param {string[]} [methods]
 * @returns {string[] | null}
 */
function replacedMethods(store, methods) {
  const own = [SQLiteStore, PostgresStore].find((kind) => store instanceof kind);
  if (!own) return null;
  /** @type {Record<string, unknown>} */
  const given = /** @type {any} */ (store);
  const ours = /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (own.prototype));
  return (methods ?? storeMethods(own)).filter((name) => given[name] !== ours[name]);
}

/**
 * The native store behind `store` when it is one of this package's stores
 * and its `methods` (every store method when not given) are this package's
 * own; null otherwise: such a store is driven through its JS methods, or
 * refused where that cannot be.
 * @param {unknown} store
 * @param {string[]} [methods]
 * @returns {import("../binding.js").NativeStore | null}
 */
function ownNative(store, methods) {
  const replaced = replacedMethods(store, methods);
  return replaced !== null && replaced.length === 0 ? /** @type {any} */ (store)._native : null;
}

/**
 * The methods of a store class and of TaskStore.
 * @param {Function} kind
 * @returns {string[]}
 */
function storeMethods(kind) {
  const names = new Set();
  for (const proto of [TaskStore.prototype, kind.prototype]) {
    for (const [name, descriptor] of Object.entries(Object.getOwnPropertyDescriptors(proto))) {
      if (name !== "constructor" && typeof descriptor.value === "function") names.add(name);
    }
  }
  return [...names];
}

module.exports = {
  TaskStore,
  SQLiteStore,
  PostgresStore,
  backpressureArgs,
  encodeWrite,
  ownNative,
  replacedMethods,
  DEFAULT_WATCH_POLL_MS,
};
