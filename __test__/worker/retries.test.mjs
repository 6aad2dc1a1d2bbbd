// Retries (docs/api.md, "Retry backoff"): the backoff window per attempt,
// backoff switched off, and max_attempts.

import assert from "node:assert/strict";

import { envelope, rowsOf, waitForStatus } from "../support/worker-helpers.mjs";
import { forEachDialect, setupWorker, test } from "../support/dialects.mjs";

// ---------------------------------------------------------------------------
forEachDialect("retries and backoff", (dialect) => {
  test("a failed attempt's retry delay lies in [w/2, w) of its window; ctx.fail uses the same settings", async (t) => {
    const base = 4000;
    const max = 10_000;
    const perAttempt = 3;
    const { client, handle, worker } = await setupWorker(t, dialect, {
      retryBackoffMs: base,
      retryBackoffMaxMs: max,
      concurrency: 20,
    });
    const ids = {};
    for (const n of [1, 2, 3, 4]) {
      const name = `fail${n}`;
      ids[n] = [];
      for (let i = 0; i < perAttempt; i++) ids[n].push((await client.submit(name, {}, { maxAttempts: 10 })).id);
      // Bring these tasks to attempt n - 1 so the worker's claim is attempt n.
      for (let bump = 1; bump < n; bump++) {
        const claimed = await client.store.claim({
          queues: ["default"],
          workerId: "bumper",
          names: [name],
          limit: perAttempt,
        });
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
    const { client, handle, worker } = await setupWorker(t, dialect, { retryBackoffMs: 0 });
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
    const { client, handle, worker } = await setupWorker(t, dialect, { retryBackoffMs: 0 });
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

  test("a throwing handler is retried with backoff until it succeeds; the last error is kept", async (t) => {
    const { client, db } = await dialect.open(t);
    const runs = [];
    const worker = dialect.makeWorker(t, db, { retryBackoffMs: 200, retryBackoffMaxMs: 1000 });
    worker.worker.task("flaky", (ctx) => {
      runs.push({ attempt: ctx.attempt, at: Date.now() });
      if (ctx.attempt < 3) throw new RangeError(`attempt ${ctx.attempt} failed`);
      return { ok: ctx.attempt };
    });
    const task = await client.submit("flaky", {}, { maxAttempts: 3 });
    worker.start();
    const row = await waitForStatus(client, task.id, ["succeeded", "failed"], { timeoutMs: 30_000 });
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
});
