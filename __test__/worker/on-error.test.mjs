// WorkerOptions.onError (docs/api.md, "Worker options"): what is reported, with
// which phase, and that the worker carries on. Failed claims and settlement
// writes use SQLite's write lock, so those run on SQLite.

import assert from "node:assert/strict";

import { CairnQError, EventLoopBlocked } from "../../index.mjs";
import { holdWriteLock, waitFor } from "../support/helpers.mjs";
import { CALL, blockEventLoop, makeGate, waitForStatus } from "../support/worker-helpers.mjs";
import { forEachDialect, setupWorker, sqlite, test } from "../support/dialects.mjs";

// ---------------------------------------------------------------------------
forEachDialect("onError", (dialect) => {
  test("EventLoopBlocked is reported with phase execute and the task id; a throwing onError is swallowed", async (t) => {
    const reports = [];
    const leaseMs = 300;
    const { client, handle, worker } = await setupWorker(t, dialect, {
      leaseMs,
      onError(err, info) {
        reports.push({ err, info });
        throw new Error("onError itself blew up");
      },
    });
    worker.task("blocker", () => {
      blockEventLoop(1200);
      return "ok";
    });
    worker.task("after", () => "worker survived");
    handle.start();
    const blocked = await client.submit("blocker");
    assert.equal((await waitForStatus(client, blocked.id, "succeeded")).attempt, 1);
    const report = await waitFor(() => reports.find((r) => r.err instanceof EventLoopBlocked), {
      message: "EventLoopBlocked was not reported",
    });
    assert.ok(report.err instanceof CairnQError);
    assert.equal(report.err.name, "EventLoopBlocked");
    assert.match(report.err.message, /event loop was blocked/);
    assert.equal(report.err.intervalMs, Math.floor(leaseMs / 3));
    assert.equal(report.err.leaseMs, leaseMs);
    assert.ok(report.err.lateMs > report.err.intervalMs);
    assert.deepEqual(report.info, { phase: "execute", taskId: blocked.id });
    assert.equal(await client.call("after", {}, CALL), "worker survived");
  });

  // Another connection holds SQLite's write lock.
  if (dialect === sqlite) {
    test("a failed claim is reported with phase claim (no taskId) and the loop carries on", async (t) => {
      const reports = [];
      const { client, dbPath, handle, worker } = await setupWorker(t, dialect, {
        busyTimeoutMs: 50,
        onError: (err, info) => reports.push({ err, info }),
      });
      worker.task("job", () => "done");
      handle.start();
      assert.equal(await client.call("job", {}, CALL), "done");
      // Due only once another connection holds the write lock: the probe (a
      // read) sees it, the claim transaction cannot start within busyTimeoutMs.
      const due = await client.submit("job", {}, { runAtDelayMs: 3000 });
      const lock = await holdWriteLock(dbPath);
      try {
        assert.equal((await client.get(due.id)).status, "queued");
        await waitFor(() => reports.some((r) => r.info.phase === "claim"), {
          timeoutMs: 20_000,
          message: "no claim-phase error was reported while the write lock was held",
        });
      } finally {
        await lock.release();
      }
      const claimReport = reports.find((r) => r.info.phase === "claim");
      assert.ok(claimReport.err instanceof Error);
      assert.equal(claimReport.err.code, "SQLITE_BUSY", `got ${claimReport.err.message}`);
      assert.deepEqual(claimReport.info, { phase: "claim" });
      assert.ok(
        reports.every((r) => r.info.phase === "claim"),
        JSON.stringify(reports.map((r) => r.info)),
      );
      // The loop carried on: the task is claimed once the lock is gone.
      assert.equal((await waitForStatus(client, due.id, "succeeded")).result, "done");
    });

    test("a settlement write that fails is reported with phase execute and the task id; nothing is recorded", async (t) => {
      const reports = [];
      // No heartbeat within the test (its failures would be execute reports too).
      const { client, dbPath, handle, worker } = await setupWorker(t, dialect, {
        busyTimeoutMs: 50,
        heartbeatIntervalMs: 600_000,
        onError: (err, info) => reports.push({ err, info }),
      });
      const started = makeGate();
      const finish = makeGate();
      worker.task("job", async (ctx, payload) => {
        if (payload.wait) {
          started.release();
          await finish.promise;
        }
        return { attempt: ctx.attempt };
      });
      const task = await client.submit("job", { wait: true });
      handle.start();
      await started.promise;
      const lock = await holdWriteLock(dbPath);
      try {
        finish.release();
        await waitFor(() => reports.some((r) => r.info.phase === "execute"), {
          timeoutMs: 20_000,
          message: "the failed complete() was not reported",
        });
      } finally {
        await lock.release();
      }
      const executeReports = reports.filter((r) => r.info.phase === "execute");
      assert.equal(executeReports.length, 1, JSON.stringify(executeReports.map((r) => r.err.message)));
      assert.equal(executeReports[0].err.code, "SQLITE_BUSY", `got ${executeReports[0].err.message}`);
      assert.deepEqual(executeReports[0].info, { phase: "execute", taskId: task.id });
      // Nothing was written: the task is left to its lease, and the worker carries on.
      const row = await client.get(task.id);
      assert.equal(row.status, "running");
      assert.equal(row.attempt, 1);
      assert.equal(row.result, null);
      assert.deepEqual(await client.call("job", {}, CALL), { attempt: 1 });
    });
  }
});
