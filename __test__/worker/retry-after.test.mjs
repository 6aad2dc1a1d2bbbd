// `return ctx.retryAfter(ms)` (docs/api.md, "Push-back"): the run ends without
// failing; the task goes back to its queue to start no sooner than `ms` from
// now, and the attempt is given back — on every dialect.

import assert from "node:assert/strict";

import { rejectionOf } from "../support/helpers.mjs";
import { makeGate, waitForStatus } from "../support/worker-helpers.mjs";
import { forEachDialect, setupWorker, test } from "../support/dialects.mjs";

forEachDialect("ctx.retryAfter", (dialect) => {
  test("the task waits ms in its queue, keeps its attempt and then runs again", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect, { pollIntervalMs: 20 });
    const runs = [];
    const pushedBack = makeGate();
    worker.task("upstream", async (ctx) => {
      runs.push({ attempt: ctx.attempt, at: Date.now() });
      if (runs.length === 1) {
        setImmediate(() => pushedBack.release());
        return ctx.retryAfter(1500);
      }
      return "answered";
    });
    const task = await client.submit("upstream", {}, { maxAttempts: 1 });
    const submittedAt = Date.now();
    handle.start();
    await pushedBack.promise;
    const waiting = await waitForStatus(client, task.id, "queued");
    assert.equal(waiting.attempt, 0, "the attempt is given back");
    assert.equal(waiting.error, null, "nothing failed");
    assert.equal(waiting.worker_id, null);
    assert.ok(waiting.run_at_ms >= submittedAt + 1500 - 5, "due no sooner than ms from the push-back");
    const done = await waitForStatus(client, task.id, "succeeded");
    assert.equal(done.result, "answered");
    assert.equal(done.attempt, 1, "with maxAttempts 1 the second run still ran: the first used no attempt");
    assert.equal(runs.length, 2);
    assert.deepEqual(
      runs.map((run) => run.attempt),
      [1, 1],
    );
    assert.ok(
      runs[1].at - runs[0].at >= 1500 - dialect.clockSlackMs - 5,
      `ran again after ${runs[1].at - runs[0].at} ms`,
    );
  });

  test("bad ms and a batch handler are refused; the run goes on", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect);
    const refusals = {};
    const refusal = async (label, fn) => {
      const err = await rejectionOf(fn());
      refusals[label] = `${err.name}: ${err.message}`;
    };
    worker.task("misuse", async (ctx) => {
      await refusal("negative", () => ctx.retryAfter(-1));
      await refusal("NaN", () => ctx.retryAfter(NaN));
      await refusal("not a number", () => ctx.retryAfter(/** @type {any} */ ("100")));
      return "done";
    });
    worker.task("batched", { batch: 2 }, async (contexts) => {
      await refusal("batch", () => contexts[0].retryAfter(10));
      return null;
    });
    handle.start();
    const task = await client.submit("misuse", {});
    const batched = await client.submit("batched", {});
    assert.equal((await waitForStatus(client, task.id, "succeeded")).result, "done");
    await waitForStatus(client, batched.id, "succeeded");
    assert.deepEqual(refusals, {
      negative: "Error: ms must be >= 0, got -1",
      NaN: "Error: ms must be a finite number of milliseconds, at most 1e15 (about 31,700 years), got NaN",
      "not a number": "Error: ms must be a number of milliseconds, got 100",
      batch: "Error: ctx.retryAfter cannot suspend a task of a batch call: its handler runs for the whole batch",
    });
  });
});
