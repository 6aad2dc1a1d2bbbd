// WorkerOptions.maxRunMs (docs/api.md, "Dispatch and settlement"): abandoning a
// call that does not settle, for single and batch handlers, also while the
// event loop is blocked.

import assert from "node:assert/strict";

import { HandlerTimeout, LostLease } from "../../index.mjs";
import { rejectionOf, waitFor } from "../support/helpers.mjs";
import {
  CALL,
  assertLostLease,
  blockEventLoop,
  envelope,
  makeGate,
  waitAllTerminal,
  waitForStatus,
} from "../support/worker-helpers.mjs";
import { forEachDialect, setupWorker, test } from "../support/dialects.mjs";

// ---------------------------------------------------------------------------
forEachDialect("maxRunMs", (dialect) => {
  test("a handler that never settles: handler_timeout recorded, signal aborted, slot released", async (t) => {
    const maxRunMs = 300;
    const { client, handle, worker } = await setupWorker(t, dialect, {
      maxRunMs,
      concurrency: 1,
      retryBackoffMs: 60_000,
      retryBackoffMaxMs: 60_000,
    });
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
    assert.ok(ctx.signal.reason instanceof HandlerTimeout);
    assert.equal(ctx.signal.reason.taskId, hang.id);
    assert.equal(ctx.settled, true, "the worker's fail settled it");
    await assertLostLease(ctx.progress(0.5), hang.id);
  });

  test("redelivery after handler_timeout does not wait for the lease; max_attempts still applies", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect, {
      maxRunMs: 150,
      leaseMs: 60_000,
      retryBackoffMs: 0,
    });
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
    const { client, handle, worker } = await setupWorker(t, dialect, {
      maxRunMs: 300,
      retryBackoffMs: 60_000,
      retryBackoffMaxMs: 60_000,
    });
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
    const { client, handle, worker } = await setupWorker(t, dialect, {
      maxRunMs,
      retryBackoffMs: 60_000,
      retryBackoffMaxMs: 60_000,
    });
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
    assert.ok(observed.reason instanceof HandlerTimeout);
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

  test("maxRunMs abandons a call that never settles: handler_timeout, retried, the signal aborts", async (t) => {
    const { client, db } = await dialect.open(t);
    const aborted = [];
    const worker = dialect.makeWorker(t, db, { maxRunMs: 300, retryBackoffMs: 0 });
    worker.worker.task("stuck", (ctx) => {
      ctx.signal.addEventListener("abort", () =>
        aborted.push({ attempt: ctx.attempt, reason: ctx.signal.reason?.name }),
      );
      return new Promise(() => {});
    });
    const task = await client.submit("stuck", {}, { maxAttempts: 2 });
    worker.start();
    const row = await waitForStatus(client, task.id, "failed", { timeoutMs: 30_000 });
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
      { attempt: 1, reason: "HandlerTimeout" },
      { attempt: 2, reason: "HandlerTimeout" },
    ]);
  });
});
