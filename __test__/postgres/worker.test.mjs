// Workers on Postgres (API.md §10–§11): single and batch delivery, per-name
// concurrency, resources, retries with backoff, maxRunMs, cancellation while
// running — in this process, on a database of the test's own. Worker processes
// (blocked event loops, several processes, kills, restarts) are in
// processes.test.mjs.
import { describe, test } from "node:test";
import assert from "node:assert/strict";

import { TaskError } from "../../index.mjs";
import { waitFor } from "../helpers.mjs";
import { PG_SKIP, createDatabase, makePgWorker, openPgClient, statusTotals, waitForStatus } from "./pg-helpers.mjs";

// A hung test must fail, not hold CI: generous for a loaded machine.
const SUITE_TIMEOUT_MS = 180_000;

async function setup(t) {
  const db = await createDatabase(t);
  return { ...db, client: openPgClient(t, db.dsn) };
}

function inFlight() {
  const tracker = {
    now: 0,
    peak: 0,
    enter() {
      tracker.now += 1;
      tracker.peak = Math.max(tracker.peak, tracker.now);
    },
    leave() {
      tracker.now -= 1;
    },
  };
  return tracker;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitAll(client, ids, statuses = ["succeeded", "failed", "canceled"], timeoutMs = 60_000) {
  const rows = [];
  for (const id of ids) rows.push(await waitForStatus(client, id, statuses, { timeoutMs }));
  return rows;
}

describe("Postgres worker: delivery", { skip: PG_SKIP, timeout: SUITE_TIMEOUT_MS }, () => {
  test("single handler: every task runs once with its context, results are stored", async (t) => {
    const { client, dsn } = await setup(t);
    const seen = [];
    const worker = makePgWorker(t, dsn, { concurrency: 4 });
    worker.worker.task("square", (ctx, payload) => {
      seen.push({
        taskId: ctx.taskId,
        name: ctx.name,
        queue: ctx.queue,
        attempt: ctx.attempt,
        metadata: ctx.metadata,
        rootId: ctx.rootId,
        correlationId: ctx.correlationId,
        workerId: ctx.workerId,
      });
      return { n: payload.n, square: payload.n * payload.n };
    });
    const ids = [];
    for (let n = 0; n < 20; n++) {
      ids.push((await client.submit("square", { n }, { metadata: { n }, correlationId: `c${n}` })).id);
    }
    worker.start();
    const rows = await waitAll(client, ids);
    rows.forEach((row, n) => {
      assert.equal(row.status, "succeeded", JSON.stringify(row));
      assert.deepEqual(row.result, { n, square: n * n });
      assert.equal(row.attempt, 1);
      assert.equal(row.progress, 1);
      assert.equal(row.worker_id, worker.worker.id);
      assert.equal(row.lease_until_ms, null);
    });
    assert.equal(seen.length, 20);
    assert.deepEqual(new Set(seen.map((s) => s.taskId)), new Set(ids));
    const first = seen.find((s) => s.taskId === ids[3]);
    assert.deepEqual(first, {
      taskId: ids[3],
      name: "square",
      queue: "default",
      attempt: 1,
      metadata: { n: 3 },
      rootId: ids[3],
      correlationId: "c3",
      workerId: worker.worker.id,
    });
  });

  test("batch handler: calls of at most `batch` tasks; the returned map sets results, missing ids get null", async (t) => {
    const { client, dsn } = await setup(t);
    const calls = [];
    const worker = makePgWorker(t, dsn, { concurrency: 2 });
    worker.worker.task("embed", { batch: 5 }, (items) => {
      calls.push(items.map((ctx) => ctx.taskId));
      const out = {};
      for (const ctx of items) if (ctx.payload.i % 4 !== 0) out[ctx.taskId] = { len: ctx.payload.text.length };
      return out;
    });
    const tasks = [];
    for (let i = 0; i < 12; i++) tasks.push(await client.submit("embed", { i, text: "x".repeat(i) }));
    worker.start();
    const rows = await waitAll(
      client,
      tasks.map((x) => x.id),
    );
    rows.forEach((row, i) => {
      assert.equal(row.status, "succeeded");
      assert.deepEqual(row.result, i % 4 === 0 ? null : { len: i });
    });
    assert.ok(calls.every((c) => c.length >= 1 && c.length <= 5), JSON.stringify(calls.map((c) => c.length)));
    assert.ok(calls.some((c) => c.length > 1), "tasks queued before the start arrive batched");
    assert.equal(calls.flat().length, 12, "each task delivered once");
    assert.equal(new Set(calls.flat()).size, 12);
  });

  test("per-name concurrency caps one name while the worker runs others alongside", async (t) => {
    const { client, dsn } = await setup(t);
    const limited = inFlight();
    const all = inFlight();
    const worker = makePgWorker(t, dsn, { concurrency: 6 });
    worker.worker.task("limited", { concurrency: 2 }, async () => {
      limited.enter();
      all.enter();
      await sleep(120);
      limited.leave();
      all.leave();
    });
    worker.worker.task("free", async () => {
      all.enter();
      await sleep(120);
      all.leave();
    });
    const ids = [];
    for (let i = 0; i < 8; i++) ids.push((await client.submit("limited", { i })).id);
    for (let i = 0; i < 6; i++) ids.push((await client.submit("free", { i })).id);
    worker.start();
    const rows = await waitAll(client, ids);
    assert.ok(rows.every((r) => r.status === "succeeded"));
    assert.equal(limited.peak, 2, `at most (and, with a backlog, exactly) 2 "limited" calls at once, saw ${limited.peak}`);
    assert.ok(all.peak > 2, `other names ran alongside (peak ${all.peak})`);
    assert.ok(all.peak <= 6, `the worker's concurrency bounds everything (peak ${all.peak})`);
  });

  test("a resource of capacity 1 makes names that share it mutually exclusive; others are unaffected", async (t) => {
    const { client, dsn } = await setup(t);
    const gpu = inFlight();
    const other = inFlight();
    const worker = makePgWorker(t, dsn, { concurrency: 4, resources: { gpu: 1 } });
    const onGpu = async () => {
      gpu.enter();
      await sleep(60);
      gpu.leave();
    };
    worker.worker.task("render", { resource: "gpu" }, onGpu);
    worker.worker.task("train", { resource: "gpu" }, onGpu);
    worker.worker.task("cpu", async () => {
      other.enter();
      await sleep(60);
      other.leave();
    });
    const ids = [];
    for (let i = 0; i < 4; i++) {
      ids.push((await client.submit("render", { i })).id);
      ids.push((await client.submit("train", { i })).id);
      ids.push((await client.submit("cpu", { i })).id);
    }
    worker.start();
    const rows = await waitAll(client, ids);
    assert.ok(rows.every((r) => r.status === "succeeded"));
    assert.equal(gpu.peak, 1, `gpu names never overlapped (peak ${gpu.peak})`);
    assert.ok(other.peak >= 2, `names without the resource are not held back (peak ${other.peak})`);
  });
});

describe("Postgres worker: failures", { skip: PG_SKIP, timeout: SUITE_TIMEOUT_MS }, () => {
  test("a throwing handler is retried with backoff until it succeeds; the last error is kept", async (t) => {
    const { client, dsn } = await setup(t);
    const runs = [];
    const worker = makePgWorker(t, dsn, { retryBackoffMs: 200, retryBackoffMaxMs: 1000 });
    worker.worker.task("flaky", (ctx) => {
      runs.push({ attempt: ctx.attempt, at: Date.now() });
      if (ctx.attempt < 3) throw new RangeError(`attempt ${ctx.attempt} failed`);
      return { ok: ctx.attempt };
    });
    const task = await client.submit("flaky", {}, { maxAttempts: 3 });
    worker.start();
    const row = await waitForStatus(client, task.id, ["succeeded", "failed"]);
    assert.equal(row.status, "succeeded");
    assert.equal(row.attempt, 3);
    assert.deepEqual(row.result, { ok: 3 });
    assert.deepEqual(row.error, {
      type: "RangeError",
      code: "handler_error",
      message: "attempt 2 failed",
      retryable: true,
      details: {},
    });
    assert.deepEqual(
      runs.map((r) => r.attempt),
      [1, 2, 3],
    );
    // Equal jitter: the delay after attempt 1 is in [100, 200), after attempt 2 in [200, 400).
    assert.ok(runs[1].at - runs[0].at >= 100, `first backoff ${runs[1].at - runs[0].at}ms`);
    assert.ok(runs[2].at - runs[1].at >= 200, `second backoff ${runs[2].at - runs[1].at}ms`);
  });

  test("attempts run out → failed; a non-retryable TaskError fails at once", async (t) => {
    const { client, dsn } = await setup(t);
    const worker = makePgWorker(t, dsn, { retryBackoffMs: 0 });
    worker.worker.task("always", () => {
      throw new Error("still broken");
    });
    worker.worker.task("invalid", () => {
      throw new TaskError("bad input", { code: "bad_input", details: { field: "x" } });
    });
    const always = await client.submit("always", {}, { maxAttempts: 2 });
    const invalid = await client.submit("invalid", {}, { maxAttempts: 5 });
    worker.start();
    const [a, b] = await waitAll(client, [always.id, invalid.id], ["failed", "succeeded", "canceled"]);
    assert.equal(a.status, "failed");
    assert.equal(a.attempt, 2);
    assert.equal(a.error.code, "handler_error");
    assert.equal(a.error.message, "still broken");
    assert.equal(b.status, "failed");
    assert.equal(b.attempt, 1);
    assert.deepEqual(b.error, { type: "TaskError", code: "bad_input", message: "bad input", retryable: false, details: { field: "x" } });
  });

  test("maxRunMs abandons a call that never settles: handler_timeout, retried, the signal aborts", async (t) => {
    const { client, dsn } = await setup(t);
    const aborted = [];
    const worker = makePgWorker(t, dsn, { maxRunMs: 300, retryBackoffMs: 0 });
    worker.worker.task("stuck", (ctx) => {
      ctx.signal.addEventListener("abort", () => aborted.push({ attempt: ctx.attempt, reason: ctx.signal.reason?.name }));
      return new Promise(() => {});
    });
    const task = await client.submit("stuck", {}, { maxAttempts: 2 });
    worker.start();
    const row = await waitForStatus(client, task.id, "failed");
    assert.equal(row.attempt, 2);
    assert.deepEqual(row.error, {
      type: "HandlerTimeout",
      code: "handler_timeout",
      message: "handler for stuck exceeded maxRunMs=300ms; the attempt was abandoned",
      retryable: true,
      details: {},
    });
    await waitFor(() => aborted.length === 2, { message: `signals aborted: ${JSON.stringify(aborted)}` });
    assert.deepEqual(aborted, [
      { attempt: 1, reason: "LostLease" },
      { attempt: 2, reason: "LostLease" },
    ]);
  });

  test("cancel while running: the handler observes it and the task ends canceled, its result dropped", async (t) => {
    const { client, dsn } = await setup(t);
    let observedBy = null;
    // A short lease: the heartbeat carries the cancel flag back quickly.
    const worker = makePgWorker(t, dsn, { leaseMs: 600 });
    worker.worker.task("long", async (ctx) => {
      for (;;) {
        if (await ctx.canceled()) {
          observedBy = ctx.attempt;
          return { finished: "early" };
        }
        await sleep(20);
      }
    });
    const task = await client.submit("long");
    worker.start();
    await waitForStatus(client, task.id, "running");
    const flagged = await client.cancel(task.id);
    assert.equal(flagged.status, "running");
    assert.notEqual(flagged.cancel_requested_at_ms, null);
    const row = await waitForStatus(client, task.id, ["canceled", "succeeded", "failed"]);
    assert.equal(row.status, "canceled");
    assert.equal(row.result, null);
    assert.equal(row.attempt, 1);
    assert.equal(observedBy, 1);
  });

  test("the lease is renewed while a handler runs longer than it", async (t) => {
    const { client, dsn } = await setup(t);
    const worker = makePgWorker(t, dsn, { leaseMs: 400 });
    let release;
    const gate = new Promise((resolve) => (release = resolve));
    worker.worker.task("slow", () => gate.then(() => "done"));
    const task = await client.submit("slow");
    worker.start();
    const first = await waitForStatus(client, task.id, "running");
    await waitFor(async () => (await client.get(task.id)).lease_until_ms > first.lease_until_ms + 400, {
      timeoutMs: 10_000,
      message: "the lease was not renewed past twice its length",
    });
    release();
    const row = await waitForStatus(client, task.id, "succeeded");
    assert.equal(row.attempt, 1, "never re-claimed");
    assert.equal(row.result, "done");
    assert.deepEqual(await statusTotals(client), { queued: 0, running: 0, succeeded: 1, failed: 0, canceled: 0 });
  });
});
