// Worker in one process (API.md §10–§13): registration forms and validation,
// settlement of every way a handler can end, retries and backoff, maxRunMs,
// cancellation, lease loss, scheduling (concurrency, per-name limits,
// resources, claimBatch, batches, byte budget, rotation), the TaskContext a
// handler receives, and the lifecycle methods.
import { describe, test as nodeTest } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";

import {
  CairnQ,
  CairnQError,
  EventLoopBlocked,
  LostLease,
  QueueFull,
  SerializationError,
  TaskContext,
  TaskError,
  TaskTimeout,
  Worker,
  defineTask,
} from "../index.mjs";
import {
  PYTHON,
  claimTask,
  holdWriteLock,
  makeDbPath,
  openClient,
  rejectionOf,
  runPython,
  waitFor,
} from "./helpers.mjs";
import {
  blockEventLoop,
  jsonBytes,
  makeGate,
  makeInFlight,
  makeStore,
  makeWorker,
  rowsOf,
  staysFalse,
  waitAllTerminal,
  waitForStatus,
} from "./worker-helpers.mjs";

// Every test is bounded: a hang fails that test instead of the whole run.
const test = (name, fn) => nodeTest(name, { timeout: 60_000 }, fn);

const ANONYMOUS =
  "worker.task(fn): the handler is anonymous; pass a name explicitly, e.g. worker.task('summary.create', fn)";
const CALL = { waitTimeoutMs: 20_000 };

/** A client and a worker (not started) on one fresh database. */
function setup(t, opts = {}) {
  const { client, dbPath } = openClient(t);
  const handle = makeWorker(t, dbPath, opts);
  return { client, dbPath, handle, worker: handle.worker };
}

/** Assert `fn` throws a plain Error (not a CairnQError) with exactly `message`. */
function assertPlainError(fn, message) {
  assert.throws(fn, (err) => {
    assert.equal(err.constructor, Error, `expected a plain Error, got ${err?.name}`);
    assert.ok(!(err instanceof CairnQError));
    assert.equal(err.message, message);
    return true;
  });
}

async function assertLostLease(promise, taskId) {
  const err = await rejectionOf(promise);
  assert.ok(err instanceof LostLease, `expected LostLease, got ${err?.name}: ${err?.message}`);
  assert.equal(err.taskId, taskId);
  return err;
}

function envelope(type, code, message, retryable, details = {}) {
  return { type, code, message, retryable, details };
}

// ---------------------------------------------------------------------------
describe("task(): registration forms", () => {
  test("a bare named function registers under its name; task() returns the worker", async (t) => {
    const { client, handle, worker } = setup(t);
    function resizeImage(ctx, payload) {
      return { name: ctx.name, width: payload.width };
    }
    assert.equal(worker.task(resizeImage), worker);
    handle.start();
    assert.deepEqual(await client.call("resizeImage", { width: 3 }, CALL), { name: "resizeImage", width: 3 });
  });

  test('every leading "bound " prefix is stripped', async (t) => {
    const { client, handle, worker } = setup(t);
    class Thumbnails {
      constructor() {
        this.size = 64;
      }
      make(ctx, payload) {
        return { size: this.size, payload };
      }
    }
    const thumbs = new Thumbnails();
    function twice() {
      return "twice";
    }
    const doubleBound = twice.bind(null).bind(null);
    assert.equal(doubleBound.name, "bound bound twice");
    worker.task(thumbs.make.bind(thumbs)).task(doubleBound);
    handle.start();
    assert.deepEqual(await client.call("make", { p: 1 }, CALL), { size: 64, payload: { p: 1 } });
    assert.equal(await client.call("twice", {}, CALL), "twice");
  });

  test("an anonymous function is refused with the exact message", (t) => {
    const { worker } = setup(t);
    assertPlainError(() => worker.task(() => {}), ANONYMOUS);
    assertPlainError(() => worker.task(async function () {}), ANONYMOUS);
    // `.bind()` of an anonymous function is named "bound ": empty once stripped.
    assertPlainError(() => worker.task(function () {}.bind(null)), ANONYMOUS);
  });

  test("a string name, a TaskDef, and the options forms", async (t) => {
    const { client, handle, worker } = setup(t);
    const typed = defineTask("typed.def");
    assert.deepEqual(typed, { name: "typed.def" });
    worker
      .task("summary.create", (ctx, payload) => ({ via: "name", payload }))
      .task(typed, (ctx, payload) => ({ via: "def", name: ctx.name, payload }))
      .task(defineTask("batched.def"), { batch: 2 }, (items) => {
        assert.ok(Array.isArray(items));
        return Object.fromEntries(items.map((c) => [c.taskId, { batchOf: items.length, isCtx: c instanceof TaskContext }]));
      })
      .task("limited", { concurrency: 2 }, (ctx, payload) => ({ via: "options", payload, isCtx: ctx instanceof TaskContext }))
      .task("single.batch", { batch: 1 }, (items) => ({ [items[0].taskId]: { array: Array.isArray(items), n: items.length } }));
    handle.start();
    assert.deepEqual(await client.call("summary.create", { a: 1 }, CALL), { via: "name", payload: { a: 1 } });
    assert.deepEqual(await client.call(typed, { b: 2 }, CALL), { via: "def", name: "typed.def", payload: { b: 2 } });
    assert.deepEqual(await client.call("batched.def", {}, CALL), { batchOf: 1, isCtx: true });
    assert.deepEqual(await client.call("limited", { c: 3 }, CALL), { via: "options", payload: { c: 3 }, isCtx: true });
    // batch: 1 still gets the array form.
    assert.deepEqual(await client.call("single.batch", {}, CALL), { array: true, n: 1 });
  });

  test("option validation: batch, then concurrency, then resource (exact messages)", (t) => {
    const { worker } = setup(t, { resources: { gpu: 1, cpu: 2, "a-disk": 1 } });
    const fn = () => {};
    const cases = [
      [{ batch: 0 }, "batch must be an integer >= 1, got 0"],
      [{ batch: 1.5 }, "batch must be an integer >= 1, got 1.5"],
      [{ batch: -2 }, "batch must be an integer >= 1, got -2"],
      [{ batch: NaN }, "batch must be an integer >= 1, got NaN"],
      [{ batch: Infinity }, "batch must be an integer >= 1, got Infinity"],
      [{ concurrency: 0 }, "concurrency must be an integer >= 1, got 0"],
      [{ concurrency: 2.5 }, "concurrency must be an integer >= 1, got 2.5"],
      [{ batch: "2" }, "batch must be an integer >= 1, got 2"],
      [{ concurrency: "many" }, "concurrency must be an integer >= 1, got many"],
      [{ batch: 1.5, concurrency: "many" }, "batch must be an integer >= 1, got 1.5"],
      [{ batch: 0, concurrency: 0 }, "batch must be an integer >= 1, got 0"],
      [{ batch: 0, resource: "tpu" }, "batch must be an integer >= 1, got 0"],
      [{ concurrency: -1, resource: "tpu" }, "concurrency must be an integer >= 1, got -1"],
      [
        { resource: "tpu" },
        'task "x" declares resource "tpu", which is not in WorkerOptions.resources; declared: a-disk, cpu, gpu',
      ],
    ];
    for (const [opts, message] of cases) assertPlainError(() => worker.task("x", opts, fn), message);
    assertPlainError(
      () => worker.task(defineTask("typed"), { batch: 2, resource: "nvme" }, fn),
      'task "typed" declares resource "nvme", which is not in WorkerOptions.resources; declared: a-disk, cpu, gpu',
    );
    // Valid forms are accepted.
    worker.task("ok1", { batch: 1, concurrency: 1, resource: "gpu" }, fn);
    worker.task("ok2", { resource: "a-disk" }, fn);
  });

  test('an undeclared resource with no resources at all lists "none"', (t) => {
    const { worker } = setup(t);
    assertPlainError(
      () => worker.task("embed", { resource: "gpu" }, () => {}),
      'task "embed" declares resource "gpu", which is not in WorkerOptions.resources; declared: none',
    );
  });
});

// ---------------------------------------------------------------------------
describe("construction", () => {
  test("constructor validation messages, in order", (t) => {
    const dbPath = makeDbPath(t);
    const store = makeStore(t, dbPath);
    const make = (opts) => () => new Worker(store, ["default"], opts);
    assertPlainError(make({ maxRunMs: 0 }), "maxRunMs must be > 0, got 0");
    assertPlainError(make({ maxRunMs: -5 }), "maxRunMs must be > 0, got -5");
    assertPlainError(
      make({ maxRunMs: 0, maxInFlightBytes: 0, resources: { x: 0 }, maxQueueDepth: 0 }),
      "maxRunMs must be > 0, got 0",
    );
    assertPlainError(make({ maxInFlightBytes: 0 }), "maxInFlightBytes must be > 0, got 0");
    assertPlainError(
      make({ maxInFlightBytes: -1.5, resources: { x: 0 }, maxQueueDepth: 0 }),
      "maxInFlightBytes must be > 0, got -1.5",
    );
    assertPlainError(make({ resources: { gpu: 0 } }), 'resources["gpu"] must be an integer >= 1, got 0');
    assertPlainError(make({ resources: { ok: 2, 'we"ird': 1.5 } }), 'resources["we\\"ird"] must be an integer >= 1, got 1.5');
    assertPlainError(make({ resources: { gpu: 1 }, maxQueueDepth: 0 }), "maxQueueDepth for * must be an integer >= 1, got 0");
    assertPlainError(make({ maxQueueDepth: { side: 2.5 } }), "maxQueueDepth for side must be an integer >= 1, got 2.5");
    // The factories validate the same way.
    assertPlainError(() => Worker.sqlite(dbPath, { maxRunMs: -1 }), "maxRunMs must be > 0, got -1");
    // Valid options construct.
    new Worker(store, ["default"], { maxRunMs: 0.5, maxInFlightBytes: 1, resources: { gpu: 1, cpu: 16 }, maxQueueDepth: 5 });
  });

  test('the id is "worker_" + a 26-character ULID, fixed per worker, distinct between workers', (t) => {
    const { dbPath, worker } = setup(t);
    const other = makeWorker(t, dbPath).worker;
    assert.match(worker.id, /^worker_[0-9A-HJKMNP-TV-Z]{26}$/);
    assert.equal(worker.id, worker.id);
    assert.notEqual(worker.id, other.id);
  });

  test("Worker.sqlite polls ['default'] by default; explicit queues restrict what is claimed", async (t) => {
    const { client, dbPath, handle } = setup(t);
    const onQ1 = makeWorker(t, dbPath, { queues: ["q1"] });
    handle.worker.task("where", (ctx) => ctx.queue);
    onQ1.worker.task("where", (ctx) => `q1 worker saw ${ctx.queue}`);
    const inQ2 = await client.submit("where", {}, { queue: "q2" });
    onQ1.start();
    assert.equal(await client.call("where", {}, { ...CALL, queue: "q1" }), "q1 worker saw q1");
    handle.start();
    assert.equal(await client.call("where", {}, CALL), "default");
    // Nobody polls q2.
    assert.equal((await client.get(inQ2.id)).status, "queued");
  });
});

// ---------------------------------------------------------------------------
describe("settlement", () => {
  test("a returned value is the result; undefined and null store no result; falsy values are kept", async (t) => {
    const { client, handle, worker } = setup(t);
    worker
      .task("value", (ctx, payload) => ({ echo: payload, list: [1, "two", null] }))
      .task("asyncValue", async () => {
        await Promise.resolve();
        return 5;
      })
      .task("nothing", () => undefined)
      .task("explicitNull", async () => null)
      .task("zero", () => 0)
      .task("no", () => false)
      .task("empty", () => "");
    handle.start();
    const ids = {};
    for (const name of ["value", "asyncValue", "nothing", "explicitNull", "zero", "no", "empty"]) {
      ids[name] = (await client.submit(name, { n: 1 })).id;
    }
    const rows = Object.fromEntries(
      (await waitAllTerminal(client, Object.values(ids))).map((row) => [row.name, row]),
    );
    const expected = {
      value: { echo: { n: 1 }, list: [1, "two", null] },
      asyncValue: 5,
      nothing: null,
      explicitNull: null,
      zero: 0,
      no: false,
      empty: "",
    };
    for (const [name, result] of Object.entries(expected)) {
      const row = rows[name];
      assert.equal(row.status, "succeeded", name);
      assert.deepEqual(row.result, result, name);
      assert.equal(row.attempt, 1);
      assert.equal(row.error, null);
      assert.equal(row.progress, 1);
      assert.equal(row.lease_until_ms, null);
      assert.ok(row.completed_at_ms != null);
      assert.equal(row.worker_id, worker.id);
    }
  });

  test("a thrown Error is a retryable handler_error typed by the error's name, with backoff", async (t) => {
    const { client, handle, worker } = setup(t, { retryBackoffMs: 60_000, retryBackoffMaxMs: 60_000 });
    class QuotaError extends Error {
      constructor(message) {
        super(message);
        this.name = "QuotaError";
      }
    }
    worker
      .task("sync", () => {
        throw new QuotaError("over quota");
      })
      .task("async", async () => {
        await Promise.resolve();
        throw new TypeError("bad type");
      });
    handle.start();
    const a = await client.submit("sync", {}, { maxAttempts: 3 });
    const b = await client.submit("async", {}, { maxAttempts: 3 });
    for (const [task, expected] of [
      [a, envelope("QuotaError", "handler_error", "over quota", true)],
      [b, envelope("TypeError", "handler_error", "bad type", true)],
    ]) {
      const row = await waitFor(async () => {
        const r = await client.get(task.id);
        return r.attempt === 1 && r.status === "queued" && r.error ? r : null;
      });
      assert.deepEqual(row.error, expected);
      assert.deepEqual(Object.keys(row.error), ["type", "code", "message", "retryable", "details"]);
      assert.equal(row.worker_id, null);
      const delay = row.run_at_ms - row.updated_at_ms;
      assert.ok(delay >= 30_000 && delay < 60_000, `backoff ${delay} within [30000, 60000)`);
    }
  });

  test("a TaskError decides its own record: permanent with its code/details, or retryable", async (t) => {
    const { client, handle, worker } = setup(t, { retryBackoffMs: 60_000, retryBackoffMaxMs: 60_000 });
    worker
      .task("permanent", () => {
        throw new TaskError("bad input", { code: "bad_input", details: { field: "email" } });
      })
      .task("typed", () => {
        throw new TaskError("nope", { code: "denied", type: "Validation", retryable: false });
      })
      .task("again", async () => {
        throw new TaskError("try later", { code: "busy", retryable: true });
      })
      .task("bigDetails", () => {
        throw new TaskError("big", { details: { n: 10n } });
      });
    handle.start();
    const permanent = await client.submit("permanent", {}, { maxAttempts: 3 });
    const typed = await client.submit("typed", {}, { maxAttempts: 3 });
    const again = await client.submit("again", {}, { maxAttempts: 3 });
    const big = await client.submit("bigDetails", {}, { maxAttempts: 3 });

    let row = await waitForStatus(client, permanent.id, "failed");
    assert.equal(row.attempt, 1, "not retried although attempts were left");
    assert.deepEqual(row.error, envelope("TaskError", "bad_input", "bad input", false, { field: "email" }));
    assert.ok(row.completed_at_ms != null);
    row = await waitForStatus(client, typed.id, "failed");
    assert.deepEqual(row.error, envelope("Validation", "denied", "nope", false));
    // Unencodable details: the failure is still recorded, details stripped.
    row = await waitForStatus(client, big.id, "failed");
    assert.deepEqual(row.error, envelope("TaskError", "task_error", "big", false));
    row = await waitFor(async () => {
      const r = await client.get(again.id);
      return r.attempt === 1 && r.status === "queued" && r.error ? r : null;
    });
    assert.deepEqual(row.error, envelope("TaskError", "busy", "try later", true));
    assert.ok(row.run_at_ms - row.updated_at_ms >= 30_000);
  });

  test("thrown non-Error values never crash the worker and are recorded per API.md §4.1", async (t) => {
    const reports = [];
    const { client, handle, worker } = setup(t, { onError: (err, info) => reports.push([err, info]) });
    const throwers = {
      aString: () => "plain string",
      anUndefined: () => undefined,
      aNull: () => null,
      aNumber: () => 42,
      aSymbol: () => Symbol("sym"),
      namedObject: () => ({ name: "Weird", message: "object message" }),
      bareObject: () => ({ code: 5 }),
      objectWithMessageOnly: () => ({ message: "only a message" }),
    };
    for (const [name, value] of Object.entries(throwers)) {
      worker.task(name, async () => {
        throw value();
      });
    }
    worker.task("rejectsNumber", () => Promise.reject(7));
    worker.task("fine", () => "still alive");
    handle.start();
    const ids = {};
    for (const name of [...Object.keys(throwers), "rejectsNumber"]) {
      ids[name] = (await client.submit(name, {}, { maxAttempts: 1 })).id;
    }
    const expected = {
      aString: envelope("TaskError", "task_error", "plain string", true),
      anUndefined: envelope("TaskError", "task_error", "undefined", true),
      aNull: envelope("TaskError", "task_error", "null", true),
      aNumber: envelope("TaskError", "task_error", "42", true),
      aSymbol: envelope("TaskError", "task_error", "Symbol(sym)", true),
      namedObject: envelope("Weird", "handler_error", "object message", true),
      bareObject: envelope("Error", "handler_error", "[object Object]", true),
      objectWithMessageOnly: envelope("Error", "handler_error", "only a message", true),
      rejectsNumber: envelope("TaskError", "task_error", "7", true),
    };
    for (const [name, id] of Object.entries(ids)) {
      const row = await waitForStatus(client, id, "failed");
      assert.deepEqual(row.error, expected[name], name);
      assert.equal(row.attempt, 1);
    }
    assert.equal(await client.call("fine", {}, CALL), "still alive");
    assert.deepEqual(reports, [], "task failures go to the database, not to onError");
  });

  test("a handler throwing LostLease records nothing: the task waits for lease expiry", async (t) => {
    const leaseMs = 600;
    const { client, handle, worker } = setup(t, { leaseMs, retryBackoffMs: 0, concurrency: 2 });
    const thrown = makeGate();
    worker.task("flaky", (ctx) => {
      if (ctx.attempt === 1) {
        thrown.release();
        throw new LostLease(ctx.taskId);
      }
      return { attempt: ctx.attempt, at: Date.now() };
    });
    const task = await client.submit("flaky", {}, { maxAttempts: 3 });
    handle.start();
    await thrown.promise;
    const afterThrow = await client.get(task.id);
    assert.equal(afterThrow.status, "running", "left running, not failed or re-queued");
    assert.equal(afterThrow.attempt, 1);
    assert.equal(afterThrow.worker_id, worker.id);
    const done = await waitForStatus(client, task.id, "succeeded");
    assert.equal(done.attempt, 2);
    assert.equal(done.error, null, "no failure was ever recorded (error is never cleared)");
    assert.ok(
      done.result.at >= afterThrow.lease_until_ms,
      `redelivered at ${done.result.at}, before the lease ran out at ${afterThrow.lease_until_ms}`,
    );
  });

  test("an unserializable result fails the task permanently with unserializable_result", async (t) => {
    const { client, handle, worker } = setup(t);
    const circular = { a: 1 };
    circular.self = circular;
    const engineMessage = (value) => {
      try {
        JSON.stringify(value);
      } catch (err) {
        return err.message;
      }
      throw new Error("expected JSON.stringify to throw");
    };
    const cases = {
      bigint: [() => ({ n: 10n }), engineMessage({ n: 10n })],
      nan: [() => NaN, "non-finite number NaN is not JSON-serializable"],
      nestedInfinity: [() => ({ x: [1, { y: -Infinity }] }), "non-finite number -Infinity is not JSON-serializable"],
      arrayHole: [() => [1, undefined], "undefined inside an array is not JSON-serializable"],
      aFunction: [() => function f() {}, "value of type function is not JSON-serializable"],
      circular: [() => circular, engineMessage(circular)],
    };
    for (const [name, [make]] of Object.entries(cases)) worker.task(name, make);
    handle.start();
    for (const [name, [, detail]] of Object.entries(cases)) {
      const task = await client.submit(name, {}, { maxAttempts: 3 });
      const row = await waitForStatus(client, task.id, "failed");
      assert.equal(row.attempt, 1, `${name}: permanent, not retried`);
      assert.equal(row.result, null);
      assert.deepEqual(
        row.error,
        envelope("SerializationError", "unserializable_result", `handler result is not JSON-serializable: ${detail}`, false),
        name,
      );
    }
  });
});

// ---------------------------------------------------------------------------
describe("batch delivery", () => {
  async function submitN(client, name, n, payload = (i) => ({ i })) {
    const ids = [];
    for (let i = 0; i < n; i++) ids.push((await client.submit(name, payload(i))).id);
    return ids;
  }

  test("an id → result map settles each task; missing ids get null; foreign keys are ignored", async (t) => {
    const { client, handle, worker } = setup(t);
    const calls = [];
    worker.task("b", { batch: 3 }, (items) => {
      calls.push(items.map((c) => c.taskId));
      return { [items[0].taskId]: "r0", [items[1].taskId]: { x: 1 }, task_not_in_this_call: 5 };
    });
    const ids = await submitN(client, "b", 3);
    handle.start();
    const rows = await waitAllTerminal(client, ids);
    assert.equal(calls.length, 1);
    assert.deepEqual(new Set(calls[0]), new Set(ids));
    const byId = Object.fromEntries(rows.map((r) => [r.id, r]));
    assert.equal(byId[calls[0][0]].result, "r0");
    assert.deepEqual(byId[calls[0][1]].result, { x: 1 });
    assert.equal(byId[calls[0][2]].result, null);
    for (const row of rows) assert.equal(row.status, "succeeded");
    assert.equal(await client.get("task_not_in_this_call"), null);
  });

  test("an array, a primitive or undefined returned from a batch gives every task a null result", async (t) => {
    const { client, handle, worker } = setup(t);
    const returns = { arr: (items) => items.map((c) => c.taskId), prim: () => 5, undef: () => undefined, str: () => "s" };
    for (const [name, fn] of Object.entries(returns)) worker.task(name, { batch: 2 }, fn);
    const ids = [];
    for (const name of Object.keys(returns)) ids.push(...(await submitN(client, name, 2)));
    handle.start();
    for (const row of await waitAllTerminal(client, ids)) {
      assert.equal(row.status, "succeeded", row.name);
      assert.equal(row.result, null, row.name);
    }
  });

  test("ctx.succeed/ctx.fail inside a batch settle early; settling twice is a no-op returning null", async (t) => {
    const { client, handle, worker } = setup(t, { retryBackoffMs: 60_000, retryBackoffMaxMs: 60_000 });
    const seen = {};
    worker.task("b", { batch: 4 }, async (items) => {
      const [a, b, c, d] = items;
      seen.order = items.map((x) => x.taskId);
      seen.aRow = await a.succeed({ early: true });
      seen.aSettled = a.settled;
      seen.aAgain = await a.succeed("again");
      seen.aFailAfter = await a.fail("too late");
      seen.bRow = await b.fail(new TaskError("no", { code: "nope" }));
      seen.bAgain = await b.succeed("x");
      seen.cRow = await c.fail("retry me");
      seen.cSettled = c.settled;
      seen.dSettledBefore = d.settled;
      return { [a.taskId]: "override", [b.taskId]: "override", [c.taskId]: "override", [d.taskId]: "d-result" };
    });
    await submitN(client, "b", 4);
    handle.start();
    await waitFor(() => seen.order && seen.dSettledBefore !== undefined);
    const [a, b, c, d] = seen.order;
    const rowD = await waitForStatus(client, d, "succeeded");
    assert.equal(rowD.result, "d-result");
    assert.equal(seen.aRow.status, "succeeded");
    assert.deepEqual(seen.aRow.result, { early: true });
    assert.equal(seen.aSettled, true);
    assert.equal(seen.aAgain, null);
    assert.equal(seen.aFailAfter, null);
    assert.equal(seen.bRow.status, "failed");
    assert.equal(seen.bAgain, null);
    assert.equal(seen.cRow.status, "queued", "retryable ctx.fail re-queues");
    assert.equal(seen.cSettled, true, "settled even though re-queued");
    assert.equal(seen.dSettledBefore, false);
    // The returned map never overwrote what the handler settled itself.
    const [rowA, rowB, rowC] = await rowsOf(client, [a, b, c]);
    assert.deepEqual(rowA.result, { early: true });
    assert.equal(rowA.status, "succeeded");
    assert.equal(rowB.status, "failed");
    assert.deepEqual(rowB.error, envelope("TaskError", "nope", "no", false));
    assert.equal(rowC.status, "queued");
    assert.equal(rowC.attempt, 1);
    assert.deepEqual(rowC.error, envelope("TaskError", "task_error", "retry me", true));
  });

  test("a batch that throws fails only the leftovers; one unserializable entry fails only its task", async (t) => {
    const { client, handle, worker } = setup(t);
    worker.task("throws", { batch: 2 }, async (items) => {
      await items[0].succeed("kept");
      throw new TaskError("rest failed", { code: "rest" });
    });
    worker.task("mixed", { batch: 2 }, (items) => ({ [items[0].taskId]: 10n, [items[1].taskId]: "fine" }));
    const thrownIds = await submitN(client, "throws", 2);
    const mixedIds = await submitN(client, "mixed", 2);
    handle.start();
    const thrown = await waitAllTerminal(client, thrownIds);
    assert.deepEqual(thrown.map((r) => r.status).sort(), ["failed", "succeeded"]);
    assert.equal(thrown.find((r) => r.status === "succeeded").result, "kept");
    assert.deepEqual(thrown.find((r) => r.status === "failed").error, envelope("TaskError", "rest", "rest failed", false));
    const mixed = await waitAllTerminal(client, mixedIds);
    assert.deepEqual(mixed.map((r) => r.status).sort(), ["failed", "succeeded"]);
    assert.equal(mixed.find((r) => r.status === "succeeded").result, "fine");
    assert.equal(mixed.find((r) => r.status === "failed").error.code, "unserializable_result");
  });
});

// ---------------------------------------------------------------------------
describe("retries and backoff", () => {
  test("a failed attempt's retry delay lies in [w/2, w) of its window; ctx.fail uses the same settings", async (t) => {
    const base = 4000;
    const max = 10_000;
    const perAttempt = 3;
    const { client, handle, worker } = setup(t, { retryBackoffMs: base, retryBackoffMaxMs: max, concurrency: 20 });
    const ids = {};
    for (const n of [1, 2, 3, 4]) {
      const name = `fail${n}`;
      ids[n] = [];
      for (let i = 0; i < perAttempt; i++) ids[n].push((await client.submit(name, {}, { maxAttempts: 10 })).id);
      // Bring these tasks to attempt n - 1 so the worker's claim is attempt n.
      for (let bump = 1; bump < n; bump++) {
        const claimed = await client.store.claim({ queues: ["default"], workerId: "bumper", names: [name], limit: perAttempt });
        assert.equal(claimed.length, perAttempt);
        for (const row of claimed) {
          await client.store.fail({ taskId: row.id, workerId: "bumper", error: { message: "bump" }, delayMs: 0 });
        }
      }
    }
    ids.ctx = [];
    for (let i = 0; i < perAttempt; i++) ids.ctx.push((await client.submit("ctxFail", {}, { maxAttempts: 10 })).id);
    const total = 5 * perAttempt;
    let calls = 0;
    const attemptsSeen = [];
    const handler = (ctx) => {
      attemptsSeen.push([ctx.name, ctx.attempt]);
      calls += 1;
      if (calls === total) worker.stop();
      throw new Error("again");
    };
    for (const n of [1, 2, 3, 4]) worker.task(`fail${n}`, handler);
    worker.task("ctxFail", async (ctx) => {
      attemptsSeen.push([ctx.name, ctx.attempt]);
      calls += 1;
      if (calls === total) worker.stop();
      await ctx.fail(new Error("soft"));
      return "ignored";
    });
    await handle.start();
    assert.equal(calls, total);
    for (const [name, attempt] of attemptsSeen) {
      assert.equal(attempt, name === "ctxFail" ? 1 : Number(name.slice(4)));
    }
    const check = async (taskIds, attempt) => {
      const window = Math.min(max, base * 2 ** (attempt - 1));
      for (const row of await rowsOf(client, taskIds)) {
        assert.equal(row.status, "queued");
        assert.equal(row.attempt, attempt);
        const delay = row.run_at_ms - row.updated_at_ms;
        assert.ok(
          delay >= Math.floor(window / 2) && delay < window,
          `attempt ${attempt}: delay ${delay} not in [${Math.floor(window / 2)}, ${window})`,
        );
      }
    };
    for (const n of [1, 2, 3, 4]) await check(ids[n], n);
    await check(ids.ctx, 1);
  });

  test("retryBackoffMs <= 0 disables backoff: the retry is due at once", async (t) => {
    const { client, handle, worker } = setup(t, { retryBackoffMs: 0 });
    worker.task("once", () => {
      worker.stop();
      throw new Error("x");
    });
    const task = await client.submit("once", {}, { maxAttempts: 3 });
    await handle.start();
    const row = await client.get(task.id);
    assert.equal(row.status, "queued");
    assert.equal(row.attempt, 1);
    assert.equal(row.run_at_ms, row.updated_at_ms);
  });

  test("reaching maxAttempts fails the task for good", async (t) => {
    const { client, handle, worker } = setup(t, { retryBackoffMs: 0 });
    let runs = 0;
    worker.task("always", () => {
      runs += 1;
      throw new RangeError(`run ${runs}`);
    });
    const task = await client.submit("always", {}, { maxAttempts: 2 });
    handle.start();
    const row = await waitForStatus(client, task.id, "failed");
    assert.equal(row.attempt, 2);
    assert.deepEqual(row.error, envelope("RangeError", "handler_error", "run 2", true));
    assert.ok(row.completed_at_ms != null);
    assert.equal(runs, 2);
  });
});

// ---------------------------------------------------------------------------
describe("maxRunMs", () => {
  test("a handler that never settles: handler_timeout recorded, signal aborted, slot released", async (t) => {
    const maxRunMs = 300;
    const { client, handle, worker } = setup(t, { maxRunMs, concurrency: 1, retryBackoffMs: 60_000, retryBackoffMaxMs: 60_000 });
    const hung = makeGate();
    const aborted = makeGate();
    worker.task("hang", async (ctx) => {
      const claimedRow = await client.get(ctx.taskId);
      ctx.signal.addEventListener("abort", () => aborted.release(Date.now()));
      hung.release({ ctx, claimedRow });
      await new Promise(() => {});
    });
    worker.task("quick", () => "ran meanwhile");
    const hang = await client.submit("hang", {}, { maxAttempts: 3 });
    handle.start();
    const { ctx, claimedRow } = await hung.promise;
    // With one slot, this only runs once the abandoned call gave its slot back.
    assert.equal(await client.call("quick", {}, CALL), "ran meanwhile");
    const row = await waitFor(async () => {
      const r = await client.get(hang.id);
      return r.status === "queued" && r.error ? r : null;
    });
    assert.equal(row.attempt, 1);
    assert.deepEqual(
      row.error,
      envelope(
        "HandlerTimeout",
        "handler_timeout",
        `handler for hang exceeded maxRunMs=${maxRunMs}ms; the attempt was abandoned`,
        true,
      ),
    );
    assert.ok(row.updated_at_ms - claimedRow.updated_at_ms >= maxRunMs, "not abandoned before maxRunMs");
    assert.ok(row.run_at_ms - row.updated_at_ms >= 30_000, "an ordinary retryable failure: backoff applies");
    // The abort event reached the handler without it polling the context.
    await aborted.promise;
    assert.equal(ctx.lostLease, true);
    assert.equal(ctx.signal.aborted, true);
    assert.ok(ctx.signal.reason instanceof LostLease);
    assert.equal(ctx.signal.reason.taskId, hang.id);
    assert.equal(ctx.settled, true, "the worker's fail settled it");
    await assertLostLease(ctx.progress(0.5), hang.id);
  });

  test("redelivery after handler_timeout does not wait for the lease; max_attempts still applies", async (t) => {
    const { client, handle, worker } = setup(t, { maxRunMs: 150, leaseMs: 60_000, retryBackoffMs: 0 });
    const attempts = [];
    worker.task("hang", async (ctx) => {
      attempts.push(ctx.attempt);
      await new Promise(() => {});
    });
    const task = await client.submit("hang", {}, { maxAttempts: 2 });
    handle.start();
    const row = await waitForStatus(client, task.id, "failed", { timeoutMs: 20_000 });
    assert.equal(row.attempt, 2);
    assert.equal(row.error.code, "handler_timeout");
    assert.deepEqual(attempts, [1, 2]);
  });

  test("maxRunMs bounds a whole batch call: leftovers get handler_timeout, early-settled tasks keep their outcome", async (t) => {
    const { client, handle, worker } = setup(t, { maxRunMs: 300, retryBackoffMs: 60_000, retryBackoffMaxMs: 60_000 });
    const contexts = makeGate();
    worker.task("slowBatch", { batch: 3 }, async (items) => {
      await items[0].succeed("early");
      contexts.release(items);
      await new Promise(() => {});
    });
    for (let i = 0; i < 3; i++) await client.submit("slowBatch", { i }, { maxAttempts: 3 });
    handle.start();
    const items = await contexts.promise;
    const [early] = await waitAllTerminal(client, [items[0].taskId]);
    assert.equal(early.result, "early");
    for (const ctx of items.slice(1)) {
      const row = await waitFor(async () => {
        const r = await client.get(ctx.taskId);
        return r.status === "queued" && r.error ? r : null;
      });
      assert.deepEqual(
        row.error,
        envelope(
          "HandlerTimeout",
          "handler_timeout",
          "handler for slowBatch exceeded maxRunMs=300ms; the attempt was abandoned",
          true,
        ),
      );
      assert.equal(ctx.lostLease, true);
    }
    assert.equal((await client.get(items[0].taskId)).status, "succeeded", "the early success stands");
  });

  test("the timer fires while a handler blocks the event loop; the handler sees the abort when it resumes", async (t) => {
    const maxRunMs = 200;
    const { client, handle, worker } = setup(t, { maxRunMs, retryBackoffMs: 60_000, retryBackoffMaxMs: 60_000 });
    const done = makeGate();
    worker.task("blocker", async (ctx) => {
      blockEventLoop(2000);
      const observed = {
        busyEnd: Date.now(),
        lostLease: ctx.lostLease,
        aborted: ctx.signal.aborted,
        reason: ctx.signal.reason,
        settled: ctx.settled,
      };
      observed.progressError = await rejectionOf(ctx.progress(1, "too late"));
      done.release(observed);
      return "late result";
    });
    const task = await client.submit("blocker", {}, { maxAttempts: 3 });
    handle.start();
    const observed = await done.promise;
    assert.equal(observed.lostLease, true);
    assert.equal(observed.aborted, true);
    assert.ok(observed.reason instanceof LostLease);
    assert.ok(observed.progressError instanceof LostLease);
    const row = await waitFor(async () => {
      const r = await client.get(task.id);
      return r.status === "queued" && r.error ? r : null;
    });
    assert.equal(row.error.code, "handler_timeout");
    assert.equal(row.result, null, "the late result was discarded");
    assert.ok(
      row.updated_at_ms < observed.busyEnd,
      `the failure was written (${row.updated_at_ms}) while the loop was still blocked (until ${observed.busyEnd})`,
    );
    await handle.stopAndDrain();
    assert.equal((await client.get(task.id)).status, "queued", "the late return changed nothing");
  });
});

// ---------------------------------------------------------------------------
describe("cancellation and lease loss", () => {
  test("cancel while running: canceled() turns true, returning finalizes canceled, signal stays unaborted", async (t) => {
    const { client, handle, worker } = setup(t, { leaseMs: 600 });
    const started = makeGate();
    const observed = {};
    worker.task("polls", async (ctx) => {
      started.release(ctx);
      await waitFor(() => ctx.canceled(), { timeoutMs: 20_000 });
      observed.polls = { aborted: ctx.signal.aborted, lostLease: ctx.lostLease };
      return "dropped";
    });
    worker.task("waits", async (ctx) => {
      started.release(ctx);
      // Only the heartbeat's reply can tell this context about the cancel.
      await waitFor(() => ctx.cancelSeen, { timeoutMs: 20_000 });
      observed.waits = { canceled: await ctx.canceled(), aborted: ctx.signal.aborted };
      return "dropped too";
    });
    handle.start({ concurrency: 1 });
    for (const name of ["polls", "waits"]) {
      const task = await client.submit(name);
      await waitForStatus(client, task.id, "running");
      const requested = await client.cancel(task.id);
      assert.equal(requested.status, "running");
      assert.ok(requested.cancel_requested_at_ms != null);
      const row = await waitForStatus(client, task.id, "canceled");
      assert.equal(row.result, null, "cancel wins over the returned value");
      assert.ok(row.completed_at_ms != null);
    }
    assert.deepEqual(observed.polls, { aborted: false, lostLease: false });
    assert.deepEqual(observed.waits, { canceled: true, aborted: false });
  });

  test("a task taken over by another worker flags only its own context", async (t) => {
    const { client, handle, worker } = setup(t, { leaseMs: 600 });
    const started = makeGate();
    const finish = makeGate();
    worker.task("pair", { batch: 2 }, async (items) => {
      started.release(items);
      await finish.promise;
      return Object.fromEntries(items.map((c) => [c.taskId, `r-${c.taskId}`]));
    });
    await client.submit("pair", { n: 1 });
    await client.submit("pair", { n: 2 });
    handle.start();
    const [lost, kept] = await started.promise;
    let abortEvents = 0;
    lost.signal.addEventListener("abort", () => (abortEvents += 1));
    // Re-queue `lost` as its owner would, then claim it as someone else.
    await client.store.fail({ taskId: lost.taskId, workerId: worker.id, error: { message: "moved" }, delayMs: 0 });
    const stolen = await client.store.claim({ queues: ["default"], workerId: "thief", names: ["pair"] });
    assert.deepEqual(
      stolen.map((r) => [r.id, r.attempt]),
      [[lost.taskId, 2]],
    );
    // The next heartbeat omits it: only that context is flagged, and its
    // signal fires without the handler having to look at the context.
    await waitFor(() => abortEvents > 0, { timeoutMs: 10_000, message: "the lost lease never aborted the signal" });
    assert.equal(lost.lostLease, true);
    assert.equal(lost.signal.aborted, true);
    assert.ok(lost.signal.reason instanceof LostLease);
    assert.equal(lost.signal.reason.taskId, lost.taskId);
    assert.equal(kept.lostLease, false);
    assert.equal(kept.signal.aborted, false);
    await assertLostLease(lost.progress(0.5), lost.taskId);
    await assertLostLease(lost.heartbeat(), lost.taskId);
    await assertLostLease(lost.succeed("mine"), lost.taskId);
    assert.equal(lost.settled, false);
    const progressed = await kept.progress(0.5, "still mine");
    assert.equal(progressed.progress, 0.5);
    finish.release();
    assert.equal(abortEvents, 1);
    const keptRow = await waitForStatus(client, kept.taskId, "succeeded");
    assert.equal(keptRow.result, `r-${kept.taskId}`);
    // Nothing the first worker did touched the stolen task.
    const stolenRow = await client.get(lost.taskId);
    assert.equal(stolenRow.status, "running");
    assert.equal(stolenRow.worker_id, "thief");
    assert.equal(stolenRow.attempt, 2);
    const finished = await client.store.complete({ taskId: lost.taskId, workerId: "thief", result: "thief's" });
    assert.equal(finished.result, "thief's");
  });

  test("the heartbeat keeps a task whose handler outlives its lease (200 ms lease, default interval)", async (t) => {
    const { client, handle, worker } = setup(t, { leaseMs: 200, concurrency: 2 });
    let runs = 0;
    let lostLease = null;
    worker.task("slow", async (ctx) => {
      runs += 1;
      await new Promise((resolve) => setTimeout(resolve, 900));
      lostLease = ctx.lostLease;
      return ctx.attempt;
    });
    handle.start();
    assert.equal(await client.call("slow", {}, CALL), 1);
    assert.equal(runs, 1);
    assert.equal(lostLease, false);
  });
});

// ---------------------------------------------------------------------------
describe("scheduling", () => {
  /** A handler that counts itself in flight and waits for `gate`. */
  function gated(gate, tracker, log) {
    return async (ctxOrItems) => {
      const items = Array.isArray(ctxOrItems) ? ctxOrItems : [ctxOrItems];
      log?.push(items.map((c) => c.taskId));
      tracker.enter();
      try {
        await gate.promise;
      } finally {
        tracker.leave();
      }
      return undefined;
    };
  }

  async function submitN(client, name, n, opts = {}, payload = (i) => ({ i })) {
    const ids = [];
    for (let i = 0; i < n; i++) ids.push((await client.submit(name, payload(i), opts)).id);
    return ids;
  }

  async function countRunning(client, names) {
    const rows = await client.list({ status: "running", limit: 1000 });
    return rows.filter((r) => names.includes(r.name)).length;
  }

  test("concurrency counts handler calls in flight and is never exceeded", async (t) => {
    const { client, handle, worker } = setup(t, { concurrency: 3 });
    const gate = makeGate();
    const inFlight = makeInFlight();
    worker.task("job", gated(gate, inFlight));
    const ids = await submitN(client, "job", 8);
    handle.start();
    await waitFor(() => inFlight.now === 3);
    assert.ok(await staysFalse(() => inFlight.now > 3, 300), "a fourth call started");
    assert.equal(await countRunning(client, ["job"]), 3, "the rest stay queued");
    gate.release();
    await waitAllTerminal(client, ids);
    assert.equal(inFlight.peak, 3);
  });

  test("a batch call counts as one call", async (t) => {
    const { client, handle, worker } = setup(t, { concurrency: 2 });
    const gate = makeGate();
    const inFlight = makeInFlight();
    const calls = [];
    worker.task("b", { batch: 3 }, gated(gate, inFlight, calls));
    const ids = await submitN(client, "b", 7);
    handle.start();
    await waitFor(() => inFlight.now === 2);
    assert.ok(await staysFalse(() => inFlight.now > 2, 300));
    assert.equal(await countRunning(client, ["b"]), 6, "two calls of three tasks each");
    gate.release();
    await waitAllTerminal(client, ids);
    assert.deepEqual(calls.map((c) => c.length).sort(), [1, 3, 3]);
    assert.equal(inFlight.peak, 2);
  });

  test("run({concurrency}) overrides the option and is clamped to at least 1", async (t) => {
    const { client, dbPath, handle, worker } = setup(t, { concurrency: 1 });
    const gate = makeGate();
    const inFlight = makeInFlight();
    worker.task("job", gated(gate, inFlight));
    const ids = await submitN(client, "job", 4);
    handle.start({ concurrency: 2 });
    await waitFor(() => inFlight.now === 2);
    assert.ok(await staysFalse(() => inFlight.now > 2, 200));
    gate.release();
    await waitAllTerminal(client, ids);

    const zero = makeWorker(t, dbPath, { concurrency: 5 });
    const inFlight0 = makeInFlight();
    const gate0 = makeGate();
    zero.worker.task("zero", gated(gate0, inFlight0));
    const ids0 = await submitN(client, "zero", 3);
    zero.start({ concurrency: 0 });
    await waitFor(() => inFlight0.now === 1);
    assert.ok(await staysFalse(() => inFlight0.now > 1, 200), "concurrency 0 runs as 1");
    gate0.release();
    await waitAllTerminal(client, ids0);
    assert.equal(inFlight0.peak, 1);
  });

  test("a per-name concurrency caps that name only", async (t) => {
    const { client, handle, worker } = setup(t, { concurrency: 6 });
    const gate = makeGate();
    const limited = makeInFlight();
    const free = makeInFlight();
    worker.task("limited", { concurrency: 2 }, gated(gate, limited));
    worker.task("free", gated(gate, free));
    const ids = [...(await submitN(client, "limited", 5)), ...(await submitN(client, "free", 3))];
    handle.start();
    await waitFor(() => limited.now === 2 && free.now === 3);
    assert.ok(await staysFalse(() => limited.now > 2, 300));
    assert.equal(await countRunning(client, ["limited"]), 2);
    gate.release();
    await waitAllTerminal(client, ids);
    assert.equal(limited.peak, 2);
  });

  test("a resource caps the calls of every name that declares it; other names are unaffected", async (t) => {
    const { client, handle, worker } = setup(t, { concurrency: 8, resources: { gpu: 2 } });
    const gate = makeGate();
    const gpu = makeInFlight();
    const cpu = makeInFlight();
    worker.task("train", { resource: "gpu" }, gated(gate, gpu));
    worker.task("infer", { resource: "gpu" }, gated(gate, gpu));
    worker.task("cpu", gated(gate, cpu));
    const ids = [
      ...(await submitN(client, "train", 3)),
      ...(await submitN(client, "infer", 3)),
      ...(await submitN(client, "cpu", 2)),
    ];
    handle.start();
    await waitFor(() => gpu.now === 2 && cpu.now === 2);
    assert.ok(await staysFalse(() => gpu.now > 2, 300));
    assert.equal(await countRunning(client, ["train", "infer"]), 2, "held-back work stays queued");
    gate.release();
    await waitAllTerminal(client, ids);
    assert.equal(gpu.peak, 2);
  });

  test("a resource of capacity 1 makes its names mutually exclusive; the tighter of concurrency and resource binds", async (t) => {
    const { client, handle, worker } = setup(t, { concurrency: 8, resources: { lock: 1, pool: 3 } });
    const lock = makeInFlight();
    const pooled = makeInFlight();
    const work = (tracker) => async () => {
      tracker.enter();
      await new Promise((resolve) => setTimeout(resolve, 20));
      tracker.leave();
    };
    worker.task("a", { resource: "lock" }, work(lock));
    worker.task("b", { resource: "lock" }, work(lock));
    worker.task("p", { resource: "pool", concurrency: 1 }, work(pooled));
    const ids = [
      ...(await submitN(client, "a", 4)),
      ...(await submitN(client, "b", 4)),
      ...(await submitN(client, "p", 4)),
    ];
    handle.start();
    await waitAllTerminal(client, ids);
    assert.equal(lock.peak, 1);
    assert.equal(pooled.peak, 1);
  });

  test("claimBatch caps the rows of one draw (seen through a byte budget that stops further claims)", async (t) => {
    const run = async (claimBatch) => {
      const { client, handle, worker } = setup(t, { concurrency: 5, maxInFlightBytes: 1, claimBatch });
      const gate = makeGate();
      const inFlight = makeInFlight();
      worker.task("job", gated(gate, inFlight));
      const ids = await submitN(client, "job", 6);
      handle.start();
      await waitFor(() => inFlight.now > 0);
      const expected = claimBatch ?? 5;
      await waitFor(() => inFlight.now === expected);
      assert.ok(await staysFalse(() => inFlight.now > expected, 300));
      gate.release();
      await waitAllTerminal(client, ids);
      return inFlight.peak;
    };
    // One draw, then the budget is exhausted: its size is all that runs.
    assert.equal(await run(2), 2);
    assert.equal(await run(undefined), 5);
  });

  test("claimBatch is converted to calls and never drops below one whole batch", async (t) => {
    const { client, handle, worker } = setup(t, { claimBatch: 2 });
    const calls = [];
    worker.task("b", { batch: 4 }, (items) => {
      calls.push(items.length);
    });
    const ids = await submitN(client, "b", 8);
    handle.start();
    await waitAllTerminal(client, ids);
    assert.deepEqual(calls, [4, 4]);
  });

  test("a draw is chunked by batch size and never padded: 5 tasks with batch 4 → calls of 4 and 1", async (t) => {
    const { client, handle, worker } = setup(t, { concurrency: 2 });
    const calls = [];
    worker.task("b", { batch: 4 }, (items) => {
      calls.push(items.map((c) => c.taskId));
    });
    const ids = await submitN(client, "b", 5);
    handle.start();
    await waitAllTerminal(client, ids);
    assert.deepEqual(calls.map((c) => c.length).sort(), [1, 4]);
    assert.deepEqual(new Set(calls.flat()), new Set(ids));
    assert.equal(calls.flat().length, 5);
  });

  test("maxInFlightBytes bounds resident payload bytes (UTF-8 of the JSON payload)", async (t) => {
    const budget = 250;
    const { client, handle, worker } = setup(t, { concurrency: 10, claimBatch: 1, maxInFlightBytes: budget });
    // 100 UTF-8 bytes, 54 UTF-16 code units.
    const payload = { s: "é".repeat(46) };
    assert.equal(jsonBytes(payload), 100);
    const gate = makeGate();
    const inFlight = makeInFlight();
    let bytes = 0;
    let peakBytes = 0;
    worker.task("heavy", async (ctx, p) => {
      inFlight.enter();
      bytes += jsonBytes(p);
      peakBytes = Math.max(peakBytes, bytes);
      await gate.promise;
      bytes -= jsonBytes(p);
      inFlight.leave();
    });
    const ids = await submitN(client, "heavy", 6, {}, () => payload);
    handle.start();
    // 100 + 100 < 250 allows a third claim; 300 ≥ 250 stops the fourth.
    await waitFor(() => inFlight.now === 3);
    assert.ok(await staysFalse(() => inFlight.now > 3, 300));
    gate.release();
    await waitAllTerminal(client, ids);
    assert.equal(inFlight.peak, 3);
    assert.ok(peakBytes <= budget + jsonBytes(payload), `peak ${peakBytes} bytes`);
  });

  test("the byte charge follows JSON.stringify(payload) also for payloads the Python SDK wrote (\\u escapes)", async (t) => {
    if (spawnSync(PYTHON, ["-c", "import cairnq"]).status !== 0) {
      t.skip("the Python SDK (PyPI cairnq) is not importable");
      return;
    }
    const budget = 250;
    const { client, dbPath, handle, worker } = setup(t, { concurrency: 10, claimBatch: 1, maxInFlightBytes: budget });
    await client.connect();
    const payload = { s: "é".repeat(46) };
    assert.equal(jsonBytes(payload), 100);
    const stored = JSON.parse(
      await runPython(
        [
          "import asyncio, json, sqlite3, sys",
          "from cairnq import CairnQ",
          "async def main():",
          "    c = CairnQ.sqlite(sys.argv[1])",
          "    await c.connect()",
          "    for _ in range(int(sys.argv[3])):",
          "        await c.submit('heavy', json.loads(sys.argv[2]))",
          "    await c.close()",
          "asyncio.run(main())",
          "rows = sqlite3.connect(sys.argv[1]).execute('select payload from cairnq_tasks').fetchall()",
          "print(json.dumps([len(r[0].encode()) for r in rows]))",
        ].join("\n"),
        [dbPath, JSON.stringify(payload), "6"],
        { timeoutMs: 60_000 },
      ),
    );
    // Python stores é as \u00e9: 284 bytes of text for a 100-byte payload.
    assert.deepEqual(stored, Array(6).fill(284));
    const gate = makeGate();
    const inFlight = makeInFlight();
    worker.task("heavy", gated(gate, inFlight));
    handle.start();
    await waitFor(() => inFlight.now >= 1);
    // 100 + 100 < 250 allows a third claim, exactly as for a JS-written payload.
    const reached = await waitFor(() => inFlight.now === 3, { timeoutMs: 3000 }).catch(() => false);
    const peakSoFar = inFlight.peak;
    gate.release();
    const ids = (await client.list({ name: "heavy" })).map((r) => r.id);
    await waitAllTerminal(client, ids);
    assert.ok(reached, `only ${peakSoFar} call(s) ran at once: the charge was computed from the stored text`);
    assert.equal(inFlight.peak, 3);
  });

  test("a payload larger than the whole byte budget still runs, by itself", async (t) => {
    const { client, handle, worker } = setup(t, { concurrency: 5, claimBatch: 1, maxInFlightBytes: 10 });
    const inFlight = makeInFlight();
    worker.task("huge", async (ctx, p) => {
      inFlight.enter();
      await new Promise((resolve) => setTimeout(resolve, 20));
      inFlight.leave();
      return p.s.length;
    });
    const ids = await submitN(client, "huge", 3, {}, () => ({ s: "x".repeat(1000) }));
    handle.start();
    const rows = await waitAllTerminal(client, ids);
    for (const row of rows) {
      assert.equal(row.status, "succeeded");
      assert.equal(row.result, 1000);
    }
    assert.equal(inFlight.peak, 1);
  });

  test("rotation: names with their own source alternate, whatever their priorities", async (t) => {
    const { client, handle, worker } = setup(t, { concurrency: 1 });
    const order = [];
    worker.task("a", { concurrency: 10 }, (ctx) => {
      order.push(ctx.name);
    });
    worker.task("b", { concurrency: 10 }, (ctx) => {
      order.push(ctx.name);
    });
    const ids = [...(await submitN(client, "a", 4, { priority: 10 })), ...(await submitN(client, "b", 4))];
    handle.start();
    await waitAllTerminal(client, ids);
    assert.deepEqual(order, ["a", "b", "a", "b", "a", "b", "a", "b"]);
  });
});

// ---------------------------------------------------------------------------
describe("TaskContext in a handler", () => {
  test("read-only members, progress (coalescing), heartbeat, canceled, succeed, submit and wait", async (t) => {
    const leaseMs = 5000;
    const { client, handle, worker } = setup(t, { queues: ["q1"], leaseMs, concurrency: 2 });
    const snapshot = makeGate();
    worker.task("inspect", async (ctx, payload) => {
      const s = {
        isContext: ctx instanceof TaskContext,
        taskId: ctx.taskId,
        name: ctx.name,
        queue: ctx.queue,
        attempt: ctx.attempt,
        metadata: ctx.metadata,
        rootId: ctx.rootId,
        correlationId: ctx.correlationId,
        payload: ctx.payload,
        payloadArg: payload,
        workerId: ctx.workerId,
        settledBefore: ctx.settled,
        lostLease: ctx.lostLease,
        aborted: ctx.signal.aborted,
        hasParentId: "parentId" in ctx,
        hasMaxAttempts: "maxAttempts" in ctx,
      };
      s.p1 = await ctx.progress(0.25, "quarter");
      s.p2 = await ctx.progress(null, "message only");
      s.p3 = await ctx.progress(0.5);
      const before = Date.now();
      s.hb = await ctx.heartbeat();
      s.hbWindow = [before + leaseMs, Date.now() + leaseMs];
      s.canceled = await ctx.canceled();
      s.child = await ctx.submit("child", { c: 1 });
      s.override = await ctx.submit(defineTask("child"), { c: 2 }, { correlationId: "other", rootId: "root-x", parentId: null });
      s.worked = await ctx.submit("grandchildOf", { c: 3 }, { queue: "q1" });
      s.waited = await ctx.wait(s.worked.id, { timeoutMs: 20_000 });
      s.timeout = await rejectionOf(ctx.wait(s.child.id, { timeoutMs: 50 }));
      s.succeeded = await ctx.succeed({ done: true });
      s.settledAfter = ctx.settled;
      snapshot.release(s);
      return "ignored: already settled";
    });
    worker.task("grandchildOf", (ctx) => ({ rootId: ctx.rootId, correlationId: ctx.correlationId, attempt: ctx.attempt }));
    const task = await client.submit(
      "inspect",
      { p: [1, 2] },
      { queue: "q1", metadata: { m: 1 }, correlationId: "corr-1", maxAttempts: 4 },
    );
    handle.start();
    const s = await snapshot.promise;
    assert.equal(s.isContext, true);
    assert.equal(s.taskId, task.id);
    assert.equal(s.name, "inspect");
    assert.equal(s.queue, "q1");
    assert.equal(s.attempt, 1);
    assert.deepEqual(s.metadata, { m: 1 });
    assert.equal(s.rootId, task.id, "a top-level task is its own root");
    assert.equal(s.correlationId, "corr-1");
    assert.deepEqual(s.payload, { p: [1, 2] });
    assert.deepEqual(s.payloadArg, { p: [1, 2] });
    assert.equal(s.workerId, worker.id);
    assert.equal(s.settledBefore, false);
    assert.equal(s.lostLease, false);
    assert.equal(s.aborted, false);
    assert.equal(s.hasParentId, false);
    assert.equal(s.hasMaxAttempts, false);

    assert.deepEqual([s.p1.progress, s.p1.message], [0.25, "quarter"]);
    assert.deepEqual([s.p2.progress, s.p2.message], [0.25, "message only"], "null progress leaves it unchanged");
    assert.deepEqual([s.p3.progress, s.p3.message], [0.5, "message only"], "absent message leaves it unchanged");
    assert.ok(s.hb.lease_until_ms >= s.hbWindow[0] && s.hb.lease_until_ms <= s.hbWindow[1], "heartbeat renews by leaseMs");
    assert.equal(s.canceled, false);

    assert.equal(s.child.parent_id, task.id);
    assert.equal(s.child.root_id, task.id);
    assert.equal(s.child.correlation_id, "corr-1");
    assert.equal(s.child.queue, "default");
    assert.equal(s.override.parent_id, null);
    assert.equal(s.override.root_id, "root-x");
    assert.equal(s.override.correlation_id, "other");
    assert.equal(s.waited.status, "succeeded");
    assert.deepEqual(s.waited.result, { rootId: task.id, correlationId: "corr-1", attempt: 1 });
    assert.ok(s.timeout instanceof TaskTimeout, `got ${s.timeout?.name}`);
    assert.equal(s.timeout.taskId, s.child.id);
    assert.equal(s.timeout.key, null);

    assert.equal(s.succeeded.status, "succeeded");
    assert.equal(s.settledAfter, true);
    const row = await waitForStatus(client, task.id, "succeeded");
    assert.deepEqual(row.result, { done: true }, "the return value did not overwrite ctx.succeed");
    // The worker only polls q1: the child on "default" was never claimed.
    assert.equal((await client.get(s.child.id)).status, "queued");
  });

  test("maxQueueDepth on WorkerOptions gates ctx.submit", async (t) => {
    const { client, handle, worker } = setup(t, {
      maxQueueDepth: { side: 1 },
      maxQueueWaitMs: 200,
      queuePollIntervalMs: 20,
    });
    await client.submit("filler", {}, { queue: "side" });
    worker.task("parent", async (ctx) => {
      const free = await ctx.submit("kid", {}, { queue: "elsewhere" });
      const err = await rejectionOf(ctx.submit("kid", {}, { queue: "side" }));
      return {
        free: free.queue,
        isQueueFull: err instanceof QueueFull,
        name: err.name,
        queue: err.queue,
        maxDepth: err.maxDepth,
        waitedMs: err.waitedMs,
      };
    });
    handle.start();
    const result = await client.call("parent", {}, CALL);
    assert.equal(result.free, "elsewhere", "an unlisted queue is ungated");
    assert.equal(result.isQueueFull, true);
    assert.equal(result.queue, "side");
    assert.equal(result.maxDepth, 1);
    assert.ok(result.waitedMs >= 200, `waited ${result.waitedMs}ms`);
    assert.equal((await client.list({ queue: "side" })).length, 1, "nothing was enqueued");
  });

  test("ctx.call runs a child task to its result, wired to the parent; a failed child rejects", async (t) => {
    const { client, handle, worker } = setup(t, { concurrency: 2 });
    worker.task("child", (ctx, { n }) => {
      if (n < 0) throw new TaskError("negative", { code: "bad_input" });
      return { doubled: n * 2, parentId: null };
    });
    worker.task("parent", async (ctx, { n }) => {
      const result = await ctx.call(defineTask("child"), { n }, { waitTimeoutMs: 20_000 });
      const failure = await rejectionOf(ctx.call("child", { n: -1 }, { maxAttempts: 1, waitTimeoutMs: 20_000 }));
      return { result, failure: { name: failure.name, code: failure.code } };
    });
    handle.start();
    const parent = await client.submit("parent", { n: 21 }, { correlationId: "corr-call" });
    const done = await client.wait(parent.id, { timeoutMs: 30_000 });
    assert.equal(done.status, "succeeded", JSON.stringify(done.error));
    assert.deepEqual(done.result, { result: { doubled: 42, parentId: null }, failure: { name: "TaskFailed", code: "bad_input" } });
    const children = await client.list({ name: "child" });
    assert.equal(children.length, 2);
    for (const child of children) {
      assert.deepEqual([child.parent_id, child.root_id, child.correlation_id], [parent.id, parent.id, "corr-call"]);
    }
  });
});

// ---------------------------------------------------------------------------
describe("onError", () => {
  test("EventLoopBlocked is reported with phase execute and the task id; a throwing onError is swallowed", async (t) => {
    const reports = [];
    const leaseMs = 300;
    const { client, handle, worker } = setup(t, {
      leaseMs,
      onError(err, info) {
        reports.push({ err, info });
        throw new Error("onError itself blew up");
      },
    });
    worker.task("blocker", () => {
      blockEventLoop(1200);
      return "ok";
    });
    worker.task("after", () => "worker survived");
    handle.start();
    const blocked = await client.submit("blocker");
    assert.equal((await waitForStatus(client, blocked.id, "succeeded")).attempt, 1);
    const report = await waitFor(() => reports.find((r) => r.err instanceof EventLoopBlocked), {
      message: "EventLoopBlocked was not reported",
    });
    assert.ok(report.err instanceof CairnQError);
    assert.equal(report.err.name, "EventLoopBlocked");
    assert.match(report.err.message, /event loop was blocked/);
    assert.equal(report.err.intervalMs, Math.floor(leaseMs / 3));
    assert.equal(report.err.leaseMs, leaseMs);
    assert.ok(report.err.lateMs > report.err.intervalMs);
    assert.deepEqual(report.info, { phase: "execute", taskId: blocked.id });
    assert.equal(await client.call("after", {}, CALL), "worker survived");
  });

  test("a failed claim is reported with phase claim (no taskId) and the loop carries on", async (t) => {
    const reports = [];
    const { client, dbPath, handle, worker } = setup(t, {
      busyTimeoutMs: 50,
      onError: (err, info) => reports.push({ err, info }),
    });
    worker.task("job", () => "done");
    handle.start();
    assert.equal(await client.call("job", {}, CALL), "done");
    // Due only once another connection holds the write lock: the probe (a
    // read) sees it, the claim transaction cannot start within busyTimeoutMs.
    const due = await client.submit("job", {}, { runAtDelayMs: 3000 });
    const lock = await holdWriteLock(dbPath);
    try {
      assert.equal((await client.get(due.id)).status, "queued");
      await waitFor(() => reports.some((r) => r.info.phase === "claim"), {
        timeoutMs: 20_000,
        message: "no claim-phase error was reported while the write lock was held",
      });
    } finally {
      await lock.release();
    }
    const claimReport = reports.find((r) => r.info.phase === "claim");
    assert.ok(claimReport.err instanceof Error);
    assert.equal(claimReport.err.code, "SQLITE_BUSY", `got ${claimReport.err.message}`);
    assert.deepEqual(claimReport.info, { phase: "claim" });
    assert.ok(reports.every((r) => r.info.phase === "claim"), JSON.stringify(reports.map((r) => r.info)));
    // The loop carried on: the task is claimed once the lock is gone.
    assert.equal((await waitForStatus(client, due.id, "succeeded")).result, "done");
  });

  test("a settlement write that fails is reported with phase execute and the task id; nothing is recorded", async (t) => {
    const reports = [];
    // No heartbeat within the test (its failures would be execute reports too).
    const { client, dbPath, handle, worker } = setup(t, {
      busyTimeoutMs: 50,
      heartbeatIntervalMs: 600_000,
      onError: (err, info) => reports.push({ err, info }),
    });
    const started = makeGate();
    const finish = makeGate();
    worker.task("job", async (ctx, payload) => {
      if (payload.wait) {
        started.release();
        await finish.promise;
      }
      return { attempt: ctx.attempt };
    });
    const task = await client.submit("job", { wait: true });
    handle.start();
    await started.promise;
    const lock = await holdWriteLock(dbPath);
    try {
      finish.release();
      await waitFor(() => reports.some((r) => r.info.phase === "execute"), {
        timeoutMs: 20_000,
        message: "the failed complete() was not reported",
      });
    } finally {
      await lock.release();
    }
    const executeReports = reports.filter((r) => r.info.phase === "execute");
    assert.equal(executeReports.length, 1, JSON.stringify(executeReports.map((r) => r.err.message)));
    assert.equal(executeReports[0].err.code, "SQLITE_BUSY", `got ${executeReports[0].err.message}`);
    assert.deepEqual(executeReports[0].info, { phase: "execute", taskId: task.id });
    // Nothing was written: the task is left to its lease, and the worker carries on.
    const row = await client.get(task.id);
    assert.equal(row.status, "running");
    assert.equal(row.attempt, 1);
    assert.equal(row.result, null);
    assert.deepEqual(await client.call("job", {}, CALL), { attempt: 1 });
  });
});

// ---------------------------------------------------------------------------
describe("lifecycle", () => {
  test("stop() cuts a 5 s idle poll short", async (t) => {
    const { client, handle, worker } = setup(t, { pollIntervalMs: 5000 });
    worker.task("one", () => 1);
    const task = await client.submit("one");
    const running = handle.start();
    await waitForStatus(client, task.id, "succeeded");
    // Now idle: the next poll found nothing and sleeps for 5 s.
    const started = Date.now();
    worker.stop();
    await running;
    const elapsed = Date.now() - started;
    assert.ok(elapsed < 2000, `run settled ${elapsed}ms after stop()`);
  });

  test("a worker stopped before run() returns after connecting and never claims; stop is irreversible", async (t) => {
    const { client, worker } = setup(t);
    let calls = 0;
    worker.task("job", () => {
      calls += 1;
    });
    const task = await client.submit("job");
    worker.stop();
    await worker.run();
    await worker.run();
    assert.equal(calls, 0);
    const row = await client.get(task.id);
    assert.equal(row.status, "queued");
    assert.equal(row.attempt, 0);
  });

  test("run() waits for every call in flight before settling", async (t) => {
    const { client, handle, worker } = setup(t);
    const started = makeGate();
    const finish = makeGate();
    worker.task("slow", async () => {
      started.release();
      await finish.promise;
      return "finished";
    });
    const task = await client.submit("slow");
    const running = handle.start();
    await started.promise;
    worker.stop();
    let settled = false;
    running.then(() => (settled = true));
    assert.ok(await staysFalse(() => settled, 200), "run settled while a handler was in flight");
    finish.release();
    await running;
    assert.equal((await client.get(task.id)).status, "succeeded");
  });

  test("handlers registered during run take effect; a re-registration replaces the handler", async (t) => {
    const { client, handle, worker } = setup(t);
    worker.task("early", () => "first");
    handle.start();
    const late = await client.submit("late");
    assert.equal(await client.call("early", {}, CALL), "first");
    assert.equal((await client.get(late.id)).status, "queued", "no handler for it yet");
    worker.task("late", () => "registered later");
    assert.equal((await waitForStatus(client, late.id, "succeeded")).result, "registered later");
    worker.task("early", () => "replaced");
    assert.equal(await client.call("early", {}, CALL), "replaced");
  });

  test("a worker without handlers never claims and never recovers leases", async (t) => {
    const { client, handle, worker } = setup(t);
    handle.start();
    const queued = await client.submit("y");
    const expired = await client.submit("x");
    const claimed = await claimTask(client.store, expired, { workerId: "gone", leaseMs: 1 });
    await waitFor(() => Date.now() > claimed.lease_until_ms);
    const untouched = await staysFalse(async () => {
      const [q, e] = await rowsOf(client, [queued.id, expired.id]);
      return q.status !== "queued" || e.status !== "running";
    }, 300);
    assert.ok(untouched, "a worker with no handlers touched the queue");
    worker.task("x", (ctx) => ctx.attempt).task("y", (ctx) => ctx.attempt);
    const [q, e] = await waitAllTerminal(client, [queued.id, expired.id]);
    assert.equal(q.result, 1);
    assert.equal(e.result, 2, "recovered, then claimed again");
  });

  test("serve() in process: listens for both signals, stops on the first, removes its listeners", async (t) => {
    const { client, worker } = setup(t);
    worker.task("job", () => "served");
    const before = { SIGINT: process.listenerCount("SIGINT"), SIGTERM: process.listenerCount("SIGTERM") };
    const serving = worker.serve();
    assert.equal(await client.call("job", {}, CALL), "served");
    assert.equal(process.listenerCount("SIGINT"), before.SIGINT + 1);
    assert.equal(process.listenerCount("SIGTERM"), before.SIGTERM + 1);
    process.emit("SIGTERM", "SIGTERM");
    assert.equal(process.listenerCount("SIGINT"), before.SIGINT, "the first signal removes both listeners");
    assert.equal(process.listenerCount("SIGTERM"), before.SIGTERM);
    await serving;
    assert.equal(process.listenerCount("SIGINT"), before.SIGINT);
    assert.equal(process.listenerCount("SIGTERM"), before.SIGTERM);
  });

  test("background() with an injected store leaves it open; close() closes it anyway", async (t) => {
    const dbPath = makeDbPath(t);
    const store = makeStore(t, dbPath);
    const worker = new Worker(store, ["default"], { pollIntervalMs: 20 });
    worker.task("x", () => "via background");
    const value = await worker.background(async () => {
      const client = CairnQ.sqlite(dbPath);
      try {
        return await client.call("x", {}, CALL);
      } finally {
        await client.close();
      }
    });
    assert.equal(value, "via background");
    assert.equal(fs.existsSync(`${dbPath}-wal`), true, "the injected store is still open");
    await worker.close();
    assert.equal(fs.existsSync(`${dbPath}-wal`), false, "close() closes an injected store");
  });

  test("background() rejects with fn's error after stopping the worker", async (t) => {
    const { worker } = setup(t);
    worker.task("x", () => 1);
    const err = await rejectionOf(
      worker.background(async () => {
        throw new SerializationError("from fn");
      }),
    );
    assert.ok(err instanceof SerializationError);
    assert.equal(err.message, "from fn");
    // The worker was stopped: running it again returns at once.
    await worker.run();
  });
});
