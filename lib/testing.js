"use strict";
// cairnq/testing (docs/api.md, "Testing"): a SQLite store in a temporary
// directory whose clock stands still until the test moves it, the client over
// it, handlers registered once and run by drain(), and reads of what was
// submitted. The clock, the drain's end and every check are the core's.

const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { AssertionError } = require("node:assert");

const { CairnQ } = require("./client.js");
const { CairnQError } = require("./errors.js");
const { encodeOptions } = require("./json.js");
const { drainLimit } = require("./native.js");
const { nativeSync, raise } = require("./native-call.js");
const { SQLiteStore } = require("./sqlite-store.js");
const { Worker } = require("./worker.js");

/**
 * @typedef {import("../index.js").Task} Task
 * @typedef {import("../index.js").TaskStatus} TaskStatus
 * @typedef {import("../index.js").WorkerOptions} WorkerOptions
 * @typedef {import("../index.js").TaskContext} TaskContext
 * @typedef {import("../testing.js").TestKitOptions} TestKitOptions
 * @typedef {import("../testing.js").DrainOptions} DrainOptions
 * @typedef {import("../testing.js").Drained} Drained
 * @typedef {import("../testing.js").SubmittedFilter} SubmittedFilter
 * @typedef {(...args: any[]) => any} HandlerFn
 */

/** The most tasks `submitted` reads back. */
const SUBMITTED_LIMIT = 100_000;

/** A drain ran more tasks than its `max` and was stopped. */
class DrainLimitError extends CairnQError {
  /**
   * @param {number} max
   * @param {number} tasks
   */
  constructor(max, tasks) {
    super(
      `drain ran ${tasks} tasks, more than max (${max}), and was stopped with tasks perhaps still due: ` +
        "a handler that keeps submitting work, or a drain that needs a larger max",
    );
    this.name = "DrainLimitError";
    this.max = max;
    this.tasks = tasks;
  }
}

/** The store's clock: it stands still until `advance` moves it. */
class TestClock {
  /** @param {SQLiteStore} store */
  constructor(store) {
    this._native = store._native;
  }

  /** Epoch milliseconds on the clock. */
  now() {
    return this._native.clockNow();
  }

  /** The clock's time as a Date. */
  date() {
    return new Date(this.now());
  }

  /**
   * Move the clock `ms` forward (an integer >= 0): delays, retry backoffs,
   * sleeps, schedules, debounces and leases run out by it. Its time after.
   * @param {number} ms
   * @returns {number}
   */
  advance(ms) {
    return nativeSync(() => this._native.advanceClock(encodeOptions({ ms })));
  }
}

class TestKit {
  /** @param {TestKitOptions} [opts] */
  constructor(opts = {}) {
    const { now, queues = ["default"], worker = {} } = opts;
    const startMs = now instanceof Date ? now.getTime() : (now ?? Date.now());
    this._dir = fs.mkdtempSync(path.join(os.tmpdir(), "cairnq-test-"));
    this.store = new SQLiteStore(path.join(this._dir, "queue.db"), { testClockMs: startMs });
    this.client = new CairnQ(this.store);
    this.clock = new TestClock(this.store);
    this._queues = queues;
    this._workerOptions = worker;
    try {
      // Never run: it checks the worker options now, and each registration as it is made.
      this._checks = new Worker(this.store, queues, worker);
    } catch (err) {
      fs.rmSync(this._dir, { recursive: true, force: true });
      throw err;
    }
    /** @type {((worker: Worker, ran: Set<string>) => void)[]} */
    this._registrations = [];
  }

  /**
   * Register a handler every drain runs, in any form `worker.task` takes.
   * @param {...any} args
   * @returns {this}
   */
  task(...args) {
    Reflect.apply(this._checks.task, this._checks, args);
    const fn = /** @type {HandlerFn | undefined} */ (args.at(-1));
    const batch = args.length === 3 && args[1]?.batch != null;
    this._registrations.push((worker, ran) => {
      if (typeof fn !== "function") {
        Reflect.apply(worker.task, worker, args);
        return;
      }
      // The same name (worker.task(fn) reads it) and the same arguments, noting each task it is given.
      const noting = batch
        ? /** @param {TaskContext[]} contexts */ (contexts) => {
            for (const context of contexts) ran.add(context.taskId);
            return fn(contexts);
          }
        : /** @param {TaskContext} context @param {unknown} payload */ (context, payload) => {
            ran.add(context.taskId);
            return fn(context, payload);
          };
      Object.defineProperty(noting, "name", { value: fn.name });
      Reflect.apply(worker.task, worker, [...args.slice(0, -1), noting]);
    });
    return this;
  }

  /**
   * Run the registered handlers until nothing is due now on the test clock
   * (nothing claimable, nothing running, every schedule and debounce
   * follow-up due fired): how many handler runs it made, and the tasks they
   * ran in the order first run, as their rows are now.
   * @param {DrainOptions} [opts]
   * @returns {Promise<Drained>}
   */
  async drain(opts = {}) {
    const max = nativeSync(() => drainLimit(encodeOptions(opts)));
    const worker = new Worker(this.store, this._queues, this._workerOptions);
    /** @type {Set<string>} */
    const ran = new Set();
    for (const register of this._registrations) register(worker, ran);
    const running = worker.run();
    let drained;
    try {
      drained = await worker._native.untilQuiet(max).catch(raise);
    } finally {
      worker.stop();
      await running;
    }
    if (drained.limitReached) throw new DrainLimitError(max, drained.tasks);
    const tasks = await Promise.all([...ran].map((id) => this.store.get(id)));
    return { ran: drained.tasks, tasks: /** @type {Task[]} */ (tasks.filter((t) => t !== null)) };
  }

  /**
   * The tasks submitted, read from the store, oldest first: every one, or
   * those of `name`, `queue` and `status`.
   * @param {SubmittedFilter} [filter]
   * @returns {Promise<Task[]>}
   */
  async submitted(filter = {}) {
    const { name, queue, status } = filter;
    const taskName = typeof name === "object" && name !== null ? name.name : name;
    const rows = await this.store.list({ name: taskName, queue, status, limit: SUBMITTED_LIMIT });
    return rows.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /**
   * `submitted(filter)`, asserting that it found tasks (`count` of them, when
   * given): an AssertionError naming what was submitted instead.
   * @param {SubmittedFilter} [filter]
   * @param {{ count?: number }} [opts]
   * @returns {Promise<Task[]>}
   */
  async assertSubmitted(filter = {}, opts = {}) {
    const found = await this.submitted(filter);
    const wanted = opts.count;
    if (wanted === undefined ? found.length > 0 : found.length === wanted) return found;
    const every = await this.submitted();
    const seen = every.map((t) => `${t.name} (${t.queue}, ${t.status})`).join(", ") || "none";
    throw new AssertionError({
      message:
        `expected ${wanted ?? "some"} submitted tasks matching ${JSON.stringify(filter)}, found ` +
        `${found.length}; submitted: ${seen}`,
      actual: found.length,
      expected: wanted ?? ">= 1",
      operator: "assertSubmitted",
    });
  }

  /** Close the client and the store and remove the temporary directory. */
  async close() {
    await this.client.close();
    fs.rmSync(this._dir, { recursive: true, force: true });
  }
}

/**
 * A test kit on a new temporary database (docs/api.md, "Testing").
 * @param {TestKitOptions} [opts]
 * @returns {TestKit}
 */
function createTestKit(opts) {
  return new TestKit(opts);
}

module.exports = { createTestKit, TestKit, TestClock, DrainLimitError };
