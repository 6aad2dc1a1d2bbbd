// submitIn / submitManyIn on Postgres (docs/api.md, "The task and your rows in
// one transaction"): the task rows are written by the application's own
// transaction, through each driver a Node application holds: a pg Client, a
// pg PoolClient, a postgres.js transaction, a PgSession (a PgExecutor's `tx`)
// and Kysely over pg. Each test has a database of its own with an `orders`
// table beside cairnq's.
import { describe, test } from "node:test";
import assert from "node:assert/strict";

import pg from "pg";
import postgres from "postgres";

import { AlreadyExists, CairnQ, SerializationError, createPoolExecutor } from "../../index.mjs";
import { defer, rejectionOf, settlesWithin, spawnFixture, waitFor } from "../support/helpers.mjs";
import { PG_SKIP, createDatabase, psql, waitForListeners } from "../support/pg-helpers.mjs";
import { PG_DRIVERS } from "../support/pg-drivers.mjs";

const SUITE_TIMEOUT_MS = 300_000;
const ROLLBACK = new Error("roll back");

/** A fresh database with cairnq's tables (the store migrated it) and `orders`. */
async function open(t) {
  const db = await createDatabase(t);
  const cq = CairnQ.postgres(db.dsn);
  defer(t, () => cq.close());
  await cq.connect();
  await psql(db.dsn, "create table orders (id serial primary key, total int not null)");
  const orders = async () => Number(await psql(db.dsn, "select count(*) from orders"));
  const tasks = async () => Number(await psql(db.dsn, "select count(*) from cairnq_tasks"));
  return { ...db, cq, orders, tasks };
}

async function openDriver(t, name, dsn, options) {
  const driver = await PG_DRIVERS[name](dsn, options);
  defer(t, () => driver.close());
  return driver;
}

describe("submitIn on Postgres, per driver", { skip: PG_SKIP, timeout: SUITE_TIMEOUT_MS }, () => {
  for (const name of Object.keys(PG_DRIVERS)) {
    test(`${name}: the task commits with the order, and a worker process runs it`, async (t) => {
      const { cq, dsn, adminDsn, database, orders } = await open(t);
      const driver = await openDriver(t, name, dsn);
      const worker = spawnFixture(t, "serve-worker.mjs", { dialect: "postgres", db: dsn, pollIntervalMs: 600_000 });
      await worker.waitForEvent((e) => e.event === "serving");
      await waitForListeners(adminDsn, database, 1);
      const ref = await driver.transaction(async ({ tx, insertOrder }) => {
        await insertOrder(42);
        const ref = await cq.submitIn(tx, "job", { order: 42 }, { priority: 5, group: "shop", metadata: { m: 1 } });
        assert.equal(await cq.get(ref.id), null, "nothing is visible before the commit");
        return ref;
      });
      assert.equal(ref.status, "queued");
      assert.equal(await orders(), 1);
      const started = await worker.waitForEvent((e) => e.event === "started" && e.id === ref.id, {
        timeoutMs: 60_000,
        what: "the task's start",
      });
      assert.deepEqual(started.payload, { order: 42 });
      const row = await cq.get(ref.id);
      assert.equal(row.priority, 5);
      assert.deepEqual(row.metadata, { m: 1, "cairnq.group": "shop" });
    });

    test(`${name}: a rollback leaves neither the order nor the task`, async (t) => {
      const { cq, dsn, orders, tasks } = await open(t);
      const driver = await openDriver(t, name, dsn);
      let written = null;
      const err = await rejectionOf(
        driver.transaction(async ({ tx, insertOrder }) => {
          await insertOrder(1);
          written = await cq.submitManyIn(tx, [
            { task: "job", payload: { n: 1 } },
            { task: "job", payload: { n: 2 }, options: { key: `order-1-${name}` } },
          ]);
          throw ROLLBACK;
        }),
      );
      assert.equal(err, ROLLBACK);
      assert.equal(written.length, 2);
      assert.equal(await orders(), 0);
      assert.equal(await tasks(), 0);
      assert.equal(await cq.getByKey(`order-1-${name}`), null);
    });

    test(`${name}: bad input is refused before any statement, and the transaction goes on`, async (t) => {
      const { cq, dsn, orders, tasks } = await open(t);
      const driver = await openDriver(t, name, dsn);
      const ref = await driver.transaction(async ({ tx, insertOrder }) => {
        await insertOrder(3);
        const priority = await rejectionOf(cq.submitIn(tx, "job", {}, { priority: 1e13 }));
        assert.match(priority.message, /^priority must be a number from/);
        const debounce = await rejectionOf(cq.submitIn(tx, "job", {}, { debounceMs: 10 }));
        assert.match(debounce.message, /^debounceMs requires a key/);
        const unknown = await rejectionOf(cq.submitIn(tx, "job", {}, { prio: 1 }));
        assert.match(unknown.message, /unknown key "prio"/);
        const payload = await rejectionOf(cq.submitIn(tx, "job", { n: 1n }));
        assert.ok(payload instanceof SerializationError, String(payload));
        const item = await rejectionOf(cq.submitManyIn(tx, [{ task: "job" }, { task: "" }]));
        assert.match(item.message, /^items\[1\]\.task must be a non-empty string/);
        // The transaction is still usable: nothing failed on the server.
        return cq.submitIn(tx, "job", { fine: true });
      });
      assert.equal(await orders(), 1);
      assert.equal(await tasks(), 1);
      assert.deepEqual((await cq.get(ref.id)).payload, { fine: true });
    });
  }
});

describe("submitIn on Postgres: keys, concurrency, crashes", { skip: PG_SKIP, timeout: SUITE_TIMEOUT_MS }, () => {
  for (const name of Object.keys(PG_DRIVERS)) {
    test(`${name}: keys and conflict rules hold inside the transaction, and a reject leaves it usable`, async (t) => {
      const { cq, dsn, orders } = await open(t);
      const driver = await openDriver(t, name, dsn);
      await driver.transaction(async ({ tx, insertOrder }) => {
        await insertOrder(9);
        const first = await cq.submitIn(tx, "job", { n: 1 }, { key: "order-9", runAtDelayMs: 60_000 });
        const reused = await cq.submitIn(tx, "job", { n: 2 }, { key: "order-9" });
        assert.equal(reused.id, first.id);
        const refused = await rejectionOf(cq.submitIn(tx, "job", {}, { key: "order-9", conflict: "reject" }));
        assert.ok(refused instanceof AlreadyExists, String(refused));
        const replaced = await cq.submitIn(tx, "job", { n: 3 }, { key: "order-9", conflict: "replace" });
        assert.notEqual(replaced.id, first.id);
      });
      assert.equal(await orders(), 1);
      const current = await cq.getByKey("order-9");
      assert.deepEqual(current.payload, { n: 3 });
      const [first] = await cq.list({ status: "canceled" });
      assert.ok(first.run_at_ms - first.created_at_ms >= 60_000, "the delay was kept");

      // An item refused by its key undoes the whole call; the transaction keeps its own rows.
      await driver.transaction(async ({ tx, insertOrder }) => {
        await insertOrder(10);
        const refused = await rejectionOf(
          cq.submitManyIn(tx, [
            { task: "job", options: { key: "fresh" } },
            { task: "job", options: { key: "order-9", conflict: "reject" } },
          ]),
        );
        assert.ok(refused instanceof AlreadyExists, String(refused));
      });
      assert.equal(await orders(), 2);
      assert.equal(await cq.getByKey("fresh"), null);
    });

    test(`${name}: 64 transactions held open at once do not wait on each other; the same key does`, async (t) => {
      const { cq, dsn, adminDsn, database, orders, tasks } = await open(t);
      const drivers = [];
      for (let i = 0; i < 64; i++) drivers.push(await openDriver(t, name, dsn, { max: 1 }));
      // Every transaction writes its order and its task, then waits until all
      // 64 have written before committing: one waiting on another could never
      // get there.
      let written = 0;
      let allWritten;
      const barrier = new Promise((resolve) => (allWritten = resolve));
      const runs = drivers.map((driver, i) =>
        driver.transaction(async ({ tx, insertOrder }) => {
          await insertOrder(i);
          const ref = await cq.submitIn(tx, "job", { i }, i % 2 ? { key: `order-${i}` } : { queue: "q" });
          if (++written === 64) allWritten();
          await barrier;
          return ref;
        }),
      );
      await waitFor(() => written === 64, {
        timeoutMs: 120_000,
        message: "the 64 open transactions did not all write their task",
      });
      const refs = await Promise.all(runs);
      assert.equal(new Set(refs.map((r) => r.id)).size, 64);
      assert.equal(await orders(), 64);
      assert.equal(await tasks(), 64);

      // The same key: the second waits for the first's commit (the protocol's key lock).
      let releaseFirst;
      const firstMayCommit = new Promise((resolve) => (releaseFirst = resolve));
      let held = null;
      const first = drivers[0].transaction(async ({ tx }) => {
        held = await cq.submitIn(tx, "job", {}, { key: "same" });
        await firstMayCommit;
      });
      await waitFor(() => held !== null, { timeoutMs: 30_000, message: "the first submit on the key" });
      const second = drivers[1].transaction(({ tx }) => cq.submitIn(tx, "job", {}, { key: "same" }));
      await waitFor(
        async () =>
          Number(
            await psql(
              adminDsn,
              `select count(*) from pg_locks l join pg_stat_activity s using (pid) where s.datname = '${database}' and l.locktype = 'advisory' and not l.granted`,
            ),
          ) === 1,
        { timeoutMs: 30_000, message: "the second submit on the key did not wait on its lock" },
      );
      assert.equal(await settlesWithin(second, 50), false);
      releaseFirst();
      await first;
      assert.equal((await second).id, held.id, "it sees the first's task once that commits");
    });

    test(`${name}: a process killed between the submit and its commit leaves nothing, and no lock behind`, async (t) => {
      const { cq, dsn, adminDsn, database, orders, tasks } = await open(t);
      const app = spawnFixture(t, "submit-in-app.mjs", {
        dialect: "postgres",
        driver: name,
        db: dsn,
        key: "crash-key",
      });
      const { id } = await app.waitForEvent((e) => e.event === "written", { timeoutMs: 60_000 });
      assert.equal(await cq.get(id), null);
      app.kill("SIGKILL");
      await app.waitExit();
      await waitFor(
        async () =>
          (await psql(
            adminDsn,
            `select count(*) from pg_stat_activity where datname = '${database}' and application_name = 'submit_in_app'`,
          )) === "0",
        { timeoutMs: 30_000, message: "the server did not end the killed process's session" },
      );
      assert.equal(await cq.get(id), null);
      assert.equal(await orders(), 0);
      assert.equal(await tasks(), 0);
      // The key's lock went with the session: a new submit on it is not held up.
      const driver = await openDriver(t, name, dsn);
      const ref = await driver.transaction(({ tx }) => cq.submitIn(tx, "job", {}, { key: "crash-key" }));
      assert.notEqual(ref.id, id);
    });
  }

  test("debounce: a burst makes one task with the last payload; a running one gets a follow-up", async (t) => {
    const { cq, dsn } = await open(t);
    const driver = await openDriver(t, "pg Client", dsn);
    const save = (tx, v) => cq.submitIn(tx, "job", { v }, { key: "doc-1", debounceMs: 60_000 });
    const first = await driver.transaction(async ({ tx }) => {
      const first = await save(tx, 1);
      assert.equal((await save(tx, 2)).id, first.id);
      return first;
    });
    const merged = await cq.get(first.id);
    assert.deepEqual(merged.payload, { v: 2 });
    assert.ok(merged.run_at_ms - merged.created_at_ms >= 59_000, "postponed by the window");

    await psql(dsn, "update cairnq_tasks set run_at_ms = 0");
    const worker = spawnFixture(t, "serve-worker.mjs", {
      dialect: "postgres",
      db: dsn,
      handler: "sleep",
      sleepMs: 600_000,
    });
    await worker.waitForEvent((e) => e.event === "started" && e.id === first.id, { timeoutMs: 60_000 });
    const followUp = await driver.transaction(({ tx }) => save(tx, 3));
    assert.notEqual(followUp.id, first.id);
    const held = await cq.getByKey("doc-1");
    assert.equal(held.id, followUp.id);
    assert.ok(held.run_at_ms > Date.now() + 1e9, "held back while the first runs");
  });

  test("what is no transaction, or a pool or executor instead of one, is refused before anything", async (t) => {
    const { cq, dsn, tasks } = await open(t);
    const pool = new pg.Pool({ connectionString: dsn, max: 1 });
    defer(t, () => pool.end());
    const conn = postgres(dsn, { max: 1, onnotice: () => {} });
    defer(t, () => conn.end());
    const executor = await createPoolExecutor(dsn, { max: 1 });
    defer(t, () => executor.close());
    for (const [what, tx] of [
      ["an empty object", {}],
      ["a pg Pool", pool],
      ["a postgres.js root sql", conn],
      ["a PgExecutor", executor],
    ]) {
      const err = await rejectionOf(cq.submitIn(tx, "job", {}));
      assert.ok(err instanceof TypeError, `${what}: ${err}`);
      assert.match(err.message, /^submitIn needs your transaction/, what);
    }
    assert.equal(await tasks(), 0);
  });
});
