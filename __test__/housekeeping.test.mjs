// Backpressure (docs/api.md, "Backpressure"; ClientOptions.maxQueueDepth) and
// retention (docs/api.md, "Retention"; ClientOptions.retention): gating submits
// on queue depth, QueueFull, the gate class itself, scheduled purges, the
// sweeper class, and process lifetime — on every dialect (support/dialects.mjs).
import assert from "node:assert/strict";
import path from "node:path";
import { describe } from "node:test";

import {
  CairnQ,
  CairnQError,
  PostgresStore,
  QueueDepthGate,
  QueueFull,
  RetentionSweeper,
  SQLiteStore,
  Worker,
} from "../index.mjs";
import {
  REPO_ROOT,
  claimTask,
  defer,
  makeDbPath,
  rejectionOf,
  runProcess,
  settlesWithin,
  submitAndFail,
  submitAndSucceed,
  waitFor,
  waitUntilPast,
} from "./support/helpers.mjs";
import { forEachDialect, sqlite, test } from "./support/dialects.mjs";

function assertPlainError(fn, message) {
  assert.throws(fn, (err) => {
    assert.ok(err instanceof Error);
    assert.equal(err instanceof CairnQError, false, `${err.name} should be a plain Error`);
    assert.equal(err.message, message);
    return true;
  });
}

async function assertQueueFull(promise, queue, maxDepth, minWaitedMs) {
  const err = await rejectionOf(promise);
  assert.ok(err instanceof QueueFull, `expected QueueFull, got ${err?.name}: ${err?.message}`);
  assert.ok(err instanceof CairnQError);
  assert.equal(err.name, "QueueFull");
  assert.equal(err.queue, queue);
  assert.equal(err.maxDepth, maxDepth);
  assert.equal(typeof err.waitedMs, "number");
  assert.ok(err.waitedMs >= minWaitedMs, `waitedMs ${err.waitedMs} < ${minWaitedMs}`);
  assert.equal(
    err.message,
    `queue ${queue} still holds ${maxDepth} or more queued tasks after ${err.waitedMs}ms; refusing to enqueue more`,
  );
  return err;
}

// ---------------------------------------------------------------------------
forEachDialect("backpressure through ClientOptions.maxQueueDepth", (dialect) => {
  test("a submit over the limit waits until headroom appears", async (t) => {
    const { client } = await dialect.open(t, { maxQueueDepth: 2, queuePollIntervalMs: 20, maxQueueWaitMs: 60_000 });
    const first = await client.submit("job", { n: 1 });
    await client.submit("job", { n: 2 });
    let settled = false;
    const third = client.submit("job", { n: 3 }).finally(() => (settled = true));
    assert.equal(await settlesWithin(third, 300), false, "the third submit waits while the queue is full");
    assert.equal((await client.stats()).default.queued, 2, "nothing enqueued while waiting");
    await claimTask(client.store, first);
    const task = await third;
    assert.ok(settled);
    assert.deepEqual(task.payload, { n: 3 });
    assert.deepEqual((await client.stats()).default, { queued: 2, running: 1, succeeded: 0, failed: 0, canceled: 0 });
  });

  test("QueueFull after maxQueueWaitMs, with nothing enqueued", async (t) => {
    const { client } = await dialect.open(t, { maxQueueDepth: 1, maxQueueWaitMs: 300, queuePollIntervalMs: 50 });
    await client.submit("job");
    const started = Date.now();
    await assertQueueFull(client.submit("job", { rejected: true }), "default", 1, 300);
    assert.ok(Date.now() - started >= 250, "it waited for (about) maxQueueWaitMs");
    assert.equal((await client.list()).length, 1);
    assert.equal(
      (await client.list({ name: "job" })).some((x) => x.payload.rejected),
      false,
    );
  });

  test("call is gated too", async (t) => {
    const { client } = await dialect.open(t, { maxQueueDepth: 1, maxQueueWaitMs: 100, queuePollIntervalMs: 20 });
    await client.submit("job");
    await assertQueueFull(client.call("job", {}, { waitTimeoutMs: 100 }), "default", 1, 100);
  });

  test("delayed tasks count toward the depth; running ones do not", async (t) => {
    const { client } = await dialect.open(t, { maxQueueDepth: 2, maxQueueWaitMs: 100, queuePollIntervalMs: 20 });
    const running = await client.submit("run");
    await claimTask(client.store, running);
    await client.submit("later", {}, { runAtDelayMs: 60_000 });
    await client.submit("later", {}, { runAtDelayMs: 60_000 });
    await assertQueueFull(client.submit("later"), "default", 2, 100);
  });

  test("a per-queue record gates only the listed queues", async (t) => {
    const { client } = await dialect.open(t, {
      maxQueueDepth: { gated: 1 },
      maxQueueWaitMs: 150,
      queuePollIntervalMs: 20,
    });
    await client.submit("job", {}, { queue: "gated" });
    for (let i = 0; i < 10; i++) await client.submit("job", {}, { queue: "free" });
    await Promise.all(Array.from({ length: 10 }, () => client.submit("job")));
    await assertQueueFull(client.submit("job", {}, { queue: "gated" }), "gated", 1, 150);
    const stats = await client.stats();
    assert.equal(stats.gated.queued, 1);
    assert.equal(stats.free.queued, 10);
    assert.equal(stats.default.queued, 10);
  });

  test("validation and encoding fail before the gate is consulted", async (t) => {
    const { client } = await dialect.open(t, { maxQueueDepth: 1, maxQueueWaitMs: 5_000, queuePollIntervalMs: 20 });
    await client.submit("job");
    const started = Date.now();
    const invalid = await rejectionOf(client.submit("job", {}, { conflict: "bogus" }));
    assert.equal(invalid.message, "unknown conflict strategy: bogus");
    assert.equal(invalid instanceof QueueFull, false);
    const unencodable = await rejectionOf(client.submit("job", { n: NaN }));
    assert.equal(unencodable.name, "SerializationError");
    assert.ok(Date.now() - started < 4_000, "neither waited for the gate");
  });

  test("a keyed submit that reuses an existing task still passes the gate", async (t) => {
    const { client } = await dialect.open(t, { maxQueueDepth: 1, maxQueueWaitMs: 100, queuePollIntervalMs: 20 });
    await client.submit("job", {}, { key: "k" });
    await assertQueueFull(client.submit("job", {}, { key: "k" }), "default", 1, 100);
  });

  test("gate validation errors are plain Errors thrown by the constructor", async (t) => {
    const db = await dialect.createDatabase(t);
    assertPlainError(
      () => dialect.client(db, { maxQueueDepth: 0 }),
      "maxQueueDepth for * must be an integer >= 1, got 0",
    );
    assertPlainError(
      () => dialect.client(db, { maxQueueDepth: 2.5 }),
      "maxQueueDepth for * must be an integer >= 1, got 2.5",
    );
    assertPlainError(
      () => dialect.client(db, { maxQueueDepth: { good: 3, bad: -1 } }),
      "maxQueueDepth for bad must be an integer >= 1, got -1",
    );
    assertPlainError(
      () => new CairnQ(dialect.store(db), { maxQueueDepth: { q: 0.5 } }),
      "maxQueueDepth for q must be an integer >= 1, got 0.5",
    );
  });

  test("store.useBackpressure gates direct store submits; the last installer wins", async (t) => {
    const { client } = await dialect.open(t);
    const store = client.store;
    store.useBackpressure({ maxQueueDepth: 1, maxQueueWaitMs: 100, queuePollIntervalMs: 20 });
    await store.submit({ name: "job", payload: {} });
    await assertQueueFull(store.submit({ name: "job", payload: {} }), "default", 1, 100);
    store.useBackpressure({ maxQueueDepth: 3, maxQueueWaitMs: 100, queuePollIntervalMs: 20 });
    await store.submit({ name: "job", payload: {} });
    await store.submit({ name: "job", payload: {} });
    await assertQueueFull(store.submit({ name: "job", payload: {} }), "default", 3, 100);
    assert.equal((await client.stats()).default.queued, 3);
  });

  test("a full queue rejects with QueueFull and writes nothing; room made elsewhere lets a waiting submit in", async (t) => {
    const { client, db } = await dialect.open(t, {
      maxQueueDepth: { limited: 3 },
      maxQueueWaitMs: 300,
      queuePollIntervalMs: 20,
    });
    const queued = [];
    for (let i = 0; i < 3; i++) queued.push(await client.submit("job", { i }, { queue: "limited" }));
    const started = Date.now();
    const err = await rejectionOf(client.submit("job", { i: 3 }, { queue: "limited" }));
    assert.ok(err instanceof QueueFull, String(err));
    assert.equal(err.queue, "limited");
    assert.equal(err.maxDepth, 3);
    assert.ok(err.waitedMs >= 300, `waitedMs ${err.waitedMs}`);
    assert.ok(Date.now() - started >= 300);
    assert.equal((await client.list({ queue: "limited" })).length, 3, "nothing was enqueued");
    // Other queues are not gated by a record limit.
    for (let i = 0; i < 5; i++) await client.submit("job", {}, { queue: "free" });

    // A second client on the same database, willing to wait.
    const { client: patient } = await dialect.open(
      t,
      { maxQueueDepth: 3, maxQueueWaitMs: 30_000, queuePollIntervalMs: 20 },
      db,
    );
    const waiting = patient.submit("job", { late: true }, { queue: "limited" });
    waiting.catch(() => {});
    assert.equal(await settlesWithin(waiting, 300), false, "the queue is full");
    await client.cancel(queued[0].id);
    const admitted = await waiting;
    assert.deepEqual(admitted.payload, { late: true });
    assert.equal((await client.list({ queue: "limited", status: "queued" })).length, 3);
  });
});

// ---------------------------------------------------------------------------
forEachDialect("QueueDepthGate", (dialect) => {
  test("limitFor: the numeric limit for any queue", async (t) => {
    const { client } = await dialect.open(t);
    const gate = new QueueDepthGate(client.store, { maxQueueDepth: 5 });
    assert.equal(gate.limitFor("default"), 5);
    assert.equal(gate.limitFor("anything"), 5);
  });

  test("limitFor: a record's entry, or null for an unlisted queue", async (t) => {
    const { client } = await dialect.open(t);
    const gate = new QueueDepthGate(client.store, { maxQueueDepth: { a: 2, b: 7 } });
    assert.equal(gate.limitFor("a"), 2);
    assert.equal(gate.limitFor("b"), 7);
    assert.equal(gate.limitFor("c"), null);
  });

  test("the constructor validates like the client option", async (t) => {
    const { client } = await dialect.open(t);
    assertPlainError(
      () => new QueueDepthGate(client.store, { maxQueueDepth: 0 }),
      "maxQueueDepth for * must be an integer >= 1, got 0",
    );
    assertPlainError(
      () => new QueueDepthGate(client.store, { maxQueueDepth: { x: 1.5 } }),
      "maxQueueDepth for x must be an integer >= 1, got 1.5",
    );
  });

  test("acquire: ungated resolves at once; gated grants headroom then throws QueueFull", async (t) => {
    const { client } = await dialect.open(t);
    const gate = new QueueDepthGate(client.store, {
      maxQueueDepth: { a: 2 },
      maxQueueWaitMs: 200,
      queuePollIntervalMs: 20,
    });
    await gate.acquire("ungated");
    await client.submit("job", {}, { queue: "a" });
    await gate.acquire("a"); // one unit of headroom, granted and consumed
    await client.submit("job", {}, { queue: "a" });
    await assertQueueFull(gate.acquire("a"), "a", 2, 200);
    // acquire itself never writes.
    assert.equal((await client.stats()).a.queued, 2);
  });

  test("acquire on a store that was never connected connects lazily", async (t) => {
    const store = dialect.store(await dialect.createDatabase(t));
    defer(t, () => store.close());
    const gate = new QueueDepthGate(store, { maxQueueDepth: 1, maxQueueWaitMs: 100 });
    await gate.acquire("default");
  });

  test("acquire: a waiting acquirer proceeds once a task leaves the queue", async (t) => {
    const { client } = await dialect.open(t);
    const a = await client.submit("job", {}, { queue: "a" });
    const gate = new QueueDepthGate(client.store, {
      maxQueueDepth: 1,
      maxQueueWaitMs: 60_000,
      queuePollIntervalMs: 20,
    });
    const acquiring = gate.acquire("a");
    assert.equal(await settlesWithin(acquiring, 200), false, "no headroom: acquire waits");
    await client.cancel(a.id);
    await acquiring;
  });
});

// ---------------------------------------------------------------------------
forEachDialect("retention through ClientOptions.retention", (dialect) => {
  test("validation errors are plain Errors thrown by the constructor", async (t) => {
    const db = await dialect.createDatabase(t);
    assertPlainError(
      () => dialect.client(db, { retention: { olderThanMs: -1 } }),
      "retention.olderThanMs must be >= 0, got -1",
    );
    assertPlainError(
      () => dialect.client(db, { retention: { olderThanMs: Infinity } }),
      "retention.olderThanMs must be >= 0, got Infinity",
    );
    assertPlainError(
      () => dialect.client(db, { retention: { olderThanMs: NaN } }),
      "retention.olderThanMs must be >= 0, got NaN",
    );
    assertPlainError(
      () => dialect.client(db, { retention: { olderThanMs: 0, intervalMs: 0 } }),
      "retention.intervalMs must be >= 1, got 0",
    );
    assertPlainError(
      () => dialect.client(db, { retention: { olderThanMs: 0, intervalMs: 0.5 } }),
      "retention.intervalMs must be >= 1, got 0.5",
    );
  });

  test("a short interval purges finished tasks on schedule and keeps live ones", async (t) => {
    const { client } = await dialect.open(t, { retention: { olderThanMs: 0, intervalMs: 50 } });
    const done = await submitAndSucceed(client, "ok");
    const queued = await client.submit("pending");
    await waitFor(async () => (await client.get(done.id)) === null, {
      timeoutMs: 10_000,
      message: "the sweeper never purged the finished task",
    });
    assert.equal((await client.get(queued.id)).status, "queued");
  });

  test("olderThanMs keeps recently finished tasks", async (t) => {
    const { client } = await dialect.open(t, { retention: { olderThanMs: 60_000, intervalMs: 20 } });
    const done = await submitAndSucceed(client, "ok");
    // Give the sweeper many rounds; the task is far younger than a minute.
    await waitFor(() => Date.now() > done.completed_at_ms + 300, { timeoutMs: 5_000 });
    assert.notEqual(await client.get(done.id), null);
  });

  test("close() stops the sweeper", async (t) => {
    const db = await dialect.createDatabase(t);
    const withRetention = dialect.client(db, { retention: { olderThanMs: 0, intervalMs: 20 } });
    const first = await submitAndSucceed(withRetention, "first");
    await waitFor(async () => (await withRetention.get(first.id)) === null, { timeoutMs: 10_000 });
    await withRetention.close();

    const { client: plain } = await dialect.open(t, {}, db);
    const survivor = await submitAndSucceed(plain, "survivor");
    // Well over ten intervals of the closed client's schedule.
    await waitFor(() => Date.now() > survivor.completed_at_ms + 400, { timeoutMs: 5_000 });
    assert.notEqual(await plain.get(survivor.id), null, "a closed client's sweeper no longer purges");
  });

  // A child process with a SQLite file of its own.
  if (dialect === sqlite) {
    test("a script that configures retention exits promptly, with or without close()", async (t) => {
      const entry = JSON.stringify(new URL("../index.mjs", import.meta.url).href);
      for (const closeIt of [true, false]) {
        const dbPath = JSON.stringify(makeDbPath(t));
        const script = `
          const { CairnQ } = await import(${entry});
          const client = CairnQ.sqlite(${dbPath}, { retention: { olderThanMs: 1000, intervalMs: 3600000 } });
          await client.submit("job", {});
          ${closeIt ? "await client.close();" : ""}
          console.log("done");
        `;
        const out = await runProcess(process.execPath, ["--input-type=module", "-e", script], {
          timeoutMs: 20_000,
          cwd: REPO_ROOT,
        });
        assert.equal(out.code, 0, `close=${closeIt}: ${out.stderr}`);
        assert.equal(out.stdout.trim(), "done");
      }
    });
  }

  test("retention with a short interval purges finished tasks and keeps live ones", async (t) => {
    const { client: setup, db } = await dialect.open(t);
    const live = await setup.submit("live");
    const finished = [];
    for (let i = 0; i < 3; i++) finished.push(await submitAndSucceed(setup, "done", { i }));
    finished.push(await submitAndFail(setup, "broken"));
    const errors = [];
    const { client: swept } = await dialect.open(
      t,
      { retention: { olderThanMs: 0, intervalMs: 50, onError: (e) => errors.push(e) } },
      db,
    );
    await waitFor(async () => (await setup.list()).length === 1, {
      timeoutMs: 20_000,
      message: "retention never purged",
    });
    assert.deepEqual(
      (await setup.list()).map((x) => x.id),
      [live.id],
    );
    for (const task of finished) assert.equal(await setup.get(task.id), null);
    // It keeps sweeping: a task finished later goes too.
    const later = await submitAndSucceed(setup, "done", { later: true });
    await waitFor(async () => (await setup.get(later.id)) === null, { timeoutMs: 20_000 });
    assert.equal((await setup.get(live.id)).status, "queued");
    assert.deepEqual(errors, []);
    await swept.close();
  });
});

/** `n` succeeded tasks, finished before now. */
async function finishMany(client, n) {
  const finished = [];
  for (let i = 0; i < n; i++) finished.push(await submitAndSucceed(client, `job-${i}`));
  await waitUntilPast(Math.max(...finished.map((x) => x.completed_at_ms)));
  return finished;
}

// ---------------------------------------------------------------------------
forEachDialect("RetentionSweeper", (dialect) => {
  test("sweep() returns the count and drains more than `limit` rows in batches", async (t) => {
    const { client } = await dialect.open(t);
    await finishMany(client, 7);
    const live = await client.submit("live");
    const sweeper = new RetentionSweeper(client.store, { olderThanMs: 0, limit: 2 });
    assert.equal(await sweeper.sweep(), 7);
    assert.deepEqual(await client.list(), [await client.get(live.id)]);
    assert.equal(await sweeper.sweep(), 0);
  });

  test("sweep() respects olderThanMs", async (t) => {
    const { client } = await dialect.open(t);
    await finishMany(client, 3);
    const sweeper = new RetentionSweeper(client.store, { olderThanMs: 60_000 });
    assert.equal(await sweeper.sweep(), 0);
    assert.equal((await client.list()).length, 3);
  });

  test("the constructor validates everything, 0.7.0's numeric form with 0.7.0's messages and order", async (t) => {
    const { client } = await dialect.open(t);
    const refuses = (opts, message) => assertPlainError(() => new RetentionSweeper(client.store, opts), message);
    refuses({ olderThanMs: -5 }, "retention.olderThanMs must be >= 0, got -5");
    refuses({ olderThanMs: -5, intervalMs: -1 }, "retention.olderThanMs must be >= 0, got -5");
    refuses({}, "retention.olderThanMs must be >= 0, got undefined");
    refuses({ olderThanMs: 0, intervalMs: -1 }, "retention.intervalMs must be >= 1, got -1");
    // limit is checked up front now, not by the first sweep's purge.
    refuses({ olderThanMs: 0, limit: 0 }, "limit must be >= 1, got 0");
    // The map and rule forms: intervalMs first, then at least one rule, then each rule as purge checks it.
    refuses({ olderThanMs: { failed: -1 }, intervalMs: 0 }, "retention.intervalMs must be >= 1, got 0");
    refuses({ olderThanMs: {} }, "retention.olderThanMs must name at least one rule");
    refuses({ olderThanMs: [] }, "retention.olderThanMs must name at least one rule");
    refuses({ olderThanMs: { failed: -1 } }, "olderThanMs must be >= 0, got -1");
    refuses({ olderThanMs: { running: 10 } }, "status must be terminal, got running");
    refuses({ olderThanMs: [{ queue: "q", olderThanMs: NaN }] }, "olderThanMs must be >= 0, got NaN");
    refuses({ olderThanMs: [{ status: "done", olderThanMs: 1 }] }, "status must be terminal, got done");
    refuses({ olderThanMs: [{ olderThanMs: 1 }], limit: 0.5 }, "limit must be >= 1, got 0.5");
    refuses({ olderThanMs: "1d" }, 'retention.olderThanMs must be a number, got "1d"');
  });

  test("per-status cutoffs sweep only the statuses they name", async (t) => {
    const { client } = await dialect.open(t);
    const ok = await submitAndSucceed(client, "job");
    const broken = await submitAndFail(client, "job");
    await waitUntilPast(Math.max(ok.completed_at_ms, broken.completed_at_ms));
    const failedOnly = new RetentionSweeper(client.store, { olderThanMs: { failed: 0 } });
    assert.equal(await failedOnly.sweep(), 1);
    assert.equal(await client.get(broken.id), null);
    assert.equal((await client.get(ok.id)).status, "succeeded", "a status the map leaves out is never swept");
    const hourOld = new RetentionSweeper(client.store, { olderThanMs: { succeeded: 3_600_000, failed: 0 } });
    assert.equal(await hourOld.sweep(), 0);
  });

  test("rules run in order with their own filters and the sweeper's limit; a row no rule matches stays", async (t) => {
    const { client } = await dialect.open(t);
    const inA = [];
    for (let i = 0; i < 3; i++) inA.push(await submitAndSucceed(client, "job", {}, { queue: "a" }));
    const inB = await submitAndSucceed(client, "job", {}, { queue: "b" });
    const other = await submitAndSucceed(client, "other", {}, { queue: "c" });
    await waitUntilPast(Math.max(...[...inA, inB, other].map((x) => x.completed_at_ms)));
    const sweeper = new RetentionSweeper(client.store, {
      olderThanMs: [
        { queue: "a", olderThanMs: 0, limit: 1000 },
        { queue: "b", status: "succeeded", name: "job", olderThanMs: 0 },
        { queue: "c", name: "job", olderThanMs: 0 },
      ],
      limit: 1,
    });
    assert.equal(await sweeper.sweep(), 4);
    for (const gone of [...inA, inB]) assert.equal(await client.get(gone.id), null);
    assert.equal((await client.get(other.id)).status, "succeeded");
  });
  test("start() sweeps after the first interval, not at start; stop() then start() resumes", async (t) => {
    const { client } = await dialect.open(t);
    const [done] = await finishMany(client, 1);
    const sweeper = new RetentionSweeper(client.store, { olderThanMs: 0, intervalMs: 60_000 });
    sweeper.start();
    defer(t, () => sweeper.stop());
    assert.notEqual(await client.get(done.id), null, "no sweep at start");
    await sweeper.stop();

    const fast = new RetentionSweeper(client.store, { olderThanMs: 0, intervalMs: 30 });
    defer(t, () => fast.stop());
    fast.start();
    fast.start(); // no-op while active
    await waitFor(async () => (await client.get(done.id)) === null, { timeoutMs: 10_000 });
    await fast.stop();
    const [next] = await finishMany(client, 1);
    fast.start();
    await waitFor(async () => (await client.get(next.id)) === null, {
      timeoutMs: 10_000,
      message: "start() after stop() did not start a new loop",
    });
  });

  test("a failing sweep goes to onError and the schedule continues, even if onError throws", async (t) => {
    // A store that can never open: every sweep fails.
    const unreachable =
      dialect.name === "sqlite"
        ? new SQLiteStore(path.join(REPO_ROOT, "package.json", "not-a-directory", "q.db"))
        : new PostgresStore("postgres://cairnq@127.0.0.1:1/nowhere?connect_timeout=2");
    const errors = [];
    const sweeper = new RetentionSweeper(unreachable, {
      olderThanMs: 0,
      intervalMs: 20,
      onError: (err) => {
        errors.push(err);
        throw new Error("onError exploding must not stop the schedule");
      },
    });
    defer(t, () => sweeper.stop());
    sweeper.start();
    await waitFor(() => errors.length >= 3, { timeoutMs: 10_000, message: "onError was not called repeatedly" });
    await sweeper.stop();
    assert.ok(errors[0] instanceof Error);
    assert.match(errors[0].message, dialect.name === "sqlite" ? /q\.db/ : /cannot connect to Postgres/);
  });
});

// ---------------------------------------------------------------------------
// Stores that are not this package's own (a store wrapped for metrics, a
// subclass, a test double) are driven through their JS methods, on the same
// timers, batches and stop() as a native store.
forEachDialect("stores that are not this package's own", (dialect) => {
  test("RetentionSweeper: a store wrapped for metrics is purged through its purge, batch by batch", async (t) => {
    const { client } = await dialect.open(t);
    await finishMany(client, 5);
    const inputs = [];
    const wrapped = {
      purge: (input) => {
        inputs.push(input);
        return client.store.purge(input);
      },
    };
    const sweeper = new RetentionSweeper(wrapped, { olderThanMs: 0, limit: 2 });
    assert.equal(await sweeper.sweep(), 5);
    assert.deepEqual(
      inputs,
      [1, 2, 3].map(() => ({ olderThanMs: 0, limit: 2 })),
    );
    assert.equal((await client.list()).length, 0);

    const rules = new RetentionSweeper(wrapped, { olderThanMs: { failed: 0 }, limit: 10 });
    assert.equal(await rules.sweep(), 0);
    assert.deepEqual(inputs.at(-1), { olderThanMs: 0, status: "failed", limit: 10 });
  });

  test("RetentionSweeper and QueueDepthGate: a subclass's overriding methods are the ones called", async (t) => {
    const { client, db } = await dialect.open(t);
    await finishMany(client, 2);
    const calls = [];
    const Base = dialect.name === "sqlite" ? SQLiteStore : PostgresStore;
    class Metered extends Base {
      purge(input) {
        calls.push("purge");
        return super.purge(input);
      }
      queueDepth(queue, maxDepth) {
        calls.push("queueDepth");
        return super.queueDepth(queue, maxDepth);
      }
    }
    const store = new Metered(db);
    defer(t, () => store.close());
    assert.equal(await new RetentionSweeper(store, { olderThanMs: 0 }).sweep(), 2);
    await new QueueDepthGate(store, { maxQueueDepth: 5 }).acquire("default");
    assert.deepEqual(calls, ["purge", "queueDepth"]);
  });

  test("QueueDepthGate: a wrapped store's queueDepth grants headroom and holds a full queue", async (t) => {
    const { client } = await dialect.open(t);
    const probes = [];
    const wrapped = {
      queueDepth: (queue, maxDepth) => {
        probes.push([queue, maxDepth]);
        return client.store.queueDepth(queue, maxDepth);
      },
    };
    const gate = new QueueDepthGate(wrapped, { maxQueueDepth: 1, maxQueueWaitMs: 100, queuePollIntervalMs: 20 });
    await gate.acquire("a");
    await client.submit("job", {}, { queue: "a" });
    await assertQueueFull(gate.acquire("a"), "a", 1, 100);
    assert.deepEqual(probes[0], ["a", 1]);
    assert.ok(probes.length >= 2, "the full queue was probed again");
  });
});

describe("a test double with only the method a component calls", () => {
  test("RetentionSweeper: the schedule sweeps it; a failed purge goes to onError as thrown and the next interval sweeps again", async (t) => {
    const boom = new Error("the metrics backend is down");
    let purges = 0;
    const double = {
      purge: async () => {
        purges++;
        if (purges === 2) throw boom;
        return [];
      },
    };
    const errors = [];
    const sweeper = new RetentionSweeper(double, {
      olderThanMs: 0,
      intervalMs: 20,
      onError: (err) => errors.push(err),
    });
    defer(t, () => sweeper.stop());
    sweeper.start();
    await waitFor(() => purges >= 4, { timeoutMs: 10_000, message: "the schedule stopped after the failure" });
    await sweeper.stop();
    assert.deepEqual(errors, [boom]);
    const after = purges;
    await waitUntilPast(Date.now() + 100);
    assert.equal(purges, after, "stop() ended the schedule");
  });

  test("RetentionSweeper: stop() after an on-demand sweep() returns at once, not after the interval", async (t) => {
    const double = { purge: async () => ["a"] };
    const sweeper = new RetentionSweeper(double, { olderThanMs: 0, limit: 3, intervalMs: 600_000 });
    defer(t, () => sweeper.stop());
    sweeper.start();
    assert.equal(await sweeper.sweep(), 1);
    assert.equal(await settlesWithin(sweeper.stop(), 10_000), true, "stop() waited for the interval");
  });

  test("RetentionSweeper: sweep() rejects with what purge threw; a purge that answers no id list is a clear error", async () => {
    const boom = new Error("nope");
    const failing = new RetentionSweeper({ purge: async () => Promise.reject(boom) }, { olderThanMs: 0 });
    assert.equal(await rejectionOf(failing.sweep()), boom);
    const odd = new RetentionSweeper({ purge: async () => 3 }, { olderThanMs: 0 });
    assert.match((await rejectionOf(odd.sweep())).message, /store\.purge resolved to 3/);
  });

  test("QueueDepthGate: a double's headroom is granted; none is QueueFull; its failure rejects as thrown", async () => {
    let headroom = 2;
    const gate = new QueueDepthGate(
      { queueDepth: async () => headroom },
      { maxQueueDepth: 2, maxQueueWaitMs: 50, queuePollIntervalMs: 10 },
    );
    await gate.acquire("q");
    await gate.acquire("q");
    headroom = 0;
    await assertQueueFull(gate.acquire("q"), "q", 2, 50);
    const boom = new Error("the probe failed");
    const failing = new QueueDepthGate({ queueDepth: async () => Promise.reject(boom) }, { maxQueueDepth: 1 });
    assert.equal(await rejectionOf(failing.acquire("q")), boom);
  });

  test("an object without the method is a TypeError naming what is accepted", () => {
    for (const bad of [{}, null, 42]) {
      assert.throws(() => new RetentionSweeper(bad, { olderThanMs: 0 }), {
        name: "TypeError",
        message: /^RetentionSweeper needs a TaskStore, or an object with a purge\(\) method like a TaskStore's/,
      });
      assert.throws(() => new QueueDepthGate(bad, { maxQueueDepth: 1 }), {
        name: "TypeError",
        message: /^QueueDepthGate needs a TaskStore, or an object with a queueDepth\(\) method like a TaskStore's/,
      });
    }
  });

  test("a Worker given a foreign store is a TypeError saying what it accepts", (t) => {
    const db = makeDbPath(t);
    const store = sqlite.store(db);
    class Instrumented extends SQLiteStore {
      claim(...args) {
        return super.claim(...args);
      }
    }
    const patched = sqlite.store(db);
    patched.heartbeatBatch = async () => ({});
    const cases = [
      [{ purge() {}, claim() {} }, /got an object that is not one$/],
      [new Instrumented(db), /got one whose claim is replaced$/],
      [patched, /got one whose heartbeatBatch is replaced$/],
    ];
    for (const [foreign, got] of cases) {
      assert.throws(
        () => new Worker(foreign, ["default"]),
        (err) => {
          assert.equal(err.name, "TypeError");
          assert.match(
            err.message,
            /^Worker needs a SQLiteStore or PostgresStore of this package with its own methods/,
          );
          assert.match(err.message, got);
          return true;
        },
      );
    }
    const worker = new Worker(store, ["default"]);
    assert.equal(typeof worker.workerId, "string", "an unmodified store is accepted");
    t.after(() => store.close());
  });
});
