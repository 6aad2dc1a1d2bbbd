// The platform suite: what every built target must do under its own runtime
// (`scripts/platforms/run-on.sh <name> __test__/platform/suite.mjs`), small enough to
// run emulated. Plain output, one line a check; the last line is
// "N passed, N failed" (", N skipped" when Postgres was skipped) and the exit
// code is 1 when a check failed. A check returns a reason to skip, or nothing.
//
// Child processes (a worker to SIGKILL, the `cairnq` CLI) run under the same
// runtime: CAIRNQ_PLATFORM_RUNTIME is its command line as a JSON array when
// the runtime needs an emulator in front (run-on.sh sets it), else this
// process's own executable. Postgres runs when CAIRNQ_TEST_PG_DSN is set;
// with CI set, a missing DSN fails.
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { CairnQ, RetentionSweeper, SQLiteStore, Worker } from "../../index.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, "..", "..");
const runtime = process.env.CAIRNQ_PLATFORM_RUNTIME
  ? JSON.parse(process.env.CAIRNQ_PLATFORM_RUNTIME)
  : [process.execPath];

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "cairnq-platform-"));
let dbCount = 0;
const newDbPath = () => path.join(tmp, `queue-${++dbCount}.db`);

function check(cond, message) {
  if (!cond) throw new Error(message);
}

async function waitFor(fn, { timeoutMs, what }) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value) return value;
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Runs `args` under this runtime; resolves with {child, output(), exited}. */
function runChild(args) {
  const child = spawn(runtime[0], [...runtime.slice(1), ...args], { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (out += d));
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  return { child, output: () => out, exited };
}

async function drainWithWorker(client, workerFor) {
  const ids = [];
  for (let i = 0; i < 20; i++) ids.push((await client.submit("add", { a: i, b: 22 })).id);
  const worker = workerFor({ pollIntervalMs: 50 });
  worker.task("add", (ctx, { a, b }) => ({ sum: a + b }));
  const rows = await worker.background(() => Promise.all(ids.map((id) => client.wait(id, { timeoutMs: 120_000 }))));
  rows.forEach((row, i) => {
    check(row.status === "succeeded", `task ${i}: ${JSON.stringify(row)}`);
    check(row.result.sum === i + 22, `task ${i} result ${JSON.stringify(row.result)}`);
  });
}

const checks = {
  "SQLite: open, submit, drain with a worker": async () => {
    const db = newDbPath();
    const client = CairnQ.sqlite(db);
    await drainWithWorker(client, (opts) => Worker.sqlite(db, opts));
    const stats = await client.stats();
    check(stats.default.succeeded === 20, `stats ${JSON.stringify(stats)}`);
    await client.close();
  },

  "SQLite: a temp-dir path in the OS's own form, and with forward slashes": async () => {
    const db = newDbPath();
    if (process.platform === "win32") check(/^[A-Za-z]:\\[^/]+$/.test(db), `not a drive-letter path: ${db}`);
    const client = CairnQ.sqlite(db);
    await client.submit("one", {});
    await client.close();
    check(fs.existsSync(db), `${db} was not created`);
    const again = CairnQ.sqlite(db.replaceAll("\\", "/"));
    const stats = await again.stats();
    check(stats.default.queued === 1, `the same file by its forward-slash path: ${JSON.stringify(stats)}`);
    await again.close();
  },

  "a handler blocking the event loop past its lease keeps the lease (attempt 1)": async () => {
    const db = newDbPath();
    const client = CairnQ.sqlite(db);
    // Two workers poll natively while the loop is blocked: a lost lease
    // would let the other one claim the task again (attempt 2), and the
    // first one's finish would be refused.
    let runs = 0;
    const [first, second] = [1, 2].map(() => {
      const worker = Worker.sqlite(db, { leaseMs: 1_000, pollIntervalMs: 50, onError: () => {} });
      worker.task("block", () => {
        runs++;
        const until = Date.now() + 3_500;
        while (Date.now() < until);
        return { done: true };
      });
      return worker;
    });
    const { id } = await client.submit("block", {});
    const row = await first.background(() => second.background(() => client.wait(id, { timeoutMs: 120_000 })));
    check(row.status === "succeeded" && row.attempt === 1, `row ${JSON.stringify(row)}`);
    check(runs === 1 && (await client.get(id)).attempt === 1, `the handler ran ${runs} times`);
    await client.close();
  },

  "a SIGKILLed worker's task is recovered after its lease and runs again": async () => {
    const db = newDbPath();
    const client = CairnQ.sqlite(db);
    const { id } = await client.submit("hang", {});
    const doomed = runChild([path.join(here, "hanging-worker.mjs"), db]);
    await waitFor(async () => (await client.get(id)).status === "running", {
      timeoutMs: 120_000,
      what: () => `the child worker to claim the task; its output: ${doomed.output()}`,
    });
    doomed.child.kill("SIGKILL");
    const exit = await doomed.exited;
    check(exit.code !== 0, `the child exited ${JSON.stringify(exit)}`);
    const worker = Worker.sqlite(db, { leaseMs: 1_000, pollIntervalMs: 50 });
    worker.task("hang", (ctx) => ({ attempt: ctx.attempt }));
    const row = await worker.background(() => client.wait(id, { timeoutMs: 120_000 }));
    check(row.status === "succeeded" && row.attempt === 2, `row ${JSON.stringify(row)}`);
    await client.close();
  },

  "retention: a sweep purges finished tasks": async () => {
    const db = newDbPath();
    const client = CairnQ.sqlite(db);
    await drainWithWorker(client, (opts) => Worker.sqlite(db, opts));
    const { id: queued } = await client.submit("later", {});
    const store = new SQLiteStore(db);
    const purged = await new RetentionSweeper(store, { olderThanMs: 0 }).sweep();
    check(purged === 20, `purged ${purged}`);
    const stats = await client.stats();
    check(stats.default.succeeded === 0 && stats.default.queued === 1, `stats ${JSON.stringify(stats)}`);
    check((await client.get(queued)).status === "queued", "the queued task is kept");
    await store.close();
    await client.close();
  },

  "the cairnq CLI prints stats": async () => {
    const db = newDbPath();
    const client = CairnQ.sqlite(db);
    await client.submit("one", {});
    await client.close();
    const cli = runChild([path.join(root, "bin", "cairnq.js"), "stats", db, "--json"]);
    const exit = await cli.exited;
    check(exit.code === 0, `cairnq stats exited ${JSON.stringify(exit)}: ${cli.output()}`);
    const counts = JSON.parse(cli.output());
    check(counts.default.queued === 1, `cairnq stats --json: ${cli.output()}`);
  },

  "Postgres over TCP: open, submit, drain with a worker": async () => {
    const dsn = process.env.CAIRNQ_TEST_PG_DSN;
    if (!dsn) {
      if (process.env.CI) throw new Error("CAIRNQ_TEST_PG_DSN must be set when CI is set");
      return "CAIRNQ_TEST_PG_DSN is not set";
    }
    const { default: pg } = await import("pg");
    const name = `cairnq_platform_${process.pid}_${Date.now()}`;
    const admin = new pg.Client({ connectionString: dsn });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    try {
      const url = new URL(dsn);
      url.pathname = `/${name}`;
      const client = CairnQ.postgres(url.href);
      await drainWithWorker(client, (opts) => Worker.postgres(url.href, opts));
      await client.close();
    } finally {
      await admin.query(`DROP DATABASE ${name} WITH (FORCE)`);
      await admin.end();
    }
  },
};

let passed = 0;
let failed = 0;
let skipped = 0;
for (const [name, run] of Object.entries(checks)) {
  try {
    const skip = await run();
    if (skip) skipped++;
    else passed++;
    console.log(`ok - ${name}${skip ? ` # SKIP ${skip}` : ""}`);
  } catch (err) {
    failed++;
    console.log(`not ok - ${name}\n  ${String(err?.stack ?? err).replace(/\n/g, "\n  ")}`);
  }
}
fs.rmSync(tmp, { recursive: true, force: true });
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}`);
process.exit(failed ? 1 : 0);
