// Worker construction (docs/api.md, "Worker construction and lifecycle"):
// option validation, the worker id, and the queues a worker polls.

import assert from "node:assert/strict";

import { Worker } from "../../index.mjs";
import { assertThrowsPlainError } from "../support/helpers.mjs";
import { CALL } from "../support/worker-helpers.mjs";
import { forEachDialect, makeStore, setupWorker, test } from "../support/dialects.mjs";

// ---------------------------------------------------------------------------
forEachDialect("construction", (dialect) => {
  test("constructor validation messages, in order", async (t) => {
    const db = await dialect.createDatabase(t);
    const store = makeStore(t, dialect, db);
    const make = (opts) => () => new Worker(store, ["default"], opts);
    assertThrowsPlainError(make({ maxRunMs: 0 }), "maxRunMs must be > 0, got 0");
    assertThrowsPlainError(make({ maxRunMs: -5 }), "maxRunMs must be > 0, got -5");
    assertThrowsPlainError(
      make({ maxRunMs: 0, maxInFlightBytes: 0, resources: { x: 0 }, maxQueueDepth: 0 }),
      "maxRunMs must be > 0, got 0",
    );
    assertThrowsPlainError(make({ maxInFlightBytes: 0 }), "maxInFlightBytes must be > 0, got 0");
    assertThrowsPlainError(
      make({ maxInFlightBytes: -1.5, resources: { x: 0 }, maxQueueDepth: 0 }),
      "maxInFlightBytes must be > 0, got -1.5",
    );
    assertThrowsPlainError(make({ resources: { gpu: 0 } }), 'resources["gpu"] must be an integer >= 1, got 0');
    assertThrowsPlainError(
      make({ resources: { ok: 2, 'we"ird': 1.5 } }),
      'resources["we\\"ird"] must be an integer >= 1, got 1.5',
    );
    assertThrowsPlainError(
      make({ resources: { gpu: 1 }, maxQueueDepth: 0 }),
      "maxQueueDepth for * must be an integer >= 1, got 0",
    );
    assertThrowsPlainError(
      make({ maxQueueDepth: { side: 2.5 } }),
      "maxQueueDepth for side must be an integer >= 1, got 2.5",
    );
    // The factories validate the same way.
    assertThrowsPlainError(() => dialect.worker(db, { maxRunMs: -1 }), "maxRunMs must be > 0, got -1");
    // Valid options construct.
    new Worker(store, ["default"], {
      maxRunMs: 0.5,
      maxInFlightBytes: 1,
      resources: { gpu: 1, cpu: 16 },
      maxQueueDepth: 5,
    });
  });

  test('the id is "worker_" + a 26-character ULID, fixed per worker, distinct between workers', async (t) => {
    const { db, worker } = await setupWorker(t, dialect);
    const other = dialect.makeWorker(t, db).worker;
    assert.match(worker.workerId, /^worker_[0-9A-HJKMNP-TV-Z]{26}$/);
    assert.equal(worker.id, worker.workerId, "0.7.0's name stays beside workerId");
    assert.equal(worker.id, worker.id);
    assert.notEqual(worker.id, other.id);
  });

  test(`Worker.${dialect.name} polls ['default'] by default; explicit queues restrict what is claimed`, async (t) => {
    const { client, db, handle } = await setupWorker(t, dialect);
    const onQ1 = dialect.makeWorker(t, db, { queues: ["q1"] });
    handle.worker.task("where", (ctx) => ctx.queue);
    onQ1.worker.task("where", (ctx) => `q1 worker saw ${ctx.queue}`);
    const inQ2 = await client.submit("where", {}, { queue: "q2" });
    onQ1.start();
    assert.equal(await client.call("where", {}, { ...CALL, queue: "q1" }), "q1 worker saw q1");
    handle.start();
    assert.equal(await client.call("where", {}, CALL), "default");
    // Nobody polls q2.
    assert.equal((await client.get(inQ2.id)).status, "queued");
  });
});
