// TaskContext built by hand (docs/api.md, "TaskContext"): `new
// TaskContext(store, task, workerId, leaseMs, opts)` over a task claimed with
// `store.claim`, without a Worker. Covers the read-only members, the write
// methods, every FailReason form, the write gate and the backoff options
// (docs/api.md, "Errors", "TaskContext", "Retry backoff").
import { describe, test as nodeTest } from "node:test";
import assert from "node:assert/strict";

import {
  CairnQError,
  LostLease,
  SerializationError,
  TaskContext,
  TaskCanceled,
  TaskError,
  TaskTimeout,
  defineTask,
} from "../index.mjs";
import { claimTask, openClient, rejectionOf } from "./support/helpers.mjs";

// Every test is bounded: a hang fails that test instead of the whole run.
const test = (name, fn) => nodeTest(name, { timeout: 30_000 }, fn);

const WORKER = "worker_ctx_test";

/** A client, one submitted task claimed as WORKER, and a context over it. */
async function claimed(t, { submit = {}, leaseMs = 30_000, opts, payload = { p: 1 } } = {}) {
  const { client, dbPath } = openClient(t);
  const task = await client.submit("job", payload, submit);
  const row = await claimTask(client.store, task, { workerId: WORKER, leaseMs });
  // Without `opts` the five-argument form is not used at all (its default applies).
  const ctx =
    opts === undefined
      ? new TaskContext(client.store, row, WORKER, leaseMs)
      : new TaskContext(client.store, row, WORKER, leaseMs, opts);
  return { client, dbPath, task, row, ctx };
}

async function assertLostLease(promise, taskId) {
  const err = await rejectionOf(promise);
  assert.ok(err instanceof LostLease, `expected LostLease, got ${err?.name}: ${err?.message}`);
  assert.ok(err instanceof CairnQError);
  assert.equal(err.taskId, taskId);
  assert.equal(err.message, `lost lease on task ${taskId}`);
  return err;
}

function envelope(type, code, message, retryable, details = {}) {
  return { type, code, message, retryable, details };
}

// ---------------------------------------------------------------------------
describe("read-only members", () => {
  test("mirror the claimed task", async (t) => {
    const { task, row, ctx } = await claimed(t, {
      submit: { queue: "default", metadata: { m: [1] }, correlationId: "c-1" },
      payload: { hello: "world" },
    });
    assert.equal(ctx.workerId, WORKER);
    assert.equal(ctx.taskId, task.id);
    assert.equal(ctx.name, "job");
    assert.equal(ctx.queue, "default");
    assert.equal(ctx.attempt, 1);
    assert.equal(row.attempt, 1);
    assert.deepEqual(ctx.metadata, { m: [1] });
    assert.equal(ctx.rootId, task.id);
    assert.equal(ctx.correlationId, "c-1");
    assert.deepEqual(ctx.payload, { hello: "world" });
    assert.equal(ctx.settled, false);
    assert.equal(ctx.lostLease, false);
    assert.ok(ctx.signal instanceof AbortSignal);
    assert.equal(ctx.signal.aborted, false);
  });
});

// ---------------------------------------------------------------------------
describe("writes", () => {
  test("progress coalesces; heartbeat renews by leaseMs; canceled reads the row", async (t) => {
    const leaseMs = 4000;
    const { client, task, ctx } = await claimed(t, { leaseMs });
    let row = await ctx.progress(0.3, "warming up");
    assert.deepEqual([row.progress, row.message], [0.3, "warming up"]);
    row = await ctx.progress(null, "still warming");
    assert.deepEqual([row.progress, row.message], [0.3, "still warming"]);
    row = await ctx.progress(0.6);
    assert.deepEqual([row.progress, row.message], [0.6, "still warming"]);
    assert.deepEqual((await client.get(task.id)).progress, 0.6);

    const before = Date.now();
    row = await ctx.heartbeat();
    const after = Date.now();
    assert.ok(row.lease_until_ms >= before + leaseMs && row.lease_until_ms <= after + leaseMs);
    assert.equal(row.status, "running");

    assert.equal(await ctx.canceled(), false);
    await client.cancel(task.id);
    assert.equal(await ctx.canceled(), true);
    assert.equal(ctx.cancelSeen, true);
    assert.equal(ctx.signal.aborted, true, "a cancel seen aborts the signal");
    assert.ok(ctx.signal.reason instanceof TaskCanceled);
    assert.equal(ctx.lostLease, false, "a cancel leaves the writes open");
  });

  test("a write that returns a cancel-requested row makes canceled() free", async (t) => {
    const { client, task, ctx } = await claimed(t);
    await client.cancel(task.id);
    assert.equal(ctx.cancelSeen, false);
    await ctx.progress(0.1);
    assert.equal(ctx.cancelSeen, true);
    // Remembered from the write's reply: no read needed.
    assert.equal(await ctx.canceled(), true);
  });

  test("canceled(): a missing task counts as canceled; observeCancel(true) is remembered", async (t) => {
    const { client, row } = await claimed(t);
    const ghost = new TaskContext(client.store, { ...row, id: "task_00000000000000000000000000" }, WORKER, 30_000);
    assert.equal(await ghost.canceled(), true);
    const { ctx } = await claimed(t);
    ctx.observeCancel(false);
    assert.equal(ctx.cancelSeen, false);
    ctx.observeCancel(true);
    assert.equal(ctx.cancelSeen, true);
    assert.equal(await ctx.canceled(), true);
  });

  test("succeed: complete semantics, settles, and a second settle is a no-op returning null", async (t) => {
    const { client, task, ctx } = await claimed(t);
    const row = await ctx.succeed({ answer: 42 });
    assert.equal(row.status, "succeeded");
    assert.deepEqual(row.result, { answer: 42 });
    assert.equal(ctx.settled, true);
    assert.equal(await ctx.succeed("again"), null);
    assert.equal(await ctx.fail("too late"), null);
    assert.deepEqual((await client.get(task.id)).result, { answer: 42 });
  });

  test("succeed() with no argument stores no result", async (t) => {
    const { ctx } = await claimed(t);
    const row = await ctx.succeed();
    assert.equal(row.status, "succeeded");
    assert.equal(row.result, null);
  });

  test("succeed with a pending cancel ends canceled and drops the result", async (t) => {
    const { client, task, ctx } = await claimed(t);
    await client.cancel(task.id);
    const row = await ctx.succeed("dropped");
    assert.equal(row.status, "canceled");
    assert.equal(row.result, null);
    assert.equal(ctx.settled, true);
  });

  test("an unencodable result rejects with SerializationError and leaves the context unsettled", async (t) => {
    const { client, task, ctx } = await claimed(t);
    const err = await rejectionOf(ctx.succeed({ n: 1n }));
    assert.ok(err instanceof SerializationError, `got ${err?.name}`);
    assert.equal(ctx.settled, false);
    assert.equal(ctx.lostLease, false);
    assert.equal((await client.get(task.id)).status, "running");
    const row = await ctx.succeed("fine");
    assert.equal(row.result, "fine");
  });

  test("submit wires parent, root and correlation; explicit options override; wait returns the terminal row", async (t) => {
    const { client, task, ctx } = await claimed(t, { submit: { correlationId: "corr" } });
    const child = await ctx.submit("child", { c: 1 });
    assert.equal(child.parent_id, task.id);
    assert.equal(child.root_id, task.id);
    assert.equal(child.correlation_id, "corr");
    assert.deepEqual(child.payload, { c: 1 });
    const other = await ctx.submit(defineTask("child"), undefined, {
      parentId: null,
      rootId: "r",
      correlationId: "x",
      queue: "q",
    });
    assert.deepEqual([other.parent_id, other.root_id, other.correlation_id, other.queue], [null, "r", "x", "q"]);
    assert.deepEqual(other.payload, {});

    const timeout = await rejectionOf(ctx.wait(child.id, { timeoutMs: 30 }));
    assert.ok(timeout instanceof TaskTimeout);
    assert.equal(timeout.taskId, child.id);
    assert.equal(timeout.task.status, "queued");
    const childCtx = new TaskContext(
      client.store,
      await claimTask(client.store, child, { workerId: "w2" }),
      "w2",
      30_000,
    );
    await childCtx.succeed("child done");
    const done = await ctx.wait(child.id, { timeoutMs: 5000, pollMs: 5 });
    assert.equal(done.status, "succeeded");
    assert.equal(done.result, "child done");
  });
});

// ---------------------------------------------------------------------------
describe("fail: every FailReason form (docs/api.md, 'Envelopes')", () => {
  // With backoff disabled, a retryable failure re-queues with run_at = now.
  const noBackoff = { retryBackoffMs: 0 };

  test("no reason: TaskError 'task failed', retryable", async (t) => {
    const { ctx } = await claimed(t, { opts: noBackoff });
    const row = await ctx.fail();
    assert.equal(row.status, "queued");
    assert.deepEqual(row.error, envelope("TaskError", "task_error", "task failed", true));
    assert.equal(ctx.settled, true, "settled also when re-queued");
  });

  test("a string, a number and null become task_error envelopes; the option decides retryability", async (t) => {
    const cases = [
      ["nope", {}, envelope("TaskError", "task_error", "nope", true), "queued"],
      ["nope", { retryable: false }, envelope("TaskError", "task_error", "nope", false), "failed"],
      [42, {}, envelope("TaskError", "task_error", "42", true), "queued"],
      [null, { retryable: false }, envelope("TaskError", "task_error", "null", false), "failed"],
    ];
    for (const [reason, opts, expected, status] of cases) {
      const { ctx } = await claimed(t, { opts: noBackoff });
      const row = await ctx.fail(reason, opts);
      assert.equal(row.status, status, String(reason));
      assert.deepEqual(row.error, expected, String(reason));
      assert.deepEqual(Object.keys(row.error), ["type", "code", "message", "retryable", "details"]);
    }
  });

  test("an Error becomes handler_error typed by its name; retryable per the option", async (t) => {
    let { ctx } = await claimed(t, { opts: noBackoff });
    let row = await ctx.fail(new RangeError("out of range"), { retryable: false });
    assert.equal(row.status, "failed");
    assert.deepEqual(row.error, envelope("RangeError", "handler_error", "out of range", false));
    ({ ctx } = await claimed(t, { opts: noBackoff }));
    row = await ctx.fail(new Error("transient"));
    assert.equal(row.status, "queued");
    assert.deepEqual(row.error, envelope("Error", "handler_error", "transient", true));
  });

  test("a TaskError uses its own envelope and retryability; the option is ignored", async (t) => {
    let { ctx } = await claimed(t, { opts: noBackoff });
    let row = await ctx.fail(new TaskError("permanent", { code: "c1", details: { a: 1 } }), { retryable: true });
    assert.equal(row.status, "failed");
    assert.deepEqual(row.error, envelope("TaskError", "c1", "permanent", false, { a: 1 }));
    ({ ctx } = await claimed(t, { opts: noBackoff }));
    row = await ctx.fail(new TaskError("again", { code: "c2", type: "Custom", retryable: true }), { retryable: false });
    assert.equal(row.status, "queued");
    assert.deepEqual(row.error, envelope("Custom", "c2", "again", true));
  });

  test("a plain object is stored unchanged as a ready envelope", async (t) => {
    let { ctx } = await claimed(t, { opts: noBackoff });
    const ready = { code: "ready", type: "Ready", message: "as is", extra: [1, 2] };
    let row = await ctx.fail(ready, { retryable: false });
    assert.equal(row.status, "failed");
    assert.deepEqual(row.error, ready);
    assert.deepEqual(Object.keys(row.error), ["code", "type", "message", "extra"]);
    ({ ctx } = await claimed(t, { opts: noBackoff }));
    row = await ctx.fail({ type: "T", code: "c", message: "m", retryable: false, details: {} });
    assert.equal(row.status, "queued", "retryable comes from the option (default true), not the object");
  });

  test("retry delay follows the context's backoff options (defaults 1000 / 30000)", async (t) => {
    const check = (row, window) => {
      const delay = row.run_at_ms - row.updated_at_ms;
      assert.ok(delay >= Math.floor(window / 2) && delay < window, `delay ${delay} not in [${window / 2}, ${window})`);
    };
    let { ctx } = await claimed(t);
    check(await ctx.fail("default backoff"), 1000);
    ({ ctx } = await claimed(t, { opts: { retryBackoffMs: 8000, retryBackoffMaxMs: 6000 } }));
    check(await ctx.fail("capped"), 6000);
    const permanent = await claimed(t, { opts: { retryBackoffMs: 5000 } });
    const row = await permanent.ctx.fail("not retryable", { retryable: false });
    assert.equal(row.status, "failed");
    assert.equal(row.run_at_ms, permanent.row.run_at_ms, "no delay for a permanent failure");
  });

  test("a pending cancel wins over fail", async (t) => {
    const { client, task, ctx } = await claimed(t, { opts: noBackoff });
    await client.cancel(task.id);
    const row = await ctx.fail("boom");
    assert.equal(row.status, "canceled");
    assert.deepEqual(row.error, envelope("TaskError", "task_error", "boom", true));
  });
});

// ---------------------------------------------------------------------------
describe("write gate (docs/api.md, 'TaskContext')", () => {
  test("after settling, writes reject LostLease without touching the store and without setting lostLease", async (t) => {
    const { client, task, ctx } = await claimed(t);
    await ctx.succeed("done");
    const before = await client.get(task.id);
    await assertLostLease(ctx.progress(0.5, "late"), task.id);
    await assertLostLease(ctx.heartbeat(), task.id);
    assert.equal(ctx.lostLease, false);
    assert.equal(ctx.signal.aborted, false);
    assert.deepEqual(await client.get(task.id), before);
  });

  test("markSettled() closes the gate the same way", async (t) => {
    const { ctx, task } = await claimed(t);
    ctx.markSettled();
    assert.equal(ctx.settled, true);
    await assertLostLease(ctx.progress(0.1), task.id);
    assert.equal(await ctx.succeed("x"), null);
    assert.equal(ctx.lostLease, false);
  });

  test("a write that finds the task owned by someone else marks the lease lost and aborts the signal", async (t) => {
    const { client, task, ctx } = await claimed(t);
    // Another worker takes the task over: re-queued by its owner, claimed by w2.
    await client.store.fail({ taskId: task.id, workerId: WORKER, error: { message: "moved" }, delayMs: 0 });
    await claimTask(client.store, task, { workerId: "w2" });
    await assertLostLease(ctx.progress(0.5), task.id);
    assert.equal(ctx.lostLease, true);
    assert.equal(ctx.signal.aborted, true);
    assert.ok(ctx.signal.reason instanceof LostLease);
    assert.equal(ctx.signal.reason.taskId, task.id);
    assert.equal(ctx.settled, false);
    // Now refused before the store: even the new owner's row stays as it is.
    const before = await client.get(task.id);
    await assertLostLease(ctx.succeed("mine"), task.id);
    await assertLostLease(ctx.fail("mine"), task.id);
    await assertLostLease(ctx.heartbeat(), task.id);
    assert.deepEqual(await client.get(task.id), before);
    assert.equal(before.worker_id, "w2");
  });

  test("a context built with the wrong worker id is refused by the store", async (t) => {
    const { client, row } = await claimed(t);
    const impostor = new TaskContext(client.store, row, "someone-else", 30_000);
    await assertLostLease(impostor.succeed("x"), row.id);
    assert.equal(impostor.lostLease, true);
    assert.equal(impostor.settled, false);
    assert.equal((await client.get(row.id)).status, "running");
  });

  test("markLeaseLost() aborts the signal once with a LostLease reason", async (t) => {
    const { ctx, task } = await claimed(t);
    let aborts = 0;
    ctx.signal.addEventListener("abort", () => (aborts += 1));
    ctx.markLeaseLost();
    ctx.markLeaseLost();
    assert.equal(ctx.lostLease, true);
    assert.equal(ctx.signal.aborted, true);
    assert.ok(ctx.signal.reason instanceof LostLease);
    assert.equal(aborts, 1);
    await assertLostLease(ctx.progress(1), task.id);
  });
});
