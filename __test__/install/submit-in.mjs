// Install check of submitIn on the runtime's own SQLite driver (docs/api.md,
// "The task and your rows in one transaction"): `node:sqlite` on Node 22,
// `bun:sqlite` on Bun; Node 20 has neither (better-sqlite3 is tested in
// __test__/submit-in/). The app's connection writes an order and its task in
// one transaction: a rollback leaves neither, a commit both, and a worker runs
// the task; keys, conflicts and debounce decide inside the transaction, bad
// input is refused with the transaction left usable, and a process killed
// before its commit leaves nothing. Prints one `ok` line; exits non-zero on
// failure. It is also its own other processes: with `--work PATH` a worker
// that serves until SIGTERM; with `--hold PATH` the process that writes an
// order and a keyed task, prints `written ID` and holds the transaction open.
import { AlreadyExists, CairnQ, Worker } from "cairnq";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

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

/** This script as a worker process on `path`, stopped when `body` settles. */
async function withWorkerProcess(path, body) {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), "--work", path], {
    stdio: ["ignore", "inherit", "inherit"],
  });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  try {
    return await body();
  } finally {
    child.kill("SIGTERM");
    await exited;
  }
}

/** This script as the process that is killed with its transaction open: the id it wrote. */
function killedBeforeCommit(path) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url), "--hold", path], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    /** @type {string | null} */
    let id = null;
    child.stdout.on("data", (chunk) => {
      out += chunk;
      const written = /^written (\S+)$/m.exec(out);
      if (written && id === null) {
        id = written[1];
        child.kill("SIGKILL");
      }
    });
    child.once("exit", (code) =>
      id === null ? reject(new Error(`the holding process exited first (${code}): ${out}`)) : resolve(id),
    );
  });
}

const driver = await runtimeDriver();
if (process.argv[2] === "--work") {
  const worker = Worker.sqlite(process.argv[3], { pollIntervalMs: 20 }).task(
    "receipt",
    (_ctx, { total }) => total * 10,
  );
  await worker.serve();
} else if (process.argv[2] === "--hold") {
  const path = process.argv[3];
  const cq = CairnQ.sqlite(path);
  const db = driver.open(path);
  db.exec("pragma busy_timeout = 10000");
  db.exec("begin");
  db.prepare("insert into orders (total) values (?)").run(7);
  const ref = cq.submitIn(db, "receipt", { total: 7 }, { key: "crash-key" });
  console.log(`written ${ref.id}`);
  setInterval(() => {}, 60_000);
} else if (driver === null) {
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
    cq.submitIn(db, "receipt", { total: 1 }, { key: "order-1" });
    db.exec("rollback");
    assert.equal(count("orders") + count("cairnq_tasks") + count("cairnq_task_keys"), 0, "a rollback leaves nothing");

    db.exec("begin");
    db.prepare("insert into orders (total) values (?)").run(2);
    const ref = cq.submitIn(db, "receipt", { total: 2 }, { priority: 3, group: "shop", runAtDelayMs: 0 });
    assert.equal(await cq.get(ref.id), null, "nothing visible before the commit");
    db.exec("commit");
    const done = await withWorkerProcess(path, () => cq.wait(ref.id, { timeoutMs: 60_000 }));
    assert.equal(done.status, "succeeded");
    assert.equal(done.result, 20);
    assert.equal(done.priority, 3);
    assert.deepEqual(done.metadata, { "cairnq.group": "shop" });

    // Keys and conflicts decide inside the transaction; a refusal leaves it usable.
    db.exec("begin");
    db.prepare("insert into orders (total) values (?)").run(3);
    const first = cq.submitIn(db, "receipt", { total: 3 }, { key: "order-3" });
    assert.equal(cq.submitIn(db, "receipt", {}, { key: "order-3" }).id, first.id, "reuse");
    assert.throws(() => cq.submitIn(db, "receipt", {}, { key: "order-3", conflict: "reject" }), AlreadyExists);
    assert.throws(() => cq.submitIn(db, "receipt", {}, { priority: 1e13 }), /^Error: priority must be a number/);
    const replaced = cq.submitIn(db, "receipt", { total: 4 }, { key: "order-3", conflict: "replace" });
    const save = (v) => cq.submitIn(db, "save", { v }, { key: "doc-1", debounceMs: 60_000 });
    const saved = save(1);
    assert.equal(save(2).id, saved.id, "a debounced burst is one task");
    db.exec("commit");
    assert.equal(count("orders"), 2);
    assert.equal((await cq.get(first.id)).status, "canceled");
    assert.equal((await cq.getByKey("order-3")).id, replaced.id);
    assert.deepEqual((await cq.get(saved.id)).payload, { v: 2 });

    const killed = await killedBeforeCommit(path);
    assert.equal(await cq.get(killed), null, "a process killed before its commit leaves nothing");
    assert.equal(await cq.getByKey("crash-key"), null);
    assert.equal(count("orders"), 2);
    db.close();
    await cq.close();
    console.log(`ok submitIn on ${runtime} with ${driver.name}: keys, conflicts, debounce, crash`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
