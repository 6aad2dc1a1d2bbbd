// Delivery (docs/api.md, "Registrations", "Dispatch and settlement"): every
// task reaches a handler exactly once with its context, one call at a time or
// in batches of at most `batch`.

import assert from "node:assert/strict";

import { waitAllTerminal } from "../support/worker-helpers.mjs";
import { forEachDialect, test } from "../support/dialects.mjs";

// ---------------------------------------------------------------------------
forEachDialect("delivery", (dialect) => {
  test("single handler: every task runs once with its context, results are stored", async (t) => {
    const { client, db } = await dialect.open(t);
    const seen = [];
    const worker = dialect.makeWorker(t, db, { concurrency: 4 });
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
    const rows = await waitAllTerminal(client, ids, { timeoutMs: 60_000 });
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
    const { client, db } = await dialect.open(t);
    const calls = [];
    const worker = dialect.makeWorker(t, db, { concurrency: 2 });
    worker.worker.task("embed", { batch: 5 }, (items) => {
      calls.push(items.map((ctx) => ctx.taskId));
      const out = {};
      for (const ctx of items) if (ctx.payload.i % 4 !== 0) out[ctx.taskId] = { len: ctx.payload.text.length };
      return out;
    });
    const tasks = [];
    for (let i = 0; i < 12; i++) tasks.push(await client.submit("embed", { i, text: "x".repeat(i) }));
    worker.start();
    const rows = await waitAllTerminal(
      client,
      tasks.map((x) => x.id),
      { timeoutMs: 60_000 },
    );
    rows.forEach((row, i) => {
      assert.equal(row.status, "succeeded");
      assert.deepEqual(row.result, i % 4 === 0 ? null : { len: i });
    });
    assert.ok(
      calls.every((c) => c.length >= 1 && c.length <= 5),
      JSON.stringify(calls.map((c) => c.length)),
    );
    assert.ok(
      calls.some((c) => c.length > 1),
      "tasks queued before the start arrive batched",
    );
    assert.equal(calls.flat().length, 12, "each task delivered once");
    assert.equal(new Set(calls.flat()).size, 12);
  });
});
