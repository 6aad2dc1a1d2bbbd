// Worker lifecycle (docs/api.md, "Worker construction and lifecycle"): stop,
// run, registering during a run, serve() and background().

import assert from "node:assert/strict";
import fs from "node:fs";

import { CairnQ, SerializationError, Worker } from "../../index.mjs";
import { claimTask, makeDbPath, rejectionOf, waitFor } from "../support/helpers.mjs";
import { CALL, makeGate, rowsOf, staysFalse, waitAllTerminal, waitForStatus } from "../support/worker-helpers.mjs";
import { forEachDialect, makeStore, setupWorker, sqlite, test } from "../support/dialects.mjs";

// ---------------------------------------------------------------------------
forEachDialect("lifecycle", (dialect) => {
  test("stop() cuts a 5 s idle poll short", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect, { pollIntervalMs: 5000 });
    worker.task("one", () => 1);
    const task = await client.submit("one");
    const running = handle.start();
    await waitForStatus(client, task.id, "succeeded");
    // Now idle: the next poll found nothing and sleeps for 5 s.
    const started = Date.now();
    worker.stop();
    await running;
    const elapsed = Date.now() - started;
    assert.ok(elapsed < 2000, `run settled ${elapsed}ms after stop()`);
  });

  test("a worker stopped before run() returns after connecting and never claims; stop is irreversible", async (t) => {
    const { client, worker } = await setupWorker(t, dialect);
    let calls = 0;
    worker.task("job", () => {
      calls += 1;
    });
    const task = await client.submit("job");
    worker.stop();
    await worker.run();
    await worker.run();
    assert.equal(calls, 0);
    const row = await client.get(task.id);
    assert.equal(row.status, "queued");
    assert.equal(row.attempt, 0);
  });

  test("run() waits for every call in flight before settling", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect);
    const started = makeGate();
    const finish = makeGate();
    worker.task("slow", async () => {
      started.release();
      await finish.promise;
      return "finished";
    });
    const task = await client.submit("slow");
    const running = handle.start();
    await started.promise;
    worker.stop();
    let settled = false;
    running.then(() => (settled = true));
    assert.ok(await staysFalse(() => settled, 200), "run settled while a handler was in flight");
    finish.release();
    await running;
    assert.equal((await client.get(task.id)).status, "succeeded");
  });

  test("handlers registered during run take effect; a re-registration replaces the handler", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect);
    worker.task("early", () => "first");
    handle.start();
    const late = await client.submit("late");
    assert.equal(await client.call("early", {}, CALL), "first");
    assert.equal((await client.get(late.id)).status, "queued", "no handler for it yet");
    worker.task("late", () => "registered later");
    assert.equal((await waitForStatus(client, late.id, "succeeded")).result, "registered later");
    worker.task("early", () => "replaced");
    assert.equal(await client.call("early", {}, CALL), "replaced");
  });

  test("a worker without handlers never claims and never recovers leases", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect);
    handle.start();
    const queued = await client.submit("y");
    const expired = await client.submit("x");
    const claimed = await claimTask(client.store, expired, { workerId: "gone", leaseMs: 1 });
    await waitFor(() => Date.now() > claimed.lease_until_ms);
    const untouched = await staysFalse(async () => {
      const [q, e] = await rowsOf(client, [queued.id, expired.id]);
      return q.status !== "queued" || e.status !== "running";
    }, 300);
    assert.ok(untouched, "a worker with no handlers touched the queue");
    worker.task("x", (ctx) => ctx.attempt).task("y", (ctx) => ctx.attempt);
    const [q, e] = await waitAllTerminal(client, [queued.id, expired.id]);
    assert.equal(q.result, 1);
    assert.equal(e.result, 2, "recovered, then claimed again");
  });

  test("serve() in process: listens for both signals, stops on the first, removes its listeners", async (t) => {
    const { client, worker } = await setupWorker(t, dialect);
    worker.task("job", () => "served");
    const before = { SIGINT: process.listenerCount("SIGINT"), SIGTERM: process.listenerCount("SIGTERM") };
    const serving = worker.serve();
    assert.equal(await client.call("job", {}, CALL), "served");
    assert.equal(process.listenerCount("SIGINT"), before.SIGINT + 1);
    assert.equal(process.listenerCount("SIGTERM"), before.SIGTERM + 1);
    process.emit("SIGTERM", "SIGTERM");
    assert.equal(process.listenerCount("SIGINT"), before.SIGINT, "the first signal removes both listeners");
    assert.equal(process.listenerCount("SIGTERM"), before.SIGTERM);
    await serving;
    assert.equal(process.listenerCount("SIGINT"), before.SIGINT);
    assert.equal(process.listenerCount("SIGTERM"), before.SIGTERM);
  });

  // The -wal file tells whether the SQLite store is open.
  if (dialect === sqlite) {
    test("background() with an injected store leaves it open; close() closes it anyway", async (t) => {
      const dbPath = makeDbPath(t);
      const store = makeStore(t, sqlite, dbPath);
      const worker = new Worker(store, ["default"], { pollIntervalMs: 20 });
      worker.task("x", () => "via background");
      const value = await worker.background(async () => {
        const client = CairnQ.sqlite(dbPath);
        try {
          return await client.call("x", {}, CALL);
        } finally {
          await client.close();
        }
      });
      assert.equal(value, "via background");
      assert.equal(fs.existsSync(`${dbPath}-wal`), true, "the injected store is still open");
      await worker.close();
      assert.equal(fs.existsSync(`${dbPath}-wal`), false, "close() closes an injected store");
    });
  }

  test("background() rejects with fn's error after stopping the worker", async (t) => {
    const { worker } = await setupWorker(t, dialect);
    worker.task("x", () => 1);
    const err = await rejectionOf(
      worker.background(async () => {
        throw new SerializationError("from fn");
      }),
    );
    assert.ok(err instanceof SerializationError);
    assert.equal(err.message, "from fn");
    // The worker was stopped: running it again returns at once.
    await worker.run();
  });
});
