// Worker processes (docs/api.md, "Worker construction and lifecycle",
// "Heartbeat and blocked loops"): what only real processes can show. On every
// dialect, leases survive handlers that block the event loop (the reason this
// package exists) and a SIGKILLed worker's task is recovered after lease
// expiry; on SQLite, the lifecycle methods leave nothing behind that would
// keep a process alive or a signal listener installed.
import { describe, test as nodeTest } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";

import { forEachDialect } from "./support/dialects.mjs";
import { makeTempDir, openClient, readJsonLines, spawnFixture, waitFor } from "./support/helpers.mjs";
import { waitAllTerminal, waitForStatus } from "./support/worker-helpers.mjs";

// Every test is bounded: a hang fails that test instead of the whole run.
const test = (name, fn) => nodeTest(name, { timeout: 180_000 }, fn);

forEachDialect("worker processes", (dialect) => {
  /** A worker process on `db` (fixtures/serve-worker.mjs with `config`). */
  const spawnWorker = (t, db, config) =>
    spawnFixture(t, "serve-worker.mjs", { dialect: dialect.name, db, ...config }, { eventTimeoutMs: 60_000 });

  test("handlers that block the event loop, two processes: every task runs once with attempt 1, EventLoopBlocked reaches onError", async (t) => {
    const { client, db } = await dialect.open(t);
    const runsFile = path.join(makeTempDir(t), "runs.jsonl");
    const leaseMs = 1000;
    const blockMs = 3500;
    const ids = [];
    for (let i = 0; i < 6; i++) ids.push((await client.submit("job", { i })).id);

    const cfg = { handler: "block", blockMs, leaseMs, runsFile, pollIntervalMs: 50 };
    const workers = [spawnWorker(t, db, cfg), spawnWorker(t, db, cfg)];

    // 6 × 3.5 s over two processes is ~11 s; the bound is for a loaded machine.
    const rows = await waitAllTerminal(client, ids, { timeoutMs: 120_000 });
    for (const row of rows) {
      assert.equal(row.status, "succeeded", `task ${row.id}: ${JSON.stringify(row)}`);
      assert.equal(row.attempt, 1, `task ${row.id} was claimed more than once`);
      assert.equal(row.result.attempt, 1);
      assert.equal(row.error, null, "no attempt ever failed (error is never cleared)");
    }

    const runs = readJsonLines(runsFile);
    assert.equal(runs.length, 6, `exactly six handler runs, got ${JSON.stringify(runs)}`);
    assert.deepEqual(new Set(runs.map((r) => r.id)), new Set(ids), "each task ran once");
    assert.ok(runs.every((r) => r.attempt === 1));
    // Every run's recorded pid is the pid that finished the row.
    for (const row of rows) {
      const run = runs.find((r) => r.id === row.id);
      assert.equal(row.result.pid, run.pid);
      assert.equal(row.worker_id, run.workerId);
    }

    // The blocked loop is reported (never thrown) once the loop is free again.
    const blocked = await waitFor(
      () => workers.flatMap((w) => w.events()).find((e) => e.event === "error" && e.name === "EventLoopBlocked"),
      { timeoutMs: 30_000, message: "no EventLoopBlocked was reported through onError" },
    );
    assert.match(blocked.message, /event loop was blocked/);
    assert.equal(blocked.isError, true);
    assert.equal(blocked.phase, "execute");
    assert.ok(ids.includes(blocked.taskId), `taskId ${blocked.taskId} is one of the blocked tasks`);
    assert.equal(blocked.leaseMs, leaseMs);
    assert.equal(blocked.intervalMs, Math.floor(leaseMs / 3));
    assert.ok(blocked.lateMs > blocked.intervalMs, `lateMs ${blocked.lateMs} > interval`);
    // The only errors reported are blocked-loop reports.
    for (const w of workers) {
      const others = w.events().filter((e) => e.event === "error" && e.name !== "EventLoopBlocked");
      assert.deepEqual(others, [], `unexpected onError reports: ${JSON.stringify(others)}`);
    }

    for (const w of workers) w.kill("SIGTERM");
    for (const w of workers) {
      const exit = await w.waitExit(30_000);
      assert.deepEqual(
        exit,
        { code: 0, signal: null },
        `serve() stopped on SIGTERM and the process exited; ${w.tail()}`,
      );
      const served = w.events().find((e) => e.event === "served");
      assert.deepEqual(served?.listeners, { SIGINT: 0, SIGTERM: 0 });
    }
  });

  test("with the default lease (4 s, beats every second), handlers blocking the loop twice as long run once with attempt 1", async (t) => {
    const { client, db } = await dialect.open(t);
    const runsFile = path.join(makeTempDir(t), "runs.jsonl");
    const ids = [];
    for (let i = 0; i < 4; i++) ids.push((await client.submit("job", { i })).id);
    const cfg = { handler: "block", blockMs: 8_000, runsFile };
    const workers = [spawnWorker(t, db, cfg), spawnWorker(t, db, cfg)];
    const started = await workers[0].waitForEvent((e) => e.event === "started", { what: "a started handler" });
    // The lease the worker takes and renews is the default: 4 000 ms past the write.
    const held = await client.get(started.id);
    const leaseMs = held.lease_until_ms - held.updated_at_ms;
    assert.ok(leaseMs >= 4_000 - dialect.clockSlackMs && leaseMs <= 4_000, `lease ${leaseMs} ms`);

    const rows = await waitAllTerminal(client, ids, { timeoutMs: 150_000 });
    for (const row of rows) {
      assert.equal(row.status, "succeeded", JSON.stringify(row));
      assert.equal(row.attempt, 1, `task ${row.id} was claimed again: its lease expired`);
    }
    const runs = readJsonLines(runsFile);
    assert.equal(runs.length, ids.length, `one run per task, got ${JSON.stringify(runs)}`);
    const blocked = workers.flatMap((w) => w.events()).find((e) => e.name === "EventLoopBlocked");
    if (blocked) assert.deepEqual([blocked.leaseMs, blocked.intervalMs], [4_000, 1_000]);
    for (const w of workers) w.kill("SIGTERM");
    for (const w of workers) assert.deepEqual(await w.waitExit(60_000), { code: 0, signal: null }, w.tail());
  });

  test("a SIGKILLed worker's task is recovered after lease expiry, runs again with attempt 2, nothing is lost", async (t) => {
    const { client, db } = await dialect.open(t);
    const runsFile = path.join(makeTempDir(t), "runs.jsonl");
    const leaseMs = 1000;
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await client.submit("job", { i })).id);

    const doomed = spawnWorker(t, db, { handler: "hang", leaseMs, runsFile });
    const started = await doomed.waitForEvent((e) => e.event === "started", { what: "a started handler" });
    assert.equal(started.attempt, 1);
    // The lease is renewed while the handler hangs (heartbeat in Rust).
    const firstLease = (await client.get(started.id)).lease_until_ms;
    await waitFor(async () => (await client.get(started.id)).lease_until_ms > firstLease, {
      timeoutMs: 10_000,
      message: "the hanging task's lease was never renewed",
    });

    doomed.kill("SIGKILL");
    assert.deepEqual(await doomed.waitExit(), { code: null, signal: "SIGKILL" });
    const orphan = await client.get(started.id);
    assert.equal(orphan.status, "running");
    assert.equal(orphan.worker_id, started.workerId);
    assert.equal(orphan.attempt, 1);

    const rescuer = spawnWorker(t, db, { handler: "ok", leaseMs, runsFile });
    const rows = await waitAllTerminal(client, ids, { timeoutMs: 60_000 });
    for (const row of rows) assert.equal(row.status, "succeeded", JSON.stringify(row));
    const recovered = rows.find((r) => r.id === started.id);
    assert.equal(recovered.attempt, 2);
    assert.deepEqual(recovered.result, { id: started.id, attempt: 2, pid: rescuer.pid });
    assert.equal(recovered.error, null, "lease recovery with attempts left records no error");
    for (const row of rows.filter((r) => r.id !== started.id)) assert.equal(row.attempt, 1);

    const runs = readJsonLines(runsFile);
    const again = runs.filter((r) => r.id === started.id);
    assert.deepEqual(
      again.map((r) => [r.pid, r.attempt]),
      [
        [doomed.pid, 1],
        [rescuer.pid, 2],
      ],
    );
    // Redelivery waited for the dead worker's lease to run out (on Postgres
    // the database's clock is this host's).
    assert.ok(
      again[1].at >= orphan.lease_until_ms,
      `rerun at ${again[1].at} before lease end ${orphan.lease_until_ms}`,
    );
    assert.equal(runs.length, 4);

    assert.deepEqual(await client.stats(), {
      default: { queued: 0, running: 0, succeeded: 3, failed: 0, canceled: 0 },
    });

    rescuer.kill("SIGINT");
    assert.deepEqual(await rescuer.waitExit(), { code: 0, signal: null }, rescuer.tail());
  });
});

describe("robustness", () => {
  test("NaN for an unvalidated timing option does not abort the process", async (t) => {
    const { dbPath } = openClient(t);
    // maxRunMs is validated only as "≤ 0", which NaN is not (docs/api.md,
    // "Worker construction and lifecycle").
    const options = ["pollIntervalMs", "heartbeatIntervalMs", "maxRunMs"];
    const proc = spawnFixture(t, "nan-options.mjs", { db: dbPath, options });
    const exit = await proc.waitExit(30_000);
    const ok = proc
      .events()
      .filter((e) => e.event === "ok")
      .map((e) => e.option);
    assert.deepEqual(
      exit,
      { code: 0, signal: null },
      `survived: ${JSON.stringify(ok)}; stderr: ${proc.stderr.slice(0, 400)}`,
    );
    assert.deepEqual(ok, options);
  });
});

describe("process hygiene", () => {
  test("run, one task, stop and close: the process exits on its own with no signal listeners left", async (t) => {
    const { dbPath } = openClient(t);
    const proc = spawnFixture(t, "run-once.mjs", { db: dbPath, mode: "run", pollIntervalMs: 5000 });
    const exit = await proc.waitExit(30_000);
    assert.deepEqual(exit, { code: 0, signal: null }, proc.stderr);
    const done = proc.events().find((e) => e.event === "done");
    assert.ok(done, proc.stdout);
    assert.equal(done.status, "succeeded");
    assert.deepEqual(done.result, { doubled: 42, attempt: 1 });
    assert.deepEqual(done.listeners, done.baseline);
    assert.deepEqual(done.listeners, { SIGINT: 0, SIGTERM: 0 });
  });

  test("serve() installs SIGINT/SIGTERM listeners, stops on SIGTERM, removes them, and closes its owned store", async (t) => {
    const { client, dbPath } = openClient(t);
    const proc = spawnFixture(t, "serve-worker.mjs", { db: dbPath, handler: "ok", leaseMs: 5000 });
    const serving = await proc.waitForEvent((e) => e.event === "serving");
    assert.deepEqual(serving.listeners, { SIGINT: 0, SIGTERM: 0 });
    const task = await client.submit("job", { x: 1 });
    const started = await proc.waitForEvent((e) => e.event === "started", { what: "the handler call" });
    assert.deepEqual(started.listeners, { SIGINT: 1, SIGTERM: 1 }, "serve() listens for both signals while running");
    await waitForStatus(client, task.id, "succeeded");

    proc.kill("SIGTERM");
    const exit = await proc.waitExit(30_000);
    assert.deepEqual(exit, { code: 0, signal: null }, proc.stderr);
    const served = proc.events().find((e) => e.event === "served");
    assert.deepEqual(served?.listeners, { SIGINT: 0, SIGTERM: 0 });
  });

  test("serve(): the first signal removes both listeners, so a second one gets Node's default behavior", async (t) => {
    const { client, dbPath } = openClient(t);
    const proc = spawnFixture(t, "serve-worker.mjs", { db: dbPath, handler: "hang", leaseMs: 5000 });
    await client.submit("job", {});
    await proc.waitForEvent((e) => e.event === "started", { what: "the hanging handler" });

    proc.kill("SIGINT");
    // serve() is now draining a handler that never finishes.
    await proc.waitForEvent((e) => e.event === "listeners" && e.SIGINT === 0 && e.SIGTERM === 0, {
      what: "both listeners removed after the first signal",
    });
    assert.equal(proc.exitInfo, null, "the first signal only stops the worker");
    proc.kill("SIGTERM");
    const exit = await proc.waitExit(30_000);
    assert.deepEqual(exit, { code: null, signal: "SIGTERM" });
    assert.equal(
      proc.events().find((e) => e.event === "served"),
      undefined,
    );
  });

  test("background(fn) resolves with fn's value and closes an owned store; the process exits on its own", async (t) => {
    const { dbPath } = openClient(t);
    const proc = spawnFixture(t, "run-once.mjs", { db: dbPath, mode: "background" });
    const exit = await proc.waitExit(30_000);
    assert.deepEqual(exit, { code: 0, signal: null }, proc.stderr);
    const done = proc.events().find((e) => e.event === "done");
    assert.ok(done, proc.stdout);
    assert.deepEqual(done.value, { fromFn: { doubled: 10, attempt: 1 } });
    // SQLite removes the -wal file when the last connection closes: it was there
    // while the worker's store was open, and is gone after background().
    assert.equal(done.walInside, true);
    assert.equal(done.walAfter, false, "the owned store was closed");
    assert.deepEqual(done.listeners, { SIGINT: 0, SIGTERM: 0 });
  });

  test("background(fn) leaves an injected store open", async (t) => {
    const { dbPath } = openClient(t);
    const proc = spawnFixture(t, "run-once.mjs", { db: dbPath, mode: "background-injected" });
    const exit = await proc.waitExit(30_000);
    assert.deepEqual(exit, { code: 0, signal: null }, proc.stderr);
    const done = proc.events().find((e) => e.event === "done");
    assert.ok(done, proc.stdout);
    assert.deepEqual(done.value, { fromFn: { doubled: 10, attempt: 1 } });
    assert.equal(done.walInside, true);
    assert.equal(done.walAfter, true, "an injected store is not closed by background()");
  });

  test("background(fn) rejects with fn's error, still stops, closes the owned store and exits", async (t) => {
    const { dbPath } = openClient(t);
    const proc = spawnFixture(t, "run-once.mjs", { db: dbPath, mode: "background-throws" });
    const exit = await proc.waitExit(30_000);
    assert.deepEqual(exit, { code: 0, signal: null }, proc.stderr);
    const done = proc.events().find((e) => e.event === "done");
    assert.ok(done, proc.stdout);
    assert.deepEqual(done.error, { name: "RangeError", message: "fn failed" });
    assert.equal(done.walAfter, false);
    assert.deepEqual(done.listeners, { SIGINT: 0, SIGTERM: 0 });
  });
});
