// Worker-side store methods (docs/api.md, "Stores"; docs/protocol.md, "Claim"
// through "Complete / succeed / fail") driven directly, plus the SQLiteStore
// specifics (docs/api.md, "Stores"): protocolVersion, in-memory stores,
// busyTimeoutMs and waiting for another connection's write lock.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";

import { CairnQ, CairnQError, LostLease, SQLiteStore, TaskStore } from "../index.mjs";
import {
  TASK_COLUMNS,
  claimTask,
  defer,
  holdWriteLock,
  makeDbPath,
  makeTempDir,
  openClient,
  rejectionOf,
  waitFor,
  waitUntilPast,
} from "./support/helpers.mjs";

const ENVELOPE = { type: "TaskError", code: "boom", message: "it broke", retryable: true, details: { n: 1 } };

async function assertLostLease(promise, taskId) {
  const err = await rejectionOf(promise);
  assert.ok(err instanceof LostLease, `expected LostLease, got ${err?.name}: ${err?.message}`);
  assert.ok(err instanceof CairnQError);
  assert.equal(err.name, "LostLease");
  assert.equal(err.taskId, taskId);
  assert.equal(err.message, `lost lease on task ${taskId}`);
}

// ---------------------------------------------------------------------------
describe("claim", () => {
  test("claims one task by default: running, attempt 1, owned, leased for 30 s", async (t) => {
    const { client } = openClient(t);
    const a = await client.submit("job");
    // Within one millisecond ids, not submission order, break the tie.
    await waitUntilPast(a.created_at_ms);
    await client.submit("job");
    const before = Date.now();
    const claimed = await client.store.claim({ queues: ["default"], workerId: "w1" });
    const after = Date.now();
    assert.equal(claimed.length, 1);
    const [row] = claimed;
    assert.deepEqual(Object.keys(row), TASK_COLUMNS);
    assert.equal(row.id, a.id, "oldest first at equal priority");
    assert.equal(row.status, "running");
    assert.equal(row.attempt, 1);
    assert.equal(row.worker_id, "w1");
    assert.ok(row.lease_until_ms >= before + 30_000 && row.lease_until_ms <= after + 30_000);
    assert.equal(row.run_at_ms, a.run_at_ms, "run_at_ms untouched by a claim");
    assert.deepEqual(await client.get(a.id), row);
  });

  test("limit, priority order, and leaseMs", async (t) => {
    const { client } = openClient(t);
    const low = await client.submit("job", { p: "low" }, { priority: 1 });
    const high = await client.submit("job", { p: "high" }, { priority: 10 });
    const mid = await client.submit("job", { p: "mid" }, { priority: 5 });
    const first = await client.store.claim({ queues: ["default"], workerId: "w1", limit: 1, leaseMs: 5_000 });
    assert.deepEqual(
      first.map((x) => x.id),
      [high.id],
    );
    assert.ok(first[0].lease_until_ms <= Date.now() + 5_000);
    const rest = await client.store.claim({ queues: ["default"], workerId: "w1", limit: 10 });
    assert.deepEqual(rest.map((x) => x.id).sort(), [low.id, mid.id].sort());
    assert.deepEqual(await client.store.claim({ queues: ["default"], workerId: "w1", limit: 10 }), []);
  });

  test("queues and names filter; names absent or null mean any name; [] claims nothing", async (t) => {
    const { client } = openClient(t);
    const a = await client.submit("alpha", {}, { queue: "q1" });
    const b = await client.submit("beta", {}, { queue: "q1" });
    const c = await client.submit("alpha", {}, { queue: "q2" });
    const store = client.store;

    assert.deepEqual(await store.claim({ queues: ["q1"], workerId: "w", names: [], limit: 10 }), []);
    assert.equal((await client.get(a.id)).status, "queued");

    const onlyBeta = await store.claim({ queues: ["q1", "q2"], workerId: "w", names: ["beta"], limit: 10 });
    assert.deepEqual(
      onlyBeta.map((x) => x.id),
      [b.id],
    );

    const q2Any = await store.claim({ queues: ["q2"], workerId: "w", names: null, limit: 10 });
    assert.deepEqual(
      q2Any.map((x) => x.id),
      [c.id],
    );

    const q1Any = await store.claim({ queues: ["q1"], workerId: "w", limit: 10 });
    assert.deepEqual(
      q1Any.map((x) => x.id),
      [a.id],
    );
    assert.deepEqual(await store.claim({ queues: ["q1", "q2"], workerId: "w", limit: 10 }), []);
  });

  test("every statement shape claims the same rows", async (t) => {
    const { client } = openClient(t);
    const shapes = [
      { queues: ["q"], names: ["n"] },
      { queues: ["q", "other"], names: ["n"] },
      { queues: ["q"], names: ["n", "x"] },
      { queues: ["q", "other"], names: ["n", "x"] },
    ];
    for (const shape of shapes) {
      const wanted = await client.submit("n", {}, { queue: "q" });
      await client.submit("x2", {}, { queue: "q" });
      const got = await client.store.claim({ ...shape, workerId: "w", limit: 5 });
      assert.deepEqual(
        got.map((x) => x.id),
        [wanted.id],
        JSON.stringify(shape),
      );
    }
  });

  test("a delayed task is not claimable before its run_at_ms", async (t) => {
    const { client } = openClient(t);
    const delayed = await client.submit("job", {}, { runAtDelayMs: 60_000 });
    assert.deepEqual(await client.store.claim({ queues: ["default"], workerId: "w" }), []);
    const soon = await client.submit("soon", {}, { runAtDelayMs: 150 });
    await waitUntilPast(soon.run_at_ms);
    const claimed = await client.store.claim({ queues: ["default"], workerId: "w", limit: 5 });
    assert.deepEqual(
      claimed.map((x) => x.id),
      [soon.id],
    );
    assert.equal((await client.get(delayed.id)).status, "queued");
  });

  test("an expired lease is recovered by the next claim, even one with names: []", async (t) => {
    const { client } = openClient(t);
    const task = await client.submit("job");
    const claimed = await claimTask(client.store, task, { leaseMs: 50 });
    await waitUntilPast(claimed.lease_until_ms);
    assert.deepEqual(await client.store.claim({ queues: ["default"], workerId: "w2", names: [] }), []);
    const recovered = await client.get(task.id);
    assert.equal(recovered.status, "queued");
    assert.equal(recovered.worker_id, null);
    assert.equal(recovered.lease_until_ms, null);
    assert.equal(recovered.attempt, 1, "attempt only changes at claim");
    const again = await client.store.claim({ queues: ["default"], workerId: "w2" });
    assert.equal(again[0].id, task.id);
    assert.equal(again[0].attempt, 2);
    assert.equal(again[0].worker_id, "w2");
  });

  test("an expired lease on the last attempt fails the task with lease_expired", async (t) => {
    const { client } = openClient(t);
    const task = await client.submit("job", {}, { maxAttempts: 1 });
    const claimed = await claimTask(client.store, task, { leaseMs: 50 });
    await waitUntilPast(claimed.lease_until_ms);
    await client.store.claim({ queues: ["elsewhere"], workerId: "w2" });
    const failed = await client.get(task.id);
    assert.equal(failed.status, "failed");
    assert.deepEqual(failed.error, {
      type: "LeaseExpired",
      code: "lease_expired",
      message: "task lease expired and max attempts reached",
      retryable: false,
      details: {},
    });
    assert.equal(failed.worker_id, "w1");
    assert.notEqual(failed.completed_at_ms, null);
  });

  test("the holder of an expired lease can no longer write", async (t) => {
    const { client } = openClient(t);
    const task = await client.submit("job");
    const claimed = await claimTask(client.store, task, { leaseMs: 50 });
    await waitUntilPast(claimed.lease_until_ms);
    await assertLostLease(client.store.heartbeat({ taskId: task.id, workerId: "w1" }), task.id);
    await assertLostLease(client.store.complete({ taskId: task.id, workerId: "w1", result: 1 }), task.id);
  });
});

// ---------------------------------------------------------------------------
describe("heartbeat and heartbeatBatch", () => {
  test("heartbeat extends the lease (default 30 s) and returns the row", async (t) => {
    const { client } = openClient(t);
    const task = await client.submit("job");
    const claimed = await claimTask(client.store, task, { leaseMs: 1_000 });
    const before = Date.now();
    const beat = await client.store.heartbeat({ taskId: task.id, workerId: "w1" });
    assert.deepEqual(Object.keys(beat), TASK_COLUMNS);
    assert.equal(beat.status, "running");
    assert.ok(beat.lease_until_ms >= before + 30_000, "default leaseMs is 30 000");
    assert.ok(beat.lease_until_ms > claimed.lease_until_ms);
    const short = await client.store.heartbeat({ taskId: task.id, workerId: "w1", leaseMs: 2_000 });
    assert.ok(short.lease_until_ms <= Date.now() + 2_000);
    assert.equal(short.cancel_requested_at_ms, null);
    await client.cancel(task.id);
    const flagged = await client.store.heartbeat({ taskId: task.id, workerId: "w1" });
    assert.notEqual(flagged.cancel_requested_at_ms, null, "the reply carries the cancel flag");
  });

  test("heartbeat by a non-owner, on a queued or a missing task → LostLease", async (t) => {
    const { client } = openClient(t);
    const task = await client.submit("job");
    await assertLostLease(client.store.heartbeat({ taskId: task.id, workerId: "w1" }), task.id);
    await claimTask(client.store, task);
    await assertLostLease(client.store.heartbeat({ taskId: task.id, workerId: "intruder" }), task.id);
    await assertLostLease(client.store.heartbeat({ taskId: "task_nope", workerId: "w1" }), "task_nope");
  });

  test("heartbeatBatch returns a Map of owned ids → cancel requested; others are absent", async (t) => {
    const { client } = openClient(t);
    const a = await client.submit("a");
    const b = await client.submit("b");
    const c = await client.submit("c");
    const queued = await client.submit("d");
    await claimTask(client.store, a);
    await claimTask(client.store, b);
    await claimTask(client.store, c, { workerId: "other" });
    await client.cancel(b.id);
    const before = Date.now();
    const map = await client.store.heartbeatBatch({
      taskIds: [a.id, b.id, c.id, queued.id, "task_missing"],
      workerId: "w1",
      leaseMs: 60_000,
    });
    assert.ok(map instanceof Map);
    assert.deepEqual(
      [...map.entries()].sort(),
      [
        [a.id, false],
        [b.id, true],
      ].sort(),
    );
    assert.ok((await client.get(a.id)).lease_until_ms >= before + 60_000, "the lease was renewed");
    assert.ok((await client.get(c.id)).lease_until_ms < before + 60_000, "a foreign task is untouched");
  });

  test("heartbeatBatch with no ids is an empty Map", async (t) => {
    const { client } = openClient(t);
    const map = await client.store.heartbeatBatch({ taskIds: [], workerId: "w1" });
    assert.ok(map instanceof Map);
    assert.equal(map.size, 0);
  });
});

// ---------------------------------------------------------------------------
describe("progress", () => {
  test("sets progress and message; null leaves a field unchanged", async (t) => {
    const { client } = openClient(t);
    const task = await client.submit("job");
    await claimTask(client.store, task);
    const store = client.store;
    let row = await store.progress({ taskId: task.id, workerId: "w1", progress: 0.5, message: "half" });
    assert.equal(row.progress, 0.5);
    assert.equal(row.message, "half");
    assert.equal(row.status, "running");
    row = await store.progress({ taskId: task.id, workerId: "w1", progress: null, message: "still going" });
    assert.equal(row.progress, 0.5);
    assert.equal(row.message, "still going");
    row = await store.progress({ taskId: task.id, workerId: "w1", progress: 0.75, message: null });
    assert.equal(row.progress, 0.75);
    assert.equal(row.message, "still going");
    row = await store.progress({ taskId: task.id, workerId: "w1", progress: undefined, message: undefined });
    assert.equal(row.progress, 0.75);
    assert.equal(row.message, "still going");
    assert.deepEqual(await client.get(task.id), row);
  });

  test("progress by a non-owner → LostLease", async (t) => {
    const { client } = openClient(t);
    const task = await client.submit("job");
    await claimTask(client.store, task);
    await assertLostLease(
      client.store.progress({ taskId: task.id, workerId: "w2", progress: 0.1, message: null }),
      task.id,
    );
    assert.equal((await client.get(task.id)).progress, null);
  });
});

// ---------------------------------------------------------------------------
describe("succeed and complete", () => {
  test("succeed records the result, progress 1, clears the lease, keeps worker_id", async (t) => {
    const { client } = openClient(t);
    const task = await client.submit("job");
    await claimTask(client.store, task);
    await client.store.progress({ taskId: task.id, workerId: "w1", progress: 0.2, message: "msg" });
    const done = await client.store.succeed({ taskId: task.id, workerId: "w1", result: { ok: 1 } });
    assert.equal(done.status, "succeeded");
    assert.deepEqual(done.result, { ok: 1 });
    assert.equal(done.progress, 1);
    assert.equal(done.message, "msg");
    assert.equal(done.lease_until_ms, null);
    assert.equal(done.worker_id, "w1");
    assert.notEqual(done.completed_at_ms, null);
  });

  test("succeed ignores a pending cancel; complete lets the cancel win and drops the result", async (t) => {
    const { client } = openClient(t);
    const raw = await client.submit("raw");
    await claimTask(client.store, raw);
    await client.cancel(raw.id);
    const succeeded = await client.store.succeed({ taskId: raw.id, workerId: "w1", result: "kept" });
    assert.equal(succeeded.status, "succeeded");
    assert.equal(succeeded.result, "kept");

    const normal = await client.submit("normal");
    await claimTask(client.store, normal);
    await client.store.progress({ taskId: normal.id, workerId: "w1", progress: 0.3, message: null });
    await client.cancel(normal.id);
    const canceled = await client.store.complete({ taskId: normal.id, workerId: "w1", result: "dropped" });
    assert.equal(canceled.status, "canceled");
    assert.equal(canceled.result, null);
    assert.equal(canceled.progress, 0.3, "progress unchanged when the cancel wins");
    assert.equal(canceled.lease_until_ms, null);
    assert.notEqual(canceled.completed_at_ms, null);
  });

  test("complete without a cancel succeeds", async (t) => {
    const { client } = openClient(t);
    const task = await client.submit("job");
    await claimTask(client.store, task);
    const done = await client.store.complete({ taskId: task.id, workerId: "w1", result: [1, 2] });
    assert.equal(done.status, "succeeded");
    assert.deepEqual(done.result, [1, 2]);
    assert.equal(done.progress, 1);
  });

  test("finishing twice, or as a non-owner, → LostLease", async (t) => {
    const { client } = openClient(t);
    const task = await client.submit("job");
    await claimTask(client.store, task);
    await assertLostLease(client.store.complete({ taskId: task.id, workerId: "w2", result: 1 }), task.id);
    await assertLostLease(client.store.succeed({ taskId: task.id, workerId: "w2", result: 1 }), task.id);
    await assertLostLease(client.store.fail({ taskId: task.id, workerId: "w2", error: ENVELOPE }), task.id);
    await client.store.complete({ taskId: task.id, workerId: "w1", result: 1 });
    await assertLostLease(client.store.complete({ taskId: task.id, workerId: "w1", result: 2 }), task.id);
    assert.equal((await client.get(task.id)).result, 1);
  });

  test("concurrent completes each get their own row; one non-owner fails alone", async (t) => {
    const { client } = openClient(t);
    const tasks = await Promise.all(Array.from({ length: 32 }, (_, i) => client.submit("job", { i })));
    const claimed = await client.store.claim({ queues: ["default"], workerId: "w1", limit: 32 });
    assert.equal(claimed.length, 32);
    const outcomes = await Promise.allSettled(
      tasks.map((task, i) =>
        client.store.complete({ taskId: task.id, workerId: i === 7 ? "intruder" : "w1", result: { i } }),
      ),
    );
    outcomes.forEach((outcome, i) => {
      if (i === 7) {
        assert.equal(outcome.status, "rejected");
        assert.ok(outcome.reason instanceof LostLease);
        assert.equal(outcome.reason.taskId, tasks[7].id);
      } else {
        assert.equal(outcome.status, "fulfilled", `complete #${i}`);
        assert.equal(outcome.value.id, tasks[i].id);
        assert.deepEqual(outcome.value.result, { i });
      }
    });
    assert.equal((await client.get(tasks[7].id)).status, "running");
  });
});

// ---------------------------------------------------------------------------
describe("fail", () => {
  test("retryable by default: re-queued with the envelope, worker and progress cleared", async (t) => {
    const { client } = openClient(t);
    const task = await client.submit("job");
    await claimTask(client.store, task);
    await client.store.progress({ taskId: task.id, workerId: "w1", progress: 0.4, message: "m" });
    const before = Date.now();
    const row = await client.store.fail({ taskId: task.id, workerId: "w1", error: ENVELOPE });
    assert.equal(row.status, "queued");
    assert.deepEqual(row.error, ENVELOPE);
    assert.equal(row.worker_id, null);
    assert.equal(row.lease_until_ms, null);
    assert.equal(row.progress, null);
    assert.equal(row.message, null);
    assert.equal(row.completed_at_ms, null);
    assert.ok(row.run_at_ms >= before && row.run_at_ms <= Date.now(), "delayMs defaults to 0");
    const again = await client.store.claim({ queues: ["default"], workerId: "w1" });
    assert.equal(again[0].id, task.id, "immediately claimable again");
  });

  test("delayMs pushes run_at_ms out", async (t) => {
    const { client } = openClient(t);
    const task = await client.submit("job");
    await claimTask(client.store, task);
    const before = Date.now();
    const row = await client.store.fail({ taskId: task.id, workerId: "w1", error: ENVELOPE, delayMs: 60_000 });
    assert.equal(row.status, "queued");
    assert.ok(row.run_at_ms >= before + 60_000 && row.run_at_ms <= Date.now() + 60_000);
    assert.deepEqual(await client.store.claim({ queues: ["default"], workerId: "w1" }), []);
  });

  test("retryable: false fails for good; anything else counts as true", async (t) => {
    const { client } = openClient(t);
    const permanent = await client.submit("permanent");
    await claimTask(client.store, permanent);
    const failed = await client.store.fail({
      taskId: permanent.id,
      workerId: "w1",
      error: { ...ENVELOPE, retryable: false },
      retryable: false,
    });
    assert.equal(failed.status, "failed");
    assert.equal(failed.worker_id, "w1");
    assert.notEqual(failed.completed_at_ms, null);

    const truthy = await client.submit("truthy");
    await claimTask(client.store, truthy);
    const requeued = await client.store.fail({ taskId: truthy.id, workerId: "w1", error: ENVELOPE, retryable: 0 });
    assert.equal(requeued.status, "queued", "only the literal false is non-retryable");
  });

  test("the last attempt fails for good even when retryable", async (t) => {
    const { client } = openClient(t);
    const task = await client.submit("job", {}, { maxAttempts: 1 });
    await claimTask(client.store, task);
    const row = await client.store.fail({ taskId: task.id, workerId: "w1", error: ENVELOPE, retryable: true });
    assert.equal(row.status, "failed");
    assert.deepEqual(row.error, ENVELOPE);
  });

  test("a pending cancel wins, and the envelope is still recorded", async (t) => {
    const { client } = openClient(t);
    const task = await client.submit("job");
    await claimTask(client.store, task);
    await client.cancel(task.id);
    const row = await client.store.fail({ taskId: task.id, workerId: "w1", error: ENVELOPE });
    assert.equal(row.status, "canceled");
    assert.deepEqual(row.error, ENVELOPE);
  });

  test("a null or undefined error is stored as {}", async (t) => {
    const { client } = openClient(t);
    for (const error of [null, undefined]) {
      const task = await client.submit(`job-${error}`, {}, { maxAttempts: 1 });
      await claimTask(client.store, task);
      const row = await client.store.fail({ taskId: task.id, workerId: "w1", error });
      assert.equal(row.status, "failed");
      assert.deepEqual(row.error, {});
    }
  });

  test("an unencodable envelope is stored stripped: details {}, message kept", async (t) => {
    const { client } = openClient(t);
    const task = await client.submit("job");
    await claimTask(client.store, task);
    const row = await client.store.fail({
      taskId: task.id,
      workerId: "w1",
      error: { type: "E", code: "c", message: "m", details: { big: 10n } },
      retryable: false,
    });
    assert.equal(row.status, "failed");
    assert.deepEqual(row.error, { type: "E", code: "c", message: "m", retryable: false, details: {} });
    assert.deepEqual(Object.keys(row.error), ["type", "code", "message", "retryable", "details"]);
  });

  test("a stripped envelope takes defaults for missing fields and the effective retryable", async (t) => {
    const { client } = openClient(t);
    const task = await client.submit("job");
    await claimTask(client.store, task);
    const row = await client.store.fail({ taskId: task.id, workerId: "w1", error: { details: { ratio: NaN } } });
    assert.equal(row.status, "queued");
    assert.deepEqual(row.error, { type: "TaskError", code: "task_error", message: "", retryable: true, details: {} });
  });

  test("a TaskError-style envelope with unencodable details keeps its message", async (t) => {
    const { client } = openClient(t);
    const task = await client.submit("job");
    await claimTask(client.store, task);
    const cyclic = {};
    cyclic.self = cyclic;
    const row = await client.store.fail({
      taskId: task.id,
      workerId: "w1",
      error: { type: "TaskError", code: "bad", message: "kept message", retryable: false, details: cyclic },
      retryable: false,
    });
    assert.equal(row.error.message, "kept message");
    assert.deepEqual(row.error.details, {});
    assert.equal(row.error.code, "bad");
  });
});

// ---------------------------------------------------------------------------
describe("SQLiteStore", () => {
  test("protocolVersion() is 1", async (t) => {
    const { client } = openClient(t);
    assert.equal(await client.store.protocolVersion(), 1);
  });

  // Checkpoints copy the log back while writes keep coming, and the log
  // starts over many times in this run: every write must land, and the file
  // must stay readable (a change to the checkpoint schedule once made this
  // exact run fail with SQLITE_CORRUPT at cancel 9,792).
  test("10,000 submits and 10,000 cancels, 64 in flight, all land", async (t) => {
    const { client, dbPath } = openClient(t);
    const n = 10_000;
    const ids = [];
    let next = 0;
    const lanes = (op) =>
      Promise.all(
        Array.from({ length: 64 }, async () => {
          while (next < n) await op(next++);
        }),
      );
    await lanes(async () => ids.push((await client.submit("job", { user: 42, sizes: [64, 128, 256] })).id));
    next = 0;
    await lanes(async (i) => assert.equal((await client.cancel(ids[i]))?.status, "canceled"));
    assert.equal((await client.stats()).default.canceled, n);
    await client.close();
    const reopened = CairnQ.sqlite(dbPath);
    defer(t, () => reopened.close());
    assert.equal((await reopened.stats()).default.canceled, n);
    assert.equal((await reopened.list({ status: "canceled", limit: 1, offset: n - 1 })).length, 1);
  });

  test("TaskStore is abstract; SQLiteStore is one", () => {
    assert.throws(() => new TaskStore());
    assert.ok(new SQLiteStore(":memory:") instanceof TaskStore);
  });

  test("each :memory: store is its own database and creates no files", async (t) => {
    const dir = makeTempDir(t);
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      const a = new CairnQ(new SQLiteStore(":memory:"));
      const b = new CairnQ(new SQLiteStore(":memory:"));
      defer(t, () => a.close());
      defer(t, () => b.close());
      const task = await a.submit("job");
      assert.equal((await a.get(task.id)).id, task.id);
      assert.equal(await b.get(task.id), null);
      assert.deepEqual(await b.stats(), {});
      assert.deepEqual(fs.readdirSync(dir), []);
    } finally {
      process.chdir(cwd);
    }
  });

  test("a file database is switched to WAL mode", async (t) => {
    const { client, dbPath } = openClient(t);
    await client.submit("job");
    await waitFor(() => fs.existsSync(`${dbPath}-wal`), { timeoutMs: 5_000 });
    assert.ok(fs.existsSync(path.join(path.dirname(dbPath), `${path.basename(dbPath)}-wal`)));
  });

  test("busyTimeoutMs bounds the wait for another connection's write lock", async (t) => {
    const dbPath = makeDbPath(t);
    const setup = CairnQ.sqlite(dbPath);
    await setup.connect();
    await setup.close();
    const lock = await holdWriteLock(dbPath);
    let released = false;
    defer(t, () => (released ? undefined : lock.release()));
    const store = new SQLiteStore(dbPath, { busyTimeoutMs: 200 });
    defer(t, () => store.close());
    const started = Date.now();
    const err = await rejectionOf(store.submit({ name: "job", payload: {} }));
    const waited = Date.now() - started;
    assert.match(String(err.code ?? err.message), /SQLITE_BUSY/, `${err.code} ${err.message}`);
    assert.ok(waited >= 150, `gave up after ${waited}ms, before the busy timeout`);
    assert.ok(waited < 20_000, `waited ${waited}ms`);
    released = true;
    await lock.release();
    const task = await store.submit({ name: "job", payload: {} });
    assert.equal((await store.get(task.id)).status, "queued", "works once the lock is gone");
  });

  test("a write blocked by another connection waits while the event loop keeps ticking", async (t) => {
    const dbPath = makeDbPath(t);
    const { client } = openClient(t, { busyTimeoutMs: 30_000 }, dbPath);
    await client.connect();
    const lock = await holdWriteLock(dbPath);
    let released = false;
    defer(t, () => (released ? undefined : lock.release()));
    let settled = false;
    const submitting = client.submit("job", { blocked: true }).finally(() => (settled = true));
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 5);
    try {
      await waitFor(() => ticks >= 20, { timeoutMs: 10_000, message: "the event loop stopped ticking" });
      assert.equal(settled, false, "the submit is still waiting for the lock");
    } finally {
      clearInterval(ticker);
    }
    released = true;
    await lock.release();
    const task = await submitting;
    assert.deepEqual((await client.get(task.id)).payload, { blocked: true });
  });
});
