// Cooperative cancellation and lease loss while a handler runs (docs/api.md,
// "Dispatch and settlement", "Heartbeat and blocked loops", "TaskContext"):
// canceled(), the abort signal, a stolen task, and the heartbeat.

import assert from "node:assert/strict";

import { LostLease } from "../../index.mjs";
import { statusTotals, waitFor } from "../support/helpers.mjs";
import { CALL, assertLostLease, makeGate, waitForStatus } from "../support/worker-helpers.mjs";
import { forEachDialect, setupWorker, test } from "../support/dialects.mjs";

// ---------------------------------------------------------------------------
forEachDialect("cancellation and lease loss", (dialect) => {
  test("cancel while running: canceled() turns true, the signal aborts, returning finalizes canceled", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect, { leaseMs: 600 });
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
    assert.deepEqual(observed.polls, { aborted: true, lostLease: false });
    assert.deepEqual(observed.waits, { canceled: true, aborted: true });
  });

  test("a task taken over by another worker flags only its own context", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect, { leaseMs: 600 });
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
    const { client, handle, worker } = await setupWorker(t, dialect, { leaseMs: 200, concurrency: 2 });
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

  test("the lease is renewed while a handler runs longer than it", async (t) => {
    const { client, db } = await dialect.open(t);
    const worker = dialect.makeWorker(t, db, { leaseMs: 400 });
    let release;
    const gate = new Promise((resolve) => (release = resolve));
    worker.worker.task("slow", () => gate.then(() => "done"));
    const task = await client.submit("slow");
    worker.start();
    const first = await waitForStatus(client, task.id, "running", { timeoutMs: 30_000 });
    await waitFor(async () => (await client.get(task.id)).lease_until_ms > first.lease_until_ms + 400, {
      timeoutMs: 10_000,
      message: "the lease was not renewed past twice its length",
    });
    release();
    const row = await waitForStatus(client, task.id, "succeeded", { timeoutMs: 30_000 });
    assert.equal(row.attempt, 1, "never re-claimed");
    assert.equal(row.result, "done");
    assert.deepEqual(await statusTotals(client), { queued: 0, running: 0, succeeded: 1, failed: 0, canceled: 0 });
  });
});
