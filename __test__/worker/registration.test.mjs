// Worker.task() (docs/api.md, "Registrations"): the registration forms — a
// named function, a string name, a TaskDef, options — and the exact validation
// messages.

import assert from "node:assert/strict";

import { TaskContext, defineTask } from "../../index.mjs";
import { assertThrowsPlainError } from "../support/helpers.mjs";
import { CALL } from "../support/worker-helpers.mjs";
import { forEachDialect, setupWorker, test } from "../support/dialects.mjs";

const ANONYMOUS =
  "worker.task(fn): the handler is anonymous; pass a name explicitly, e.g. worker.task('summary.create', fn)";

// ---------------------------------------------------------------------------
forEachDialect("task(): registration forms", (dialect) => {
  test("a bare named function registers under its name; task() returns the worker", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect);
    function resizeImage(ctx, payload) {
      return { name: ctx.name, width: payload.width };
    }
    assert.equal(worker.task(resizeImage), worker);
    handle.start();
    assert.deepEqual(await client.call("resizeImage", { width: 3 }, CALL), { name: "resizeImage", width: 3 });
  });

  test('every leading "bound " prefix is stripped', async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect);
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

  test("an anonymous function is refused with the exact message", async (t) => {
    const { worker } = await setupWorker(t, dialect);
    assertThrowsPlainError(() => worker.task(() => {}), ANONYMOUS);
    assertThrowsPlainError(() => worker.task(async function () {}), ANONYMOUS);
    // `.bind()` of an anonymous function is named "bound ": empty once stripped.
    assertThrowsPlainError(() => worker.task(function () {}.bind(null)), ANONYMOUS);
  });

  test("a string name, a TaskDef, and the options forms", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect);
    const typed = defineTask("typed.def");
    assert.deepEqual(typed, { name: "typed.def" });
    worker
      .task("summary.create", (ctx, payload) => ({ via: "name", payload }))
      .task(typed, (ctx, payload) => ({ via: "def", name: ctx.name, payload }))
      .task(defineTask("batched.def"), { batch: 2 }, (items) => {
        assert.ok(Array.isArray(items));
        return Object.fromEntries(
          items.map((c) => [c.taskId, { batchOf: items.length, isCtx: c instanceof TaskContext }]),
        );
      })
      .task("limited", { concurrency: 2 }, (ctx, payload) => ({
        via: "options",
        payload,
        isCtx: ctx instanceof TaskContext,
      }))
      .task("single.batch", { batch: 1 }, (items) => ({
        [items[0].taskId]: { array: Array.isArray(items), n: items.length },
      }));
    handle.start();
    assert.deepEqual(await client.call("summary.create", { a: 1 }, CALL), { via: "name", payload: { a: 1 } });
    assert.deepEqual(await client.call(typed, { b: 2 }, CALL), { via: "def", name: "typed.def", payload: { b: 2 } });
    assert.deepEqual(await client.call("batched.def", {}, CALL), { batchOf: 1, isCtx: true });
    assert.deepEqual(await client.call("limited", { c: 3 }, CALL), { via: "options", payload: { c: 3 }, isCtx: true });
    // batch: 1 still gets the array form.
    assert.deepEqual(await client.call("single.batch", {}, CALL), { array: true, n: 1 });
  });

  test("option validation: batch, then concurrency, then resource (exact messages)", async (t) => {
    const { worker } = await setupWorker(t, dialect, { resources: { gpu: 1, cpu: 2, "a-disk": 1 } });
    const fn = () => {};
    const cases = [
      [{ batch: 0 }, "batch must be an integer >= 1, got 0"],
      [{ batch: 1.5 }, "batch must be an integer >= 1, got 1.5"],
      [{ batch: -2 }, "batch must be an integer >= 1, got -2"],
      [{ batch: NaN }, "batch must be an integer >= 1, got NaN"],
      [{ batch: Infinity }, "batch must be an integer >= 1, got Infinity"],
      [{ concurrency: 0 }, "concurrency must be an integer >= 1, got 0"],
      [{ concurrency: 2.5 }, "concurrency must be an integer >= 1, got 2.5"],
      [{ batch: "2" }, 'batch must be a number, got "2"'],
      [{ concurrency: "many" }, 'concurrency must be a number, got "many"'],
      [{ batch: 1.5, concurrency: 0 }, "batch must be an integer >= 1, got 1.5"],
      [{ batch: 0, concurrency: 0 }, "batch must be an integer >= 1, got 0"],
      [{ batch: 0, resource: "tpu" }, "batch must be an integer >= 1, got 0"],
      [{ concurrency: -1, resource: "tpu" }, "concurrency must be an integer >= 1, got -1"],
      [
        { resource: "tpu" },
        'task "x" declares resource "tpu", which is not in WorkerOptions.resources; declared: a-disk, cpu, gpu',
      ],
    ];
    for (const [opts, message] of cases) assertThrowsPlainError(() => worker.task("x", opts, fn), message);
    assertThrowsPlainError(
      () => worker.task(defineTask("typed"), { batch: 2, resource: "nvme" }, fn),
      'task "typed" declares resource "nvme", which is not in WorkerOptions.resources; declared: a-disk, cpu, gpu',
    );
    // Valid forms are accepted.
    worker.task("ok1", { batch: 1, concurrency: 1, resource: "gpu" }, fn);
    worker.task("ok2", { resource: "a-disk" }, fn);
  });

  test('an undeclared resource with no resources at all lists "none"', async (t) => {
    const { worker } = await setupWorker(t, dialect);
    assertThrowsPlainError(
      () => worker.task("embed", { resource: "gpu" }, () => {}),
      'task "embed" declares resource "gpu", which is not in WorkerOptions.resources; declared: none',
    );
  });
});
