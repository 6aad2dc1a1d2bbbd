// Time limits and aborts (docs/api.md, "Time limits and aborts"): timeoutMs
// per registration and per submit over maxRunMs, ctx.signal's typed reasons,
// the cancel watch, a late result dropped, and stop's shutdown deadline, with
// real worker processes and a canceling client process.

import assert from "node:assert/strict";

import { HandlerTimeout, TaskCanceled } from "../../index.mjs";
import { assertThrowsPlainError, spawnFixture, statusTotals, waitFor } from "../support/helpers.mjs";
import { envelope, makeGate, waitForStatus } from "../support/worker-helpers.mjs";
import { forEachDialect, setupWorker, test } from "../support/dialects.mjs";

/** A lease whose heartbeat (a third of it) cannot be what saw a cancel in these tests. */
const LONG_LEASE_MS = 90_000;

const timedOut = (name, option, ms) =>
  envelope(
    "HandlerTimeout",
    "handler_timeout",
    `handler for ${name} exceeded ${option}=${ms}ms; the attempt was abandoned`,
    true,
  );

/** The worker fixture on `db`, its first "started" event awaited. */
function spawnAbortWorker(t, dialect, db, config) {
  return spawnFixture(t, "abort-worker.mjs", { dialect: dialect.name, db, leaseMs: LONG_LEASE_MS, ...config });
}

forEachDialect("time limits and aborts", (dialect) => {
  test("a registration's timeoutMs replaces maxRunMs; the signal aborts with HandlerTimeout", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect, { maxRunMs: 60_000, retryBackoffMs: 60_000 });
    const aborted = makeGate();
    worker.task("hang", { timeoutMs: 200 }, async (ctx) => {
      ctx.signal.addEventListener("abort", () => aborted.release(ctx.signal.reason));
      await new Promise(() => {});
    });
    const task = await client.submit("hang");
    handle.start();
    const reason = await aborted.promise;
    assert.ok(reason instanceof HandlerTimeout);
    assert.equal(reason.code, "handler_timeout");
    assert.equal(reason.taskId, task.id);
    const row = await waitFor(async () => {
      const r = await client.get(task.id);
      return r.status === "queued" && r.error ? r : null;
    });
    assert.deepEqual(row.error, timedOut("hang", "timeoutMs", 200));
  });

  test("a submit's timeoutMs travels in the metadata and wins over the registration's", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect);
    worker.task("hang", { timeoutMs: 60_000 }, () => new Promise(() => {}));
    const task = await client.submit("hang", {}, { timeoutMs: 250, maxAttempts: 1, metadata: { tenant: "a" } });
    assert.deepEqual(task.metadata, { tenant: "a", "cairnq.timeoutMs": 250 });
    handle.start();
    const row = await waitForStatus(client, task.id, "failed");
    assert.deepEqual(row.error, timedOut("hang", "timeoutMs", 250));
  });

  test("bad time limits are refused naming the field, and nothing is written", async (t) => {
    const { client, worker } = await setupWorker(t, dialect);
    for (const [timeoutMs, message] of [
      [0, "timeoutMs must be > 0, got 0"],
      [Number.NaN, "timeoutMs must be > 0, got NaN"],
      ["5", 'timeoutMs must be a number, got "5"'],
      [Infinity, "timeoutMs must be a finite number of milliseconds, at most 1e15 (about 31,700 years), got Infinity"],
    ]) {
      await assert.rejects(client.submit("job", {}, { timeoutMs }), { message });
    }
    await assert.rejects(client.submit("job", {}, { timeoutMs: 5, metadata: [1] }), {
      message: "timeoutMs needs metadata to be an object, got [1]",
    });
    await assert.rejects(client.submitMany([{ task: "job", options: { timeoutMs: -1 } }]), {
      message: "items[0].options.timeoutMs must be > 0, got -1",
    });
    assert.deepEqual(Object.values(await statusTotals(client)), [0, 0, 0, 0, 0], "nothing written");
    assertThrowsPlainError(() => worker.task("job", { timeoutMs: -5 }, () => {}), "timeoutMs must be > 0, got -5");
    assertThrowsPlainError(() => worker.stop({ timeoutMs: -1 }), "timeoutMs must be >= 0, got -1");
    assertThrowsPlainError(() => worker.stop({ timeoutMs: "soon" }), 'timeoutMs must be a number, got "soon"');
    assertThrowsPlainError(
      () => worker.stop({ deadline: 5 }),
      'unknown key "deadline" in stop options (known: timeoutMs)',
    );
    await assert.rejects(worker.serve({ shutdownTimeoutMs: -1 }), {
      message: "shutdownTimeoutMs must be >= 0, got -1",
    });
  });

  test("a cancel aborts a running handler's signal with TaskCanceled long before a heartbeat", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect, { leaseMs: LONG_LEASE_MS });
    const started = makeGate();
    worker.task("job", (ctx) => {
      started.release(ctx);
      return new Promise((_, reject) => ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason)));
    });
    const task = await client.submit("job");
    handle.start();
    const ctx = await started.promise;
    await client.cancel(task.id);
    // The first beat comes a third of the lease after the start: 30 s.
    const row = await waitForStatus(client, task.id, "canceled", { timeoutMs: 10_000 });
    assert.ok(ctx.signal.reason instanceof TaskCanceled);
    assert.equal(ctx.signal.reason.code, "task_canceled");
    assert.equal(ctx.lostLease, false, "a cancel leaves the writes open: a cancel wins them all");
    assert.equal(row.result, null);
  });

  test("a handler that ignores its signal: its late result is never stored, not even on its retry", async (t) => {
    const { client, db } = await dialect.open(t);
    const task = await client.submit("job", {}, { maxAttempts: 2 });
    // The first attempt returns while the second, claimed by the same worker, runs.
    const proc = spawnAbortWorker(t, dialect, db, { timeoutMs: 1000, retryBackoffMs: 0, returnWhenRetried: true });
    const aborted = await proc.waitForEvent((e) => e.event === "aborted", { what: "the abort" });
    assert.deepEqual(aborted, {
      event: "aborted",
      id: task.id,
      name: "HandlerTimeout",
      code: "handler_timeout",
      typed: true,
      taskId: task.id,
    });
    const late = await proc.waitForEvent((e) => e.event === "returned", { what: "the late return" });
    assert.equal(late.attempt, 1);
    const failed = await waitForStatus(client, task.id, ["failed", "succeeded"]);
    assert.equal(failed.status, "failed", "the second attempt timed out too; the first's result was dropped");
    assert.equal(failed.attempt, 2);
    assert.equal(failed.result, null);
    assert.deepEqual(failed.error, timedOut("job", "timeoutMs", 1000));
  });

  test("a cancel from another process aborts a worker process's handler within the cancel watch", async (t) => {
    const { client, db } = await dialect.open(t);
    const task = await client.submit("job");
    const worker = spawnAbortWorker(t, dialect, db, { honor: true });
    await worker.waitForEvent((e) => e.event === "started", { what: "the start" });
    const canceler = spawnFixture(t, "cancel-task.mjs", { dialect: dialect.name, db, taskId: task.id });
    assert.equal((await canceler.waitForEvent((e) => e.event === "canceled")).status, "running");
    // A heartbeat would come 30 s after the start: this is the cancel watch.
    const aborted = await worker.waitForEvent((e) => e.event === "aborted", { timeoutMs: 10_000, what: "the abort" });
    assert.deepEqual(
      [aborted.name, aborted.code, aborted.typed, aborted.taskId],
      ["TaskCanceled", "task_canceled", true, task.id],
    );
    await waitForStatus(client, task.id, "canceled");
  });

  test("serve's shutdownTimeoutMs hands a hung handler's task back at once, its attempt given back", async (t) => {
    const { client, db } = await dialect.open(t);
    const task = await client.submit("job");
    const proc = spawnAbortWorker(t, dialect, db, { shutdownTimeoutMs: 300 });
    await proc.waitForEvent((e) => e.event === "started", { what: "the start" });
    const running = await client.get(task.id);
    assert.equal(running.attempt, 1);
    proc.kill("SIGTERM");
    const aborted = await proc.waitForEvent((e) => e.event === "aborted", { what: "the abort" });
    assert.deepEqual([aborted.name, aborted.code, aborted.typed], ["WorkerShutdown", "worker_shutdown", true]);
    await proc.waitForEvent((e) => e.event === "served", { what: "serve's end" });
    // Well before the 90 s lease would have expired.
    assert.deepEqual(await proc.waitExit(20_000), { code: 0, signal: null });
    const row = await client.get(task.id);
    assert.equal(row.status, "queued");
    assert.equal(row.worker_id, null);
    assert.equal(row.lease_until_ms, null);
    assert.equal(row.attempt, 0, "the attempt was given back");
    assert.ok(row.run_at_ms <= Date.now() + dialect.clockSlackMs, "due at once");
  });
});
