"use strict";
// What the command line and the dashboard do with a database, in one place:
// open it (never creating or migrating it, except for `submit`), read it
// through the client's own API, act on tasks, and classify what went wrong.
// Both front ends format the answers; neither runs SQL of its own.

const { CairnQ } = require("../client.js");
const { SQLiteStore } = require("../sqlite-store.js");
const { PostgresStore } = require("../postgres-store.js");
const { STATUSES, isTerminalStatus } = require("../models.js");

/**
 * @typedef {import("../../index.js").Task} Task
 * @typedef {import("../../index.js").TaskStatus} TaskStatus
 * @typedef {Record<string, Record<TaskStatus, number>>} Stats
 */

/** Exit codes of the command line (README, "Command line"). */
const EXIT = Object.freeze({
  OK: 0,
  /** `wait`: the task failed. */
  FAILED: 1,
  /** Bad usage: unknown command or flag, a bad value. */
  USAGE: 2,
  /** No cairnq database there (missing, foreign, other protocol) or unreachable. */
  NO_DATABASE: 3,
  /** No task with that id or key. */
  NOT_FOUND: 4,
  /** `wait`: the task did not finish in time. */
  TIMEOUT: 5,
  /** `wait`: the task was canceled. */
  CANCELED: 6,
  /** The task's state does not allow the action, or a keyed submit was rejected. */
  REFUSED: 7,
  /** Any other failure (a database error). */
  ERROR: 10,
  /** Stopped by signal n (`top`): exits 128 + n, as a shell reports it. */
  SIGNALED: 128,
});

/** A failure the front ends report as one line with an exit code (or HTTP status). */
class InspectError extends Error {
  /**
   * @param {string} message
   * @param {number} exitCode one of EXIT
   */
  constructor(message, exitCode) {
    super(message);
    this.name = "InspectError";
    this.exitCode = exitCode;
  }
}

/** @param {string} db */
function isPostgres(db) {
  return /^postgres(ql)?:\/\//i.test(db);
}

/**
 * A client on `db` (a SQLite path or a postgres:// DSN). Unless `create` is
 * set, the store only opens an existing cairnq database: it never creates a
 * file, migrates or writes anything while deciding (the core's
 * `OpenMode::Existing`). With `create`, a SQLite file holding another
 * application's tables is refused unless `init` is set too
 * (`OpenMode::MigrateOwn`). A URL of another scheme (`mysql://…`) is refused:
 * it would otherwise be taken for a file path.
 * @param {string} db
 * @param {{ create?: boolean, init?: boolean }} [opts]
 * @returns {CairnQ}
 */
function openClient(db, opts = {}) {
  const existing = !opts.create;
  if (typeof db !== "string" || db === "") throw new InspectError("no database given", EXIT.USAGE);
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(db)?.[1];
  if (scheme !== undefined && !isPostgres(db)) {
    throw new InspectError(
      `unsupported database URL ${scheme}://…: give a SQLite file path or a postgres:// DSN`,
      EXIT.USAGE,
    );
  }
  try {
    const store = isPostgres(db)
      ? new PostgresStore(db, { max: 4, existing })
      : new SQLiteStore(db, { existing, ownOnly: opts.create === true && opts.init !== true });
    return new CairnQ(store);
  } catch (err) {
    throw classify(err);
  }
}

/**
 * The InspectError a failure of the store maps to.
 * @param {unknown} err
 * @returns {InspectError}
 */
function classify(err) {
  if (err instanceof InspectError) return err;
  const e = /** @type {Error & { code?: string }} */ (err instanceof Error ? err : new Error(String(err)));
  const message = e.message.split("\n")[0];
  if (e.code === "CAIRNQ_NO_DATABASE" || e.code === "CAIRNQ_NOT_CAIRNQ")
    return new InspectError(message, EXIT.NO_DATABASE);
  if (e.name === "ProtocolVersionMismatch") {
    return new InspectError(`${message}: this database belongs to another cairnq protocol version`, EXIT.NO_DATABASE);
  }
  if (/^(cannot connect to Postgres|cannot open |invalid (Postgres )?(DSN|connection string))/i.test(message)) {
    return new InspectError(message, EXIT.NO_DATABASE);
  }
  if (e.name === "AlreadyExists") return new InspectError(message, EXIT.REFUSED);
  if (e.code === "CAIRNQ_NO_SCHEDULE") return new InspectError(message, EXIT.NOT_FOUND);
  // A value the store refuses to encode (`submit db job 1e999`: Infinity).
  if (e.name === "SerializationError") return new InspectError(message, EXIT.USAGE);
  // The store's argument checks: plain Errors without a driver code.
  if (e.name === "Error" && e.code === undefined && /must be|unknown (status|conflict)|got |debounceMs/.test(message)) {
    return new InspectError(message, EXIT.USAGE);
  }
  return new InspectError(message, EXIT.ERROR);
}

/**
 * Every queue's counts, or one queue's (zero-filled when it has no tasks).
 * `stats(queue)` is the store's filtered form (docs: UPGRADE §3.2); the pick
 * below keeps the answer the same on a store that still counts every queue.
 * @param {CairnQ} client
 * @param {string} [queue]
 * @returns {Promise<Stats>}
 */
async function stats(client, queue) {
  const all = /** @type {Stats} */ (await /** @type {any} */ (client).stats(queue));
  if (queue === undefined) return all;
  return { [queue]: all[queue] ?? zeroCounts() };
}

/** @returns {Record<TaskStatus, number>} */
function zeroCounts() {
  return /** @type {Record<TaskStatus, number>} */ (Object.fromEntries(STATUSES.map((s) => [s, 0])));
}

/**
 * A task by id or by key, or an InspectError (NOT_FOUND).
 * @param {CairnQ} client
 * @param {{ id?: string, key?: string }} ref
 * @returns {Promise<Task>}
 */
async function getTask(client, ref) {
  const task =
    ref.key !== undefined ? await client.getByKey(ref.key) : await client.get(/** @type {string} */ (ref.id));
  if (!task) throw new InspectError(`no task ${describeRef(ref)}`, EXIT.NOT_FOUND);
  return task;
}

/** @param {{ id?: string, key?: string }} ref */
function describeRef(ref) {
  return ref.key !== undefined ? `with key ${JSON.stringify(ref.key)}` : String(ref.id);
}

/**
 * Retry a failed or canceled task (with `fromStep`, also a succeeded one,
 * its steps from that one on dropped). A missing task is NOT_FOUND; a task in
 * another state is REFUSED, with its state named.
 * @param {CairnQ} client
 * @param {{ id?: string, key?: string }} ref
 * @param {{ resetAttempt?: boolean, fromStep?: string }} [opts]
 * @returns {Promise<Task>}
 */
async function retryTask(client, ref, opts = {}) {
  return actOnTask(
    client,
    ref,
    (id) => refusedAsState(client.retry(id, opts)),
    (key) => refusedAsState(client.retryByKey(key, opts)),
    "only failed or canceled tasks can be retried",
  );
}

/**
 * A restart from a step the core refused (the task's state, or a step it has
 * not stored: its messages name `fromStep`) is REFUSED, as a state that does
 * not allow the action.
 * @template T
 * @param {Promise<T>} action
 * @returns {Promise<T>}
 */
async function refusedAsState(action) {
  try {
    return await action;
  } catch (err) {
    if (/** @type {Error} */ (err).message?.startsWith("fromStep")) {
      throw new InspectError(/** @type {Error} */ (err).message, EXIT.REFUSED);
    }
    throw err;
  }
}

/**
 * Cancel a queued task, or request the cancel of a running one.
 * @param {CairnQ} client
 * @param {{ id?: string, key?: string }} ref
 * @returns {Promise<Task>}
 */
async function cancelTask(client, ref) {
  return actOnTask(
    client,
    ref,
    (id) => client.cancel(id),
    (key) => client.cancelByKey(key),
    "only queued or running tasks can be canceled",
  );
}

/**
 * Send signal `name` (and `payload`) to an unfinished task (docs/api.md,
 * "Signals"). A missing task is NOT_FOUND; a finished one is REFUSED.
 * @param {CairnQ} client
 * @param {{ id?: string, key?: string }} ref
 * @param {string} name
 * @param {unknown} payload
 * @returns {Promise<true>}
 */
async function signalTask(client, ref, name, payload) {
  return /** @type {Promise<true>} */ (
    actOnTask(
      client,
      ref,
      (id) => client.signal(id, name, payload),
      (key) => client.signalByKey(key, name, payload),
      "only queued or running tasks take signals",
    )
  );
}

/**
 * Act on a task by id or by key; when the action answers null, refuse with
 * the task's status (or "no such task" from `getTask`).
 * @param {CairnQ} client
 * @param {{ id?: string, key?: string }} ref
 * @template T
 * @param {(id: string) => Promise<T | false | null>} byId
 * @param {(key: string) => Promise<T | false | null>} byKey
 * @param {string} refusal
 * @returns {Promise<T>}
 */
async function actOnTask(client, ref, byId, byKey, refusal) {
  const done = ref.key !== undefined ? await byKey(ref.key) : await byId(/** @type {string} */ (ref.id));
  if (done) return done;
  const task = await getTask(client, ref);
  throw new InspectError(`task ${task.id} is ${task.status}: ${refusal}`, EXIT.REFUSED);
}

/**
 * @typedef {{ olderThanMs?: number, status?: TaskStatus, queue?: string, name?: string, limit?: number }} PurgeFilter
 */

/**
 * Purge terminal tasks; with `dryRun`, count what would go instead (the
 * store's bounded `purgeCount`: the purge's own statement predicate, at most
 * `limit`, on the database's clock).
 * @param {CairnQ} client
 * @param {PurgeFilter & { dryRun?: boolean }} filter
 * @returns {Promise<{ dryRun: true, count: number } | { dryRun: false, count: number, ids: string[] }>}
 */
async function purge(client, filter) {
  const { dryRun = false, ...input } = filter;
  if (input.status !== undefined && !isTerminalStatus(input.status)) {
    throw new InspectError(`status must be terminal, got ${input.status}`, EXIT.USAGE);
  }
  if (dryRun) return { dryRun: true, count: await client.purgeCount(/** @type {any} */ (input)) };
  const ids = await client.purge(/** @type {any} */ (input));
  return { dryRun: false, count: ids.length, ids };
}

/**
 * A page of tasks without their bodies (payload, result, error, metadata),
 * which the store then never reads: what the CLI's `list` and the
 * dashboard's task list show, bounded in bytes as in rows.
 * @param {CairnQ} client
 * @param {import("../../index.js").ListInput} input
 * @returns {Promise<import("../../index.js").TaskSummary[]>}
 */
function listSummaries(client, input) {
  return client.list({ ...input, bodies: false });
}

/** Bodies longer than this (as JSON text) reach the dashboard's task page truncated. */
const BODY_PREVIEW_CHARS = 64 * 1024;

/**
 * Text values (names, queues, ids, messages) longer than this reach the
 * dashboard cut, so a row's size has a bound whoever wrote it. Twice the
 * longest name the API takes (the core's MAX_NAME_BYTES, 512), so every name
 * submitted through it arrives whole.
 */
const TEXT_PREVIEW_CHARS = 1024;

/**
 * `text` cut to its first `limit` characters, with what was cut said; other
 * values as they are.
 * @template T
 * @param {T} text
 * @param {number} [limit]
 * @returns {T | string}
 */
function truncateText(text, limit = TEXT_PREVIEW_CHARS) {
  if (typeof text !== "string" || text.length <= limit) return text;
  return `${text.slice(0, limit)}… (${text.length - limit} more characters)`;
}

/** A task's JSON bodies: bounded as JSON text, by `truncateBodies`. */
const BODIES = ["payload", "result", "error", "metadata"];

/**
 * `row` with every text field but a body cut as `truncateText` cuts it: a
 * task, a summary row or a schedule, as the dashboard sends it.
 * @template {object} T
 * @param {T} row
 * @returns {T}
 */
function truncateTexts(row) {
  const out = /** @type {Record<string, unknown>} */ ({ ...row });
  for (const [key, value] of Object.entries(out)) if (!BODIES.includes(key)) out[key] = truncateText(value);
  return /** @type {T} */ (out);
}

/**
 * `task` with each body (payload, result, error, metadata) whose JSON text is
 * longer than `limit` characters replaced by `{ truncated: true, chars,
 * preview }`: its length and its first `limit` characters, and its text
 * fields cut (`truncateTexts`). The dashboard's task page and action answers,
 * so one huge payload or name cannot make every view of it huge.
 * @param {Task} task
 * @param {number} [limit]
 * @returns {Task}
 */
function truncateBodies(task, limit = BODY_PREVIEW_CHARS) {
  const out = /** @type {Record<string, unknown>} */ (truncateTexts(task));
  for (const key of BODIES) {
    const text = JSON.stringify(out[key] ?? null);
    if (text.length > limit) out[key] = { truncated: true, chars: text.length, preview: text.slice(0, limit) };
  }
  return /** @type {Task} */ (/** @type {unknown} */ (out));
}

/**
 * The tasks `task` submitted (its children): tasks of its tree whose parent
 * it is. One bounded read of the tree.
 * @param {CairnQ} client
 * @param {Task} task
 * @param {number} [limit]
 * @returns {Promise<import("../../index.js").TaskSummary[]>}
 */
async function spawned(client, task, limit = 200) {
  const root = task.root_id ?? task.id;
  const tree = await listSummaries(client, { rootId: root, limit });
  return tree.filter((t) => t.parent_id === task.id);
}

/**
 * Throughput from successive `stats` snapshots, sampled as often as their
 * reader reads (a timer, or changes as they come): tasks finished per second
 * in each period of `periodMs` up to the last sample, what two samples saw
 * spread evenly over the time between them, so an idle gap reads as zeros
 * (a purge in between never reads as negative).
 */
class Throughput {
  /**
   * @param {number} [keep] periods kept
   * @param {number} [periodMs] one period's length
   */
  constructor(keep = 60, periodMs = 1000) {
    this.keep = keep;
    this.periodMs = periodMs;
    /** @type {{ at: number, done: Record<string, number> }[]} */
    this.samples = [];
  }

  /**
   * @param {Stats} snapshot
   * @param {number} [at]
   */
  add(snapshot, at = Date.now()) {
    /** @type {Record<string, number>} */
    const done = {};
    for (const [queue, counts] of Object.entries(snapshot)) {
      done[queue] = counts.succeeded + counts.failed + counts.canceled;
    }
    this.samples.push({ at, done });
    const from = at - this.keep * this.periodMs;
    while (this.samples.length > 2 && this.samples[1].at <= from) this.samples.shift();
  }

  /**
   * Finished per second in each period, oldest first, the last one ending at
   * the last sample; one queue or all of them.
   * @param {string} [queue]
   * @returns {number[]}
   */
  series(queue) {
    if (this.samples.length < 2) return [];
    const end = this.samples[this.samples.length - 1].at;
    const start = Math.max(this.samples[0].at, end - this.keep * this.periodMs);
    const periods = Math.max(1, Math.ceil((end - start) / this.periodMs));
    const finished = new Array(periods).fill(0);
    /** @param {number} i */
    const periodStart = (i) => Math.max(start, end - (periods - i) * this.periodMs);
    for (let k = 1; k < this.samples.length; k++) {
      const a = this.samples[k - 1];
      const b = this.samples[k];
      const delta = queue === undefined ? sum(b.done) - sum(a.done) : (b.done[queue] ?? 0) - (a.done[queue] ?? 0);
      if (delta <= 0 || b.at <= a.at) continue;
      for (let i = 0; i < periods; i++) {
        const overlap = Math.min(b.at, periodStart(i + 1)) - Math.max(a.at, periodStart(i));
        if (overlap > 0) finished[i] += (delta * overlap) / (b.at - a.at);
      }
    }
    return finished.map((n, i) => n / (Math.max(1, periodStart(i + 1) - periodStart(i)) / 1000));
  }
}

/** @param {Record<string, number>} counts */
function sum(counts) {
  return Object.values(counts).reduce((a, b) => a + b, 0);
}

/**
 * How long the oldest queued task of `queue` has waited, or null when none
 * is queued. `list` is newest first, so the oldest is the last of `queued`.
 * @param {CairnQ} client
 * @param {string} queue
 * @param {number} queued
 * @returns {Promise<number | null>}
 */
async function oldestQueuedAgeMs(client, queue, queued) {
  if (queued <= 0) return null;
  const [oldest] = await listSummaries(client, { queue, status: "queued", limit: 1, offset: queued - 1 });
  return oldest ? Math.max(0, Date.now() - oldest.created_at_ms) : null;
}

module.exports = {
  BODY_PREVIEW_CHARS,
  TEXT_PREVIEW_CHARS,
  EXIT,
  InspectError,
  Throughput,
  cancelTask,
  classify,
  getTask,
  isPostgres,
  oldestQueuedAgeMs,
  openClient,
  listSummaries,
  signalTask,
  purge,
  retryTask,
  spawned,
  stats,
  truncateBodies,
  truncateText,
  truncateTexts,
  zeroCounts,
};
