// Worker processes on one Postgres database: what only many processes and a
// real server restart can show. Three processes drain thousands of tasks with
// no task run twice; a server restart mid-drain loses nothing. (Blocked event
// loops and SIGKILL recovery on every dialect: worker-process.test.mjs.)
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";

import { CairnQ } from "../../index.mjs";
import { defer, makeTempDir, readJsonLines, spawnFixture, statusTotals, waitFor } from "../support/helpers.mjs";
import { PG_SKIP, createDatabase, openPgClient, privateCluster, serverBinDir } from "../support/pg-helpers.mjs";

// A hung test must fail, not hold CI: generous for a loaded machine.
const SUITE_TIMEOUT_MS = 900_000;

/** A worker process on the Postgres database `dsn` (fixtures/serve-worker.mjs). */
const spawnWorker = (t, dsn, config) =>
  spawnFixture(t, "serve-worker.mjs", { dialect: "postgres", db: dsn, ...config }, { eventTimeoutMs: 60_000 });

/** Submit `n` tasks named "job" with payload {i}, `parallel` at a time; returns their ids in order. */
async function submitMany(client, n, parallel = 100) {
  const ids = new Array(n);
  for (let start = 0; start < n; start += parallel) {
    const batch = [];
    for (let i = start; i < Math.min(n, start + parallel); i++) {
      batch.push(client.submit("job", { i }).then((task) => (ids[i] = task.id)));
    }
    await Promise.all(batch);
  }
  return ids;
}

/** Every row of the database (list pages through created_at desc). */
async function allTasks(client) {
  const rows = [];
  for (let offset = 0; ; offset += 1000) {
    const page = await client.list({ limit: 1000, offset });
    rows.push(...page);
    if (page.length < 1000) return rows;
  }
}

describe("Postgres worker processes", { skip: PG_SKIP, timeout: SUITE_TIMEOUT_MS }, () => {
  test("three worker processes drain 5,000 tasks: every task succeeds, none runs twice", async (t) => {
    const { dsn } = await createDatabase(t);
    const client = openPgClient(t, dsn, { max: 10 });
    await client.connect();
    const runsFile = path.join(makeTempDir(t), "runs.jsonl");
    const cfg = { handler: "ok", quiet: true, concurrency: 8, leaseMs: 30_000, pollIntervalMs: 50, runsFile };
    const workers = [0, 1, 2].map(() => spawnWorker(t, dsn, cfg));
    for (const w of workers) await w.waitForEvent((e) => e.event === "serving", { what: "serving" });

    const N = 5000;
    const ids = await submitMany(client, N);
    await waitFor(async () => (await statusTotals(client)).succeeded === N, {
      timeoutMs: 240_000,
      intervalMs: 250,
      message: `not all ${N} tasks succeeded`,
    }).catch(async (err) => {
      err.message += `; totals ${JSON.stringify(await statusTotals(client))}; ${workers.map((w) => w.tail()).join(" | ")}`;
      throw err;
    });
    assert.deepEqual(await statusTotals(client), { queued: 0, running: 0, succeeded: N, failed: 0, canceled: 0 });

    const rows = await allTasks(client);
    assert.equal(rows.length, N);
    const pids = new Set(workers.map((w) => w.pid));
    for (const row of rows) {
      assert.equal(row.attempt, 1, `task ${row.id} was claimed ${row.attempt} times`);
      assert.equal(row.result.id, row.id);
      assert.equal(row.result.attempt, 1);
      assert.ok(pids.has(row.result.pid), `result from an unknown process ${row.result.pid}`);
    }
    assert.deepEqual(new Set(rows.map((r) => r.id)), new Set(ids));

    // Every handler invocation, including any whose result could not be written.
    const runs = readJsonLines(runsFile);
    assert.equal(runs.length, N, `${runs.length} handler runs for ${N} tasks`);
    assert.equal(new Set(runs.map((r) => r.id)).size, N, "no task ran twice");
    assert.ok(runs.every((r) => r.attempt === 1));
    for (const w of workers) {
      assert.ok(
        runs.some((r) => r.pid === w.pid),
        `process ${w.pid} took part`,
      );
      assert.deepEqual(
        w.events().filter((e) => e.event === "error"),
        [],
        w.tail(),
      );
    }

    for (const w of workers) w.kill("SIGTERM");
    for (const w of workers) assert.deepEqual(await w.waitExit(30_000), { code: 0, signal: null }, w.tail());
  });
});

const serverBinaries = serverBinDir();
describe(
  "Postgres server restart mid-drain",
  {
    skip: PG_SKIP || (serverBinaries ? false : "no PostgreSQL server binaries under /usr/lib/postgresql/*/bin"),
    timeout: SUITE_TIMEOUT_MS,
  },
  () => {
    test("the worker reports errors, reconnects and carries on: every task succeeds, none is lost", async (t) => {
      // A cluster of this test's own, so stopping it disturbs no other test.
      const cluster = await privateCluster(t);
      const dsn = cluster.dsn;
      const N = 2000;
      const leaseMs = 3000;
      const runsFile = path.join(makeTempDir(t), "runs.jsonl");
      let client = CairnQ.postgres(dsn);
      defer(t, () => client.close());
      const ids = await submitMany(client, N);

      const worker = spawnWorker(t, dsn, {
        handler: "sleep",
        sleepMs: 3,
        quiet: true,
        concurrency: 4,
        leaseMs,
        pollIntervalMs: 50,
        runsFile,
      });
      await waitFor(async () => (await statusTotals(client)).succeeded >= 200, {
        timeoutMs: 120_000,
        intervalMs: 50,
        message: "the worker never got going",
      });

      await cluster.stop();
      // While the server is down, the worker's claims fail and reach onError.
      const outage = await worker.waitForEvent((e) => e.event === "error", {
        timeoutMs: 60_000,
        what: "an error during the outage",
      });
      assert.ok(outage.phase === "claim" || outage.phase === "execute", JSON.stringify(outage));
      await cluster.start();

      // The test's own client lost its connections too; a fresh one is simplest.
      await client.close();
      client = CairnQ.postgres(dsn);
      await waitFor(async () => (await statusTotals(client)).succeeded === N, {
        timeoutMs: 180_000,
        intervalMs: 250,
        message: `not every task succeeded after the restart`,
      }).catch(async (err) => {
        err.message += `; totals ${JSON.stringify(await statusTotals(client))}; ${worker.tail()}`;
        throw err;
      });
      assert.deepEqual(await statusTotals(client), { queued: 0, running: 0, succeeded: N, failed: 0, canceled: 0 });

      const rows = await allTasks(client);
      assert.deepEqual(new Set(rows.map((r) => r.id)), new Set(ids), "no task lost");
      const runs = readJsonLines(runsFile);
      const runsById = new Map();
      for (const run of runs) runsById.set(run.id, [...(runsById.get(run.id) ?? []), run]);
      for (const row of rows) {
        const mine = runsById.get(row.id) ?? [];
        assert.ok(mine.length >= 1, `task ${row.id} never ran`);
        // Each run is its own claim: a task runs again only after the lease of
        // its earlier claim expired and recovery re-queued it (a claim whose
        // commit reply was lost in the outage also counts an attempt).
        const attempts = mine.map((r) => r.attempt);
        assert.equal(new Set(attempts).size, attempts.length, `task ${row.id} ran twice in one attempt: ${attempts}`);
        assert.ok(Math.max(...attempts) === row.attempt, `task ${row.id}: attempt ${row.attempt}, runs ${attempts}`);
        assert.deepEqual(row.result, { id: row.id, attempt: row.attempt, pid: worker.pid });
        assert.equal(row.error, null);
      }
      const reruns = rows.filter((r) => r.attempt > 1).length;
      assert.ok(reruns < 50, `only tasks in flight at the outage may rerun (concurrency 4), got ${reruns}`);

      const errors = worker.events().filter((e) => e.event === "error");
      assert.ok(errors.length >= 1);
      t.diagnostic(
        `${errors.length} errors reported, ${reruns} tasks rerun; first: ${errors[0].phase}: ${errors[0].message}`,
      );
      assert.ok(worker.exitInfo === null, `the worker process survived the outage; ${worker.tail()}`);

      worker.kill("SIGTERM");
      assert.deepEqual(await worker.waitExit(30_000), { code: 0, signal: null }, worker.tail());
    });
  },
);
