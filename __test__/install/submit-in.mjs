// Install check of submitIn on the runtime's own SQLite driver (docs/api.md,
// "The task and your rows in one transaction"): `node:sqlite` on Node 22,
// `bun:sqlite` on Bun; Node 20 has neither (better-sqlite3 is tested in
// __test__/submit-in/). The app's connection writes an order and its task in
// one transaction: a rollback leaves neither, a commit both, and a worker runs
// the task. Prints one `ok` line; exits non-zero on failure.
import { CairnQ, Worker } from "cairnq";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const runtime = typeof Bun !== "undefined" ? `bun ${Bun.version}` : `node ${process.version}`;

/** The runtime's driver as `open(path)` → a connection with `prepare` and `exec`, or null. */
async function runtimeDriver() {
  if (typeof Bun !== "undefined") {
    const { Database } = await import("bun:sqlite");
    return { name: "bun:sqlite", open: (path) => new Database(path) };
  }
  try {
    const { DatabaseSync } = await import("node:sqlite");
    return { name: "node:sqlite", open: (path) => new DatabaseSync(path) };
  } catch {
    return null;
  }
}

const driver = await runtimeDriver();
if (driver === null) {
  console.log(`ok submitIn skipped on ${runtime}: no SQLite driver of its own`);
} else {
  const dir = mkdtempSync(join(tmpdir(), "cairnq-submit-in-"));
  try {
    const path = join(dir, "queue.db");
    const cq = CairnQ.sqlite(path);
    await cq.connect();
    const db = driver.open(path);
    db.exec("pragma busy_timeout = 10000");
    db.exec("create table orders (id integer primary key, total int not null)");
    const count = (table) => Number(db.prepare(`select count(*) as n from ${table}`).get().n);

    db.exec("begin");
    db.prepare("insert into orders (total) values (?)").run(1);
    cq.submitIn(db, "receipt", { total: 1 });
    db.exec("rollback");
    assert.equal(count("orders") + count("cairnq_tasks"), 0, "a rollback leaves nothing");

    db.exec("begin");
    db.prepare("insert into orders (total) values (?)").run(2);
    const ref = cq.submitIn(db, "receipt", { total: 2 }, { priority: 3 });
    assert.equal(await cq.get(ref.id), null, "nothing visible before the commit");
    db.exec("commit");
    const worker = Worker.sqlite(path, { pollIntervalMs: 20 }).task("receipt", (_ctx, { total }) => total * 10);
    const done = await worker.background(() => cq.wait(ref.id, { timeoutMs: 20_000 }));
    assert.equal(done.status, "succeeded");
    assert.equal(done.result, 20);
    assert.equal(done.priority, 3);
    db.close();
    await cq.close();
    console.log(`ok submitIn on ${runtime} with ${driver.name}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
