// A Postgres worker writes its completions apart from its claims, one batch at
// a time beside the poll loop (docs/api.md, "Poll loop"). A worker process
// stopped mid-drain writes every completion of the handlers that ran before
// it exits; one SIGKILLed mid-batch loses no task and takes back no
// completion it wrote: its unwritten ones run again after their lease.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";

import { makeTempDir, readJsonLines, spawnFixture, statusTotals, waitFor } from "../support/helpers.mjs";
import { PG_SKIP, createDatabase, openPgClient } from "../support/pg-helpers.mjs";

const SUITE_TIMEOUT_MS = 600_000;
const N = 3000;

/** A worker process draining "job" tasks (fixtures/serve-worker.mjs), many calls at once. */
function spawnWorker(t, dsn, runsFile, config = {}) {
  return spawnFixture(
    t,
    "serve-worker.mjs",
    { dialect: "postgres", db: dsn, handler: "ok", quiet: true, concurrency: 32, runsFile, ...config },
    { eventTimeoutMs: 60_000 },
  );
}

async function drainingDatabase(t) {
  const { dsn } = await createDatabase(t);
  const client = openPgClient(t, dsn);
  await client.submitMany(Array.from({ length: N }, (_, i) => ({ task: "job", payload: { i } })));
  return { dsn, client, runsFile: path.join(makeTempDir(t), "runs.jsonl") };
}

/** Every row, by id. */
async function rowsById(client) {
  const rows = new Map();
  for (let offset = 0; ; offset += 1000) {
    const page = await client.list({ limit: 1000, offset });
    for (const row of page) rows.set(row.id, row);
    if (page.length < 1000) return rows;
  }
}

describe("Postgres completions written beside the claims", { skip: PG_SKIP, timeout: SUITE_TIMEOUT_MS }, () => {
  test("a worker stopped mid-drain writes every completion of the handlers that ran", async (t) => {
    const { dsn, client, runsFile } = await drainingDatabase(t);
    const worker = spawnWorker(t, dsn, runsFile);
    await waitFor(async () => (await statusTotals(client)).succeeded >= N / 4, {
      timeoutMs: 120_000,
      intervalMs: 20,
      message: "the drain never got going",
    });
    worker.kill("SIGTERM");
    assert.deepEqual(await worker.waitExit(60_000), { code: 0, signal: null }, worker.tail());

    const totals = await statusTotals(client);
    assert.equal(totals.running, 0, `tasks left running: ${JSON.stringify(totals)}`);
    assert.ok(totals.succeeded < N, `the stop came mid-drain: ${JSON.stringify(totals)}`);
    const rows = await rowsById(client);
    const runs = readJsonLines(runsFile);
    for (const run of runs) assert.equal(rows.get(run.id).status, "succeeded", `task ${run.id} ran, not completed`);
    assert.equal(runs.length, totals.succeeded, "every succeeded task ran once");
  });

  test("a worker SIGKILLed mid-batch loses nothing: what it completed stays, the rest runs again", async (t) => {
    const { dsn, client, runsFile } = await drainingDatabase(t);
    const doomed = spawnWorker(t, dsn, runsFile, { leaseMs: 2000, heartbeatIntervalMs: 500 });
    await waitFor(async () => (await statusTotals(client)).succeeded >= N / 4, {
      timeoutMs: 120_000,
      intervalMs: 20,
      message: "the drain never got going",
    });
    doomed.kill("SIGKILL");
    assert.deepEqual(await doomed.waitExit(), { code: null, signal: "SIGKILL" });
    const before = await rowsById(client);
    const completed = [...before.values()].filter((row) => row.status === "succeeded");
    assert.ok(completed.length < N, "the kill came mid-drain");

    const rescuer = spawnWorker(t, dsn, runsFile);
    await waitFor(async () => (await statusTotals(client)).succeeded === N, {
      timeoutMs: 240_000,
      intervalMs: 100,
      message: "not every task succeeded after the kill",
    });
    const after = await rowsById(client);
    assert.equal(after.size, N);
    for (const row of completed) {
      assert.deepEqual(after.get(row.id).result, row.result, `task ${row.id} completed twice`);
      assert.equal(after.get(row.id).attempt, 1);
    }
    const running = [...before.values()].filter((row) => row.status === "running");
    for (const row of running) assert.equal(after.get(row.id).attempt, 2, `task ${row.id} ran again`);
    t.diagnostic(`${completed.length} completed before the kill, ${running.length} ran again after their lease`);
    rescuer.kill("SIGTERM");
    assert.deepEqual(await rescuer.waitExit(60_000), { code: 0, signal: null }, rescuer.tail());
  });
});
