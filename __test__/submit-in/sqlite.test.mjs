// submitIn / submitManyIn on SQLite (docs/api.md, "The task and your rows in
// one transaction"): the application's own connection to the database file
// (better-sqlite3 here; node:sqlite and bun:sqlite in the install proof, which
// has Node 22 and Bun) writes the task rows inside its transaction, with the
// statement and values the core hands it.
import { describe, test } from "node:test";
import assert from "node:assert/strict";

import Database from "better-sqlite3";

import { AlreadyExists, SerializationError } from "../../index.mjs";
import { defer, makeDbPath, openClient, spawnFixture } from "../support/helpers.mjs";

/** A migrated database (the store opened it) with an `orders` table, and the app's connection to it. */
async function open(t) {
  const { client: cq, dbPath } = openClient(t);
  await cq.connect();
  const db = new Database(dbPath);
  defer(t, () => db.close());
  db.pragma("busy_timeout = 10000");
  db.exec("create table orders (id integer primary key, total int not null)");
  const count = (table) => db.prepare(`select count(*) as n from ${table}`).get().n;
  return { cq, db, dbPath, orders: () => count("orders"), tasks: () => count("cairnq_tasks") };
}

describe("submitIn on SQLite (better-sqlite3)", () => {
  test("the task commits with the order, and a worker process runs it", async (t) => {
    const { cq, db, dbPath, orders } = await open(t);
    // Polling every 10 minutes: only the -wal watch can start it promptly.
    const worker = spawnFixture(t, "serve-worker.mjs", { db: dbPath, pollIntervalMs: 600_000 });
    await worker.waitForEvent((e) => e.event === "serving");
    const ref = db.transaction(() => {
      db.prepare("insert into orders (total) values (?)").run(42);
      return cq.submitIn(db, "job", { order: 42 }, { priority: 5, group: "shop", runAtDelayMs: 0 });
    })();
    assert.equal(ref.status, "queued");
    assert.equal(orders(), 1);
    const started = await worker.waitForEvent((e) => e.event === "started" && e.id === ref.id, {
      timeoutMs: 60_000,
      what: "the task's start",
    });
    assert.deepEqual(started.payload, { order: 42 });
    const row = await cq.get(ref.id);
    assert.equal(row.priority, 5);
    assert.deepEqual(row.metadata, { "cairnq.group": "shop" });
    // Stored with the types the store itself stores.
    const types = db
      .prepare(
        "select typeof(run_at_ms) a, typeof(created_at_ms) b, typeof(priority) c, typeof(payload) d from cairnq_tasks",
      )
      .get();
    assert.deepEqual(types, { a: "integer", b: "integer", c: "integer", d: "text" });
  });

  test("nothing is visible before the commit; a rollback leaves neither the order nor the tasks", async (t) => {
    const { cq, db, orders, tasks } = await open(t);
    db.exec("begin");
    db.prepare("insert into orders (total) values (?)").run(1);
    const refs = cq.submitManyIn(db, [
      { task: "job", payload: { n: 1 } },
      { task: "job", payload: { n: 2 }, options: { queue: "other", maxAttempts: 1 } },
    ]);
    assert.equal(refs.length, 2);
    assert.equal(tasks(), 2, "the app's connection sees its own rows");
    assert.equal(await cq.get(refs[0].id), null, "the store does not, before the commit");
    db.exec("rollback");
    assert.equal(orders(), 0);
    assert.equal(tasks(), 0);
  });

  test("bad input is refused before anything is written, and the transaction goes on", async (t) => {
    const { cq, db, orders, tasks } = await open(t);
    const ref = db.transaction(() => {
      db.prepare("insert into orders (total) values (?)").run(3);
      assert.throws(() => cq.submitIn(db, "job", {}, { priority: 1e13 }), /^Error: priority must be a number from/);
      assert.throws(() => cq.submitIn(db, "job", {}, { debounceMs: 10 }), /^Error: debounceMs requires a key/);
      assert.throws(() => cq.submitIn(db, "job", {}, { key: "k", conflict: "merge" }), /unknown conflict strategy/);
      assert.throws(() => cq.submitIn(db, "job", {}, { key: "cairnq:step:t:a" }), /reserved/);
      assert.throws(() => cq.submitIn(db, "job", { n: 1n }), SerializationError);
      assert.throws(
        () => cq.submitManyIn(db, [{ task: "job" }, { task: "job", options: { maxAttempts: 0 } }]),
        /^Error: items\[1\]\.options\.maxAttempts/,
      );
      assert.equal(tasks(), 0);
      return cq.submitIn(db, "job", { fine: true });
    })();
    assert.equal(orders(), 1);
    assert.equal(tasks(), 1);
    assert.deepEqual((await cq.get(ref.id)).payload, { fine: true });
  });

  test("keys and conflict rules hold inside the transaction, and a reject leaves it usable", async (t) => {
    const { cq, db, orders } = await open(t);
    const replaced = db.transaction(() => {
      db.prepare("insert into orders (total) values (?)").run(9);
      const first = cq.submitIn(db, "job", { n: 1 }, { key: "order-9", runAtDelayMs: 60_000 });
      assert.equal(cq.submitIn(db, "job", { n: 2 }, { key: "order-9" }).id, first.id, "reuse");
      assert.throws(() => cq.submitIn(db, "job", {}, { key: "order-9", conflict: "reject" }), AlreadyExists);
      const replaced = cq.submitIn(db, "job", { n: 3 }, { key: "order-9", conflict: "replace" });
      assert.notEqual(replaced.id, first.id);
      const statuses = db.prepare("select status from cairnq_tasks order by created_at_ms, id").all();
      assert.deepEqual(
        statuses.map((r) => r.status),
        ["canceled", "queued"],
      );
      return replaced;
    })();
    assert.equal(orders(), 1);
    const current = await cq.getByKey("order-9");
    assert.equal(current.id, replaced.id);
    assert.deepEqual(current.payload, { n: 3 });
    const [first] = await cq.list({ status: "canceled" });
    assert.ok(first.run_at_ms - first.created_at_ms >= 60_000, "the delay was kept");

    // An item refused by its key undoes the whole call; the transaction keeps its own rows.
    db.transaction(() => {
      db.prepare("insert into orders (total) values (?)").run(10);
      assert.throws(
        () =>
          cq.submitManyIn(db, [
            { task: "job", options: { key: "fresh" } },
            { task: "job", options: { key: "order-9", conflict: "reject" } },
          ]),
        AlreadyExists,
      );
    })();
    assert.equal(orders(), 2);
    assert.equal(await cq.getByKey("fresh"), null);
  });

  test("debounce: a burst makes one task with the last payload; a running one gets a follow-up", async (t) => {
    const { cq, db, dbPath } = await open(t);
    const save = (v) => cq.submitIn(db, "job", { v }, { key: "doc-1", debounceMs: 60_000 });
    const first = db.transaction(() => {
      const first = save(1);
      assert.equal(save(2).id, first.id);
      return first;
    })();
    const merged = await cq.get(first.id);
    assert.deepEqual(merged.payload, { v: 2 });
    assert.ok(merged.run_at_ms - merged.created_at_ms >= 59_000, "postponed by the window");

    db.prepare("update cairnq_tasks set run_at_ms = 0").run();
    const worker = spawnFixture(t, "serve-worker.mjs", { db: dbPath, handler: "sleep", sleepMs: 600_000 });
    await worker.waitForEvent((e) => e.event === "started" && e.id === first.id, { timeoutMs: 60_000 });
    const followUp = db.transaction(() => save(3))();
    assert.notEqual(followUp.id, first.id);
    const held = await cq.getByKey("doc-1");
    assert.equal(held.id, followUp.id);
    assert.equal(held.status, "queued");
    assert.ok(held.run_at_ms > Date.now() + 1e9, "held back while the first runs");
  });

  test("outside a transaction, on no connection, or on a database without cairnq's tables: refused", async (t) => {
    const { cq, db, tasks } = await open(t);
    assert.throws(() => cq.submitIn(db, "job", {}), /^Error: submitIn must run inside your open transaction/);
    assert.throws(() => cq.submitIn({}, "job", {}), /^TypeError: submitIn needs your SQLite connection/);
    assert.equal(tasks(), 0);
    const bare = new Database(makeDbPath(t, "bare.db"));
    defer(t, () => bare.close());
    bare.exec("create table orders (id integer primary key, total int not null)");
    bare.exec("begin");
    bare.prepare("insert into orders (total) values (?)").run(1);
    assert.throws(
      () => cq.submitIn(bare, "job", {}),
      (err) => err.code === "CAIRNQ_NOT_CAIRNQ" && /has no cairnq tables/.test(err.message),
    );
    bare.exec("commit");
    assert.equal(bare.prepare("select count(*) as n from orders").get().n, 1, "the transaction went on");
  });

  test("a process killed between the submit and its commit leaves nothing, and the file writable", async (t) => {
    const { cq, dbPath, orders, tasks } = await open(t);
    const app = spawnFixture(t, "submit-in-app.mjs", { dialect: "sqlite", db: dbPath, key: "crash-key" });
    const { id } = await app.waitForEvent((e) => e.event === "written", { timeoutMs: 60_000 });
    app.kill("SIGKILL");
    await app.waitExit();
    assert.equal(await cq.get(id), null);
    assert.equal(orders(), 0);
    assert.equal(tasks(), 0);
    assert.equal(await cq.getByKey("crash-key"), null);
    const after = await cq.submit("job", {}, { key: "crash-key" });
    assert.notEqual(after.id, id);
    assert.equal((await cq.get(after.id)).status, "queued");
  });
});
