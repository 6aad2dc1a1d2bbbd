// The TaskContext a handler receives (docs/api.md, "TaskContext"): read-only
// members, writes, child tasks, ctx.call, and backpressure on ctx.submit.

import assert from "node:assert/strict";

import { QueueFull, TaskContext, TaskError, TaskTimeout, defineTask } from "../../index.mjs";
import { rejectionOf } from "../support/helpers.mjs";
import { CALL, makeGate, waitForStatus } from "../support/worker-helpers.mjs";
import { forEachDialect, setupWorker, test } from "../support/dialects.mjs";

// ---------------------------------------------------------------------------
forEachDialect("TaskContext in a handler", (dialect) => {
  test("read-only members, progress (coalescing), heartbeat, canceled, succeed, submit and wait", async (t) => {
    const leaseMs = 5000;
    const { client, handle, worker } = await setupWorker(t, dialect, { queues: ["q1"], leaseMs, concurrency: 2 });
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
        workerIdAssignment: (() => {
          try {
            ctx.workerId = "someone-else";
            return "assigned";
          } catch (err) {
            return err.constructor.name;
          }
        })(),
        settledBefore: ctx.settled,
        lostLease: ctx.lostLease,
        aborted: ctx.signal.aborted,
        hasParentId: "parentId" in ctx,
        maxAttempts: ctx.maxAttempts,
        isLastAttempt: ctx.isLastAttempt,
      };
      s.p1 = await ctx.progress(0.25, "quarter");
      s.p2 = await ctx.progress(null, "message only");
      s.p3 = await ctx.progress(0.5);
      const before = Date.now();
      s.hb = await ctx.heartbeat();
      s.hbWindow = [before + leaseMs, Date.now() + leaseMs];
      s.canceled = await ctx.canceled();
      s.child = await ctx.submit("child", { c: 1 });
      s.override = await ctx.submit(
        defineTask("child"),
        { c: 2 },
        { correlationId: "other", rootId: "root-x", parentId: null },
      );
      s.worked = await ctx.submit("grandchildOf", { c: 3 }, { queue: "q1" });
      s.waited = await ctx.wait(s.worked.id, { timeoutMs: 20_000 });
      s.timeout = await rejectionOf(ctx.wait(s.child.id, { timeoutMs: 50 }));
      s.succeeded = await ctx.succeed({ done: true });
      s.settledAfter = ctx.settled;
      snapshot.release(s);
      return "ignored: already settled";
    });
    worker.task("grandchildOf", (ctx) => ({
      rootId: ctx.rootId,
      correlationId: ctx.correlationId,
      attempt: ctx.attempt,
    }));
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
    assert.equal(s.workerId, worker.workerId);
    assert.equal(s.workerIdAssignment, "TypeError", "ctx.workerId is read-only");
    assert.equal(s.settledBefore, false);
    assert.equal(s.lostLease, false);
    assert.equal(s.aborted, false);
    assert.equal(s.hasParentId, false);
    assert.deepEqual([s.maxAttempts, s.isLastAttempt], [4, false], "its max_attempts, attempt 1");

    assert.deepEqual([s.p1.progress, s.p1.message], [0.25, "quarter"]);
    assert.deepEqual([s.p2.progress, s.p2.message], [0.25, "message only"], "null progress leaves it unchanged");
    assert.deepEqual([s.p3.progress, s.p3.message], [0.5, "message only"], "absent message leaves it unchanged");
    assert.ok(
      s.hb.lease_until_ms >= s.hbWindow[0] && s.hb.lease_until_ms <= s.hbWindow[1] + dialect.clockSlackMs,
      `heartbeat renews by leaseMs: lease_until_ms ${s.hb.lease_until_ms}, expected within [${s.hbWindow}]`,
    );
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
    const { client, handle, worker } = await setupWorker(t, dialect, {
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
    const { client, handle, worker } = await setupWorker(t, dialect, { concurrency: 2 });
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
    assert.deepEqual(done.result, {
      result: { doubled: 42, parentId: null },
      failure: { name: "TaskFailed", code: "bad_input" },
    });
    const children = await client.list({ name: "child" });
    assert.equal(children.length, 2);
    for (const child of children) {
      assert.deepEqual([child.parent_id, child.root_id, child.correlation_id], [parent.id, parent.id, "corr-call"]);
    }
  });
});
