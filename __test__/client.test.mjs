// CairnQ, the client handle (API.md §2, §4–§7.2, §14.3): construction, submit
// and its options, keyed strategies, reads, cancel/retry/purge/stats/queueDepth,
// the wait family and call, the error classes, and refusing databases it must not
// touch. The worker side is driven by hand through the public store methods.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

import * as esm from "../index.mjs";
import {
  AlreadyExists,
  CairnQ,
  CairnQError,
  EventLoopBlocked,
  LostLease,
  ProtocolVersionMismatch,
  QueueFull,
  SQLiteStore,
  STATUSES,
  SerializationError,
  TaskCanceled,
  TaskError,
  TaskFailed,
  TaskTimeout,
  defineTask,
} from "../index.mjs";
import {
  TASK_COLUMNS,
  claimTask,
  makeDbPath,
  makeTempDir,
  openClient,
  defer,
  rejectionOf,
  runProcess,
  runPython,
  sha256OfFile,
  submitAndFail,
  submitAndSucceed,
  waitFor,
  waitUntilPast,
} from "./helpers.mjs";

const TASK_ID = /^task_[0-7][0-9ABCDEFGHJKMNPQRSTVWXYZ]{25}$/;
const ENVELOPE = {
  type: "ValidationError",
  code: "bad_input",
  message: "field x is required",
  retryable: false,
  details: { field: "x", hints: ["add x"] },
};

function assertPlainError(err, message) {
  assert.ok(err instanceof Error, `expected an Error, got ${err}`);
  assert.equal(err instanceof CairnQError, false, `${err.name} should be a plain Error`);
  assert.equal(err.message, message);
}

/** Sort the way `list` promises: created_at_ms descending, then id descending. */
function newestFirst(tasks) {
  return [...tasks].sort((a, b) =>
    a.created_at_ms !== b.created_at_ms ? b.created_at_ms - a.created_at_ms : a.id < b.id ? 1 : -1,
  );
}

// ---------------------------------------------------------------------------
describe("construction and connection", () => {
  test("CairnQ.sqlite creates missing parent directories on first use, without connect()", async (t) => {
    const dir = makeTempDir(t);
    const dbPath = path.join(dir, "a", "b", "c", "queue.db");
    const client = CairnQ.sqlite(dbPath);
    defer(t, () => client.close());
    assert.equal(fs.existsSync(path.join(dir, "a")), false, "nothing is created before first use");
    const task = await client.submit("job", { n: 1 });
    assert.ok(fs.existsSync(dbPath), "the database file exists after the first operation");
    assert.deepEqual((await client.get(task.id)).payload, { n: 1 });
  });

  test("connect() is optional and idempotent", async (t) => {
    const { client } = openClient(t);
    await client.connect();
    await client.connect();
    const task = await client.submit("job");
    assert.equal((await client.get(task.id)).status, "queued");
  });

  test("new CairnQ(store) wraps exactly that store, exposed as `store`", async (t) => {
    const store = new SQLiteStore(makeDbPath(t));
    const client = new CairnQ(store);
    defer(t, () => client.close());
    assert.equal(client.store, store);
    const task = await client.submit("job");
    assert.equal((await store.get(task.id)).id, task.id, "the client writes through the injected store");
  });

  test("close() then reuse reopens lazily and the data is still there", async (t) => {
    const { client } = openClient(t);
    const first = await client.submit("job", { n: 1 });
    await client.close();
    assert.equal((await client.get(first.id)).id, first.id);
    const second = await client.submit("job", { n: 2 });
    await client.close();
    await client.close(); // closing a closed client is harmless
    const listed = await client.list({ name: "job" });
    assert.deepEqual(listed.map((x) => x.id).sort(), [first.id, second.id].sort());
  });

  test("close() closes an injected store too", async (t) => {
    const dbPath = makeDbPath(t);
    const store = new SQLiteStore(dbPath);
    const client = new CairnQ(store);
    defer(t, () => store.close());
    await client.submit("job");
    await client.close();
    // With the store closed, SQLite can take an exclusive lock from another process.
    const out = await runPython(
      [
        "import sqlite3, sys",
        "c = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=0)",
        "c.execute('BEGIN EXCLUSIVE')",
        "c.execute('ROLLBACK')",
        "sys.stdout.write('ok')",
      ].join("\n"),
      [dbPath],
    );
    assert.equal(out, "ok");
  });

  test("CairnQ.sqlite accepts busyTimeoutMs alongside client options", async (t) => {
    const { client } = openClient(t, { busyTimeoutMs: 1234, maxQueueWaitMs: 5 });
    // maxQueueWaitMs without maxQueueDepth is ignored: submits are not gated.
    const tasks = await Promise.all(Array.from({ length: 5 }, () => client.submit("job")));
    assert.equal(tasks.length, 5);
    assert.ok(client.store instanceof SQLiteStore);
  });
});

// ---------------------------------------------------------------------------
describe("submit", () => {
  test("a default task has the 23 columns in table order and the documented defaults", async (t) => {
    const { client } = openClient(t);
    const before = Date.now();
    const task = await client.submit("email.send");
    const after = Date.now();
    assert.deepEqual(Object.keys(task), TASK_COLUMNS);
    assert.match(task.id, TASK_ID);
    assert.equal(task.name, "email.send");
    assert.equal(task.queue, "default");
    assert.equal(task.status, "queued");
    assert.deepEqual(task.payload, {});
    assert.equal(task.result, null);
    assert.equal(task.error, null);
    assert.deepEqual(task.metadata, {});
    assert.equal(task.progress, null);
    assert.equal(task.message, null);
    assert.equal(task.attempt, 0);
    assert.equal(task.max_attempts, 3);
    assert.equal(task.priority, 0);
    assert.equal(task.worker_id, null);
    assert.equal(task.lease_until_ms, null);
    assert.equal(task.cancel_requested_at_ms, null);
    assert.equal(task.parent_id, null);
    assert.equal(task.root_id, task.id, "a top-level task is its own root");
    assert.equal(task.correlation_id, null);
    assert.equal(task.completed_at_ms, null);
    assert.equal(typeof task.created_at_ms, "number");
    assert.ok(task.created_at_ms >= before && task.created_at_ms <= after);
    assert.equal(task.updated_at_ms, task.created_at_ms);
    assert.equal(task.run_at_ms, task.created_at_ms);
    assert.deepEqual(await client.get(task.id), task, "get returns the same row");
    assert.deepEqual(Object.keys(await client.get(task.id)), TASK_COLUMNS);
  });

  test("every submit option lands in its column", async (t) => {
    const { client } = openClient(t);
    const task = await client.submit(
      "report.build",
      { report: 7 },
      {
        queue: "reports",
        key: "report-7",
        conflict: "reuse",
        maxAttempts: 5,
        priority: 9,
        metadata: { requestedBy: "ana" },
        parentId: "task_PARENT",
        rootId: "task_ROOT",
        correlationId: "req-42",
        runAtDelayMs: 60_000,
      },
    );
    assert.equal(task.queue, "reports");
    assert.deepEqual(task.payload, { report: 7 });
    assert.equal(task.max_attempts, 5);
    assert.equal(task.priority, 9);
    assert.deepEqual(task.metadata, { requestedBy: "ana" });
    assert.equal(task.parent_id, "task_PARENT");
    assert.equal(task.root_id, "task_ROOT");
    assert.equal(task.correlation_id, "req-42");
    assert.equal(task.run_at_ms, task.created_at_ms + 60_000);
    assert.deepEqual(await client.getByKey("report-7"), task);
  });

  test("null options mean 'use the default'", async (t) => {
    const { client } = openClient(t);
    const task = await client.submit("job", { a: 1 }, {
      queue: null,
      key: null,
      conflict: null,
      maxAttempts: null,
      priority: null,
      metadata: null,
      parentId: null,
      rootId: null,
      correlationId: null,
      runAtDelayMs: null,
    });
    assert.equal(task.queue, "default");
    assert.equal(task.max_attempts, 3);
    assert.equal(task.priority, 0);
    assert.deepEqual(task.metadata, {});
    assert.equal(task.root_id, task.id);
    assert.equal(task.run_at_ms, task.created_at_ms);
  });

  test("a TaskDef is accepted wherever a name is", async (t) => {
    const { client } = openClient(t);
    const def = defineTask("invoice.render");
    assert.deepEqual(def, { name: "invoice.render" });
    const task = await client.submit(def, { invoice: 1 });
    assert.equal(task.name, "invoice.render");
    assert.deepEqual(task.payload, { invoice: 1 });
  });

  test("ids are unique and root_id defaults per task", async (t) => {
    const { client } = openClient(t);
    const tasks = await Promise.all(Array.from({ length: 50 }, () => client.submit("job")));
    assert.equal(new Set(tasks.map((x) => x.id)).size, 50);
    for (const task of tasks) assert.equal(task.root_id, task.id);
  });

  test("an empty string is a real key", async (t) => {
    const { client } = openClient(t);
    const task = await client.submit("job", {}, { key: "" });
    assert.equal((await client.getByKey("")).id, task.id);
    const again = await client.submit("job", {}, { key: "" });
    assert.equal(again.id, task.id, "reuse hit on the empty-string key");
  });

  describe("validation: plain Error, exact message, nothing written", () => {
    const cases = [
      ["an unknown conflict strategy (without a key)", { conflict: "overwrite" }, "unknown conflict strategy: overwrite"],
      ["an unknown conflict strategy (with a key)", { key: "k", conflict: "nope" }, "unknown conflict strategy: nope"],
      ["maxAttempts 0", { maxAttempts: 0 }, "maxAttempts must be >= 1, got 0"],
      ["maxAttempts 0.5", { maxAttempts: 0.5 }, "maxAttempts must be >= 1, got 0.5"],
      ["maxAttempts -3", { key: "k", maxAttempts: -3 }, "maxAttempts must be >= 1, got -3"],
      ["runAtDelayMs -1", { runAtDelayMs: -1 }, "runAtDelayMs must be >= 0, got -1"],
      ["runAtDelayMs -0.5", { key: "k", runAtDelayMs: -0.5 }, "runAtDelayMs must be >= 0, got -0.5"],
    ];
    for (const [label, opts, message] of cases) {
      test(label, async (t) => {
        const { client } = openClient(t);
        const err = await rejectionOf(client.submit("job", { x: 1 }, opts));
        assertPlainError(err, message);
        assert.deepEqual(await client.stats(), {});
        assert.deepEqual(await client.list(), []);
        assert.equal(await client.getByKey("k"), null);
      });
    }

    test("priority and non-integer numbers are not validated", async (t) => {
      const { client } = openClient(t);
      const task = await client.submit("job", {}, { priority: -5, maxAttempts: 1 });
      assert.equal(task.priority, -5);
      assert.equal(task.max_attempts, 1);
    });
  });
});

// ---------------------------------------------------------------------------
describe("keyed submit strategies", () => {
  test("reuse (the default) returns a live task unchanged", async (t) => {
    const { client } = openClient(t);
    const first = await client.submit("job", { v: 1 }, { key: "k" });
    const second = await client.submit("job", { v: 2 }, { key: "k" });
    const explicit = await client.submit("job", { v: 3 }, { key: "k", conflict: "reuse" });
    assert.deepEqual(second, first);
    assert.deepEqual(explicit, first);
    assert.equal((await client.list()).length, 1);
  });

  test("reuse returns a running task unchanged", async (t) => {
    const { client } = openClient(t);
    const first = await client.submit("job", {}, { key: "k" });
    const running = await claimTask(client.store, first);
    const again = await client.submit("job", {}, { key: "k" });
    assert.deepEqual(again, running);
  });

  test("reuse creates a new task once the old one succeeded, failed or was canceled", async (t) => {
    const { client } = openClient(t);
    const succeeded = await submitAndSucceed(client, "job", { ok: 1 }, { key: "k" });
    const afterSuccess = await client.submit("job", { v: 2 }, { key: "k" });
    assert.notEqual(afterSuccess.id, succeeded.id);
    assert.equal(afterSuccess.status, "queued");
    assert.equal((await client.getByKey("k")).id, afterSuccess.id, "the key now points at the new task");
    assert.deepEqual(await client.get(succeeded.id), succeeded, "the old task is untouched");

    await client.cancel(afterSuccess.id);
    const afterCancel = await client.submit("job", { v: 3 }, { key: "k" });
    assert.notEqual(afterCancel.id, afterSuccess.id);

    await claimTask(client.store, afterCancel);
    await client.store.fail({ taskId: afterCancel.id, workerId: "w1", error: ENVELOPE, retryable: false });
    const afterFail = await client.submit("job", { v: 4 }, { key: "k" });
    assert.notEqual(afterFail.id, afterCancel.id);
    assert.equal((await client.list()).length, 4);
  });

  test("reuse-succeeded returns a succeeded task with its result, but not a failed one", async (t) => {
    const { client } = openClient(t);
    const done = await submitAndSucceed(client, "answer", { answer: 42 }, { key: "ok" });
    const hit = await client.submit("answer", {}, { key: "ok", conflict: "reuse-succeeded" });
    assert.equal(hit.id, done.id);
    assert.equal(hit.status, "succeeded");
    assert.deepEqual(hit.result, { answer: 42 });

    const live = await client.submit("live", {}, { key: "live" });
    const liveHit = await client.submit("live", {}, { key: "live", conflict: "reuse-succeeded" });
    assert.equal(liveHit.id, live.id);

    const failed = await submitAndFail(client, "broken", { key: "bad" });
    const fresh = await client.submit("broken", {}, { key: "bad", conflict: "reuse-succeeded" });
    assert.notEqual(fresh.id, failed.id);
    assert.equal(fresh.status, "queued");
  });

  test("reject raises AlreadyExists for an existing task of any status and writes nothing", async (t) => {
    const { client } = openClient(t);
    const queued = await client.submit("queued.job", {}, { key: "q" });
    const done = await submitAndSucceed(client, "done.job", {}, { key: "s" });
    const failed = await submitAndFail(client, "failed.job", { key: "f" });
    const before = await client.stats();
    for (const [key, existing] of [
      ["q", queued],
      ["s", done],
      ["f", failed],
    ]) {
      const err = await rejectionOf(client.submit("job", { new: true }, { key, conflict: "reject" }));
      assert.ok(err instanceof AlreadyExists, `${key}: ${err}`);
      assert.ok(err instanceof CairnQError);
      assert.equal(err.name, "AlreadyExists");
      assert.equal(err.key, key);
      assert.equal(err.message, `task with key ${key} already exists`);
      assert.equal((await client.getByKey(key)).id, existing.id);
    }
    assert.deepEqual(await client.stats(), before);
    const fresh = await client.submit("job", {}, { key: "unused", conflict: "reject" });
    assert.equal((await client.getByKey("unused")).id, fresh.id);
  });

  test("replace cancels a queued task and points the key at the new one", async (t) => {
    const { client } = openClient(t);
    const old = await client.submit("job", { v: 1 }, { key: "k" });
    const replacement = await client.submit("job", { v: 2 }, { key: "k", conflict: "replace" });
    assert.notEqual(replacement.id, old.id);
    assert.deepEqual(replacement.payload, { v: 2 });
    const oldNow = await client.get(old.id);
    assert.equal(oldNow.status, "canceled");
    assert.notEqual(oldNow.completed_at_ms, null);
    assert.equal((await client.getByKey("k")).id, replacement.id);
  });

  test("replace only flags a running task for cancellation", async (t) => {
    const { client } = openClient(t);
    const old = await client.submit("job", {}, { key: "k" });
    await claimTask(client.store, old);
    const replacement = await client.submit("job", {}, { key: "k", conflict: "replace" });
    const oldNow = await client.get(old.id);
    assert.equal(oldNow.status, "running");
    assert.notEqual(oldNow.cancel_requested_at_ms, null);
    assert.equal((await client.getByKey("k")).id, replacement.id);
  });

  test("replace leaves a terminal task untouched", async (t) => {
    const { client } = openClient(t);
    const done = await submitAndSucceed(client, "job", { r: 1 }, { key: "k" });
    const replacement = await client.submit("job", {}, { key: "k", conflict: "replace" });
    assert.notEqual(replacement.id, done.id);
    assert.deepEqual(await client.get(done.id), done);
  });

  test("20 concurrent reuse submits against a finished key collapse onto one new task", async (t) => {
    const { client } = openClient(t);
    const done = await submitAndSucceed(client, "job", {}, { key: "hot" });
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => client.submit("job", { i }, { key: "hot" })),
    );
    const ids = new Set(results.map((x) => x.id));
    assert.equal(ids.size, 1, `expected one task, got ${ids.size}`);
    const [newId] = ids;
    assert.notEqual(newId, done.id);
    assert.equal((await client.getByKey("hot")).id, newId);
    assert.equal((await client.list({ name: "job" })).length, 2);
  });

  test("two SQLiteStores on one file in one process submit keyed tasks concurrently", async (t) => {
    const dbPath = makeDbPath(t);
    const a = new CairnQ(new SQLiteStore(dbPath));
    const b = new CairnQ(new SQLiteStore(dbPath));
    defer(t, () => a.close());
    defer(t, () => b.close());
    await Promise.all([a.connect(), b.connect()]);
    const submits = [];
    for (let i = 0; i < 20; i++) {
      const client = i % 2 === 0 ? a : b;
      submits.push(client.submit("shared", { i }, { key: "same-key" }));
      submits.push(client.submit("own", { i }, { key: `own-${i}` }));
    }
    const results = await Promise.all(submits);
    const shared = results.filter((x) => x.name === "shared");
    const own = results.filter((x) => x.name === "own");
    assert.equal(new Set(shared.map((x) => x.id)).size, 1, "same key → one task across both stores");
    assert.equal(new Set(own.map((x) => x.id)).size, 20, "distinct keys → distinct tasks");
    assert.equal((await a.list({ limit: 1000 })).length, 21);
    assert.deepEqual(await a.stats(), await b.stats());
    for (let i = 0; i < 20; i++) {
      assert.equal((await b.getByKey(`own-${i}`)).payload.i, i);
    }
  });
});

// ---------------------------------------------------------------------------
describe("get, getByKey and list", () => {
  test("get and getByKey return null for what does not exist", async (t) => {
    const { client } = openClient(t);
    assert.equal(await client.get("task_01HZZZZZZZZZZZZZZZZZZZZZZZ"), null);
    assert.equal(await client.getByKey("never-used"), null);
  });

  test("getByKey follows the key to the task it currently points at", async (t) => {
    const { client } = openClient(t);
    const first = await client.submit("job", {}, { key: "k" });
    assert.equal((await client.getByKey("k")).id, first.id);
    const second = await client.submit("job", {}, { key: "k", conflict: "replace" });
    assert.deepEqual(await client.getByKey("k"), second);
  });

  test("each filter narrows by equality and null means no filter", async (t) => {
    const { client } = openClient(t);
    const a = await client.submit("alpha", {}, { queue: "q1", correlationId: "c1" });
    const b = await client.submit("beta", {}, { queue: "q2", correlationId: "c1", rootId: a.id, parentId: a.id });
    const c = await client.submit("alpha", {}, { queue: "q2" });
    await claimTask(client.store, c);
    const ids = async (input) => (await client.list(input)).map((x) => x.id).sort();

    assert.deepEqual(await ids({ status: "running" }), [c.id]);
    assert.deepEqual(await ids({ status: "queued" }), [a.id, b.id].sort());
    assert.deepEqual(await ids({ status: "failed" }), []);
    assert.deepEqual(await ids({ queue: "q2" }), [b.id, c.id].sort());
    assert.deepEqual(await ids({ name: "alpha" }), [a.id, c.id].sort());
    assert.deepEqual(await ids({ rootId: a.id }), [a.id, b.id].sort());
    assert.deepEqual(await ids({ correlationId: "c1" }), [a.id, b.id].sort());
    assert.deepEqual(await ids({ name: "alpha", queue: "q2" }), [c.id]);
    assert.deepEqual(await ids({ name: "alpha", status: "queued", queue: "q2" }), []);
    assert.deepEqual(
      await ids({ status: null, queue: null, name: null, rootId: null, correlationId: null }),
      [a.id, b.id, c.id].sort(),
    );
    assert.deepEqual(await ids(), [a.id, b.id, c.id].sort());
  });

  test("order is newest first with the id as tie-break, and limit/offset page through it", async (t) => {
    const { client } = openClient(t);
    // Concurrent submits share milliseconds, which exercises the id tie-break.
    const created = [];
    for (let round = 0; round < 3; round++) {
      created.push(...(await Promise.all(Array.from({ length: 10 }, (_, i) => client.submit("job", { round, i })))));
      const newest = Math.max(...created.map((x) => x.created_at_ms));
      await waitUntilPast(newest);
    }
    const expected = newestFirst(created).map((x) => x.id);
    const listed = (await client.list()).map((x) => x.id);
    assert.deepEqual(listed, expected);
    assert.deepEqual((await client.list({ limit: 7 })).map((x) => x.id), expected.slice(0, 7));
    assert.deepEqual((await client.list({ limit: 7, offset: 5 })).map((x) => x.id), expected.slice(5, 12));
    assert.deepEqual((await client.list({ offset: 28 })).map((x) => x.id), expected.slice(28));
    assert.deepEqual(await client.list({ offset: 30 }), []);
    assert.deepEqual(await client.list({ limit: 0 }), []);
  });

  test("the default limit is 100", async (t) => {
    const { client } = openClient(t);
    await Promise.all(Array.from({ length: 105 }, () => client.submit("job")));
    assert.equal((await client.list()).length, 100);
    assert.equal((await client.list({ limit: 200 })).length, 105);
  });

  test("rows come back with the 23 columns in table order", async (t) => {
    const { client } = openClient(t);
    await client.submit("job");
    const [row] = await client.list();
    assert.deepEqual(Object.keys(row), TASK_COLUMNS);
  });

  test("an unknown status filter is a plain Error", async (t) => {
    const { client } = openClient(t);
    assertPlainError(await rejectionOf(client.list({ status: "done" })), "unknown status filter: done");
  });

  test("negative limit or offset is a plain Error echoing the raw inputs", async (t) => {
    const { client } = openClient(t);
    assertPlainError(
      await rejectionOf(client.list({ limit: -1 })),
      "limit/offset must be >= 0, got limit=-1 offset=undefined",
    );
    assertPlainError(
      await rejectionOf(client.list({ offset: -2 })),
      "limit/offset must be >= 0, got limit=undefined offset=-2",
    );
    assertPlainError(
      await rejectionOf(client.list({ limit: 5, offset: -1 })),
      "limit/offset must be >= 0, got limit=5 offset=-1",
    );
  });
});

// ---------------------------------------------------------------------------
describe("cancel and cancelByKey", () => {
  test("a queued task is canceled at once", async (t) => {
    const { client } = openClient(t);
    const task = await client.submit("job");
    const canceled = await client.cancel(task.id);
    assert.equal(canceled.id, task.id);
    assert.equal(canceled.status, "canceled");
    assert.equal(canceled.cancel_requested_at_ms, null);
    assert.notEqual(canceled.completed_at_ms, null);
    assert.deepEqual(await client.get(task.id), canceled);
  });

  test("a running task only gets the cooperative cancel flag", async (t) => {
    const { client } = openClient(t);
    const task = await client.submit("job");
    await claimTask(client.store, task);
    const flagged = await client.cancel(task.id);
    assert.equal(flagged.status, "running");
    assert.notEqual(flagged.cancel_requested_at_ms, null);
    assert.equal(flagged.completed_at_ms, null);
    const done = await client.store.complete({ taskId: task.id, workerId: "w1", result: { ignored: true } });
    assert.equal(done.status, "canceled", "cancel wins at completion");
  });

  test("a terminal or missing task gives null and stays unchanged", async (t) => {
    const { client } = openClient(t);
    const done = await submitAndSucceed(client, "job");
    assert.equal(await client.cancel(done.id), null);
    assert.deepEqual(await client.get(done.id), done);
    assert.equal(await client.cancel("task_01HZZZZZZZZZZZZZZZZZZZZZZZ"), null);
    const canceled = await client.submit("job");
    await client.cancel(canceled.id);
    assert.equal(await client.cancel(canceled.id), null);
  });

  test("cancelByKey cancels what the key points at; unknown or terminal → null", async (t) => {
    const { client } = openClient(t);
    const task = await client.submit("job", {}, { key: "k" });
    const canceled = await client.cancelByKey("k");
    assert.equal(canceled.id, task.id);
    assert.equal(canceled.status, "canceled");
    assert.equal(await client.cancelByKey("k"), null);
    assert.equal(await client.cancelByKey("unknown"), null);

    const running = await client.submit("job", {}, { key: "r" });
    await claimTask(client.store, running);
    const flagged = await client.cancelByKey("r");
    assert.equal(flagged.status, "running");
    assert.notEqual(flagged.cancel_requested_at_ms, null);
  });
});

// ---------------------------------------------------------------------------
describe("retry and retryByKey", () => {
  test("a failed task is re-queued with its attempt kept; resetAttempt zeroes it", async (t) => {
    const { client } = openClient(t);
    const failed = await submitAndFail(client, "job");
    assert.equal(failed.status, "failed");
    assert.equal(failed.attempt, 1);
    const retried = await client.retry(failed.id);
    assert.equal(retried.status, "queued");
    assert.equal(retried.attempt, 1);
    assert.equal(retried.error, null);
    assert.equal(retried.worker_id, null);
    assert.equal(retried.completed_at_ms, null);
    assert.equal(retried.lease_until_ms, null);
    assert.ok(retried.run_at_ms >= failed.completed_at_ms);

    const again = await submitAndFail(client, "job2");
    const reset = await client.retry(again.id, { resetAttempt: true });
    assert.equal(reset.status, "queued");
    assert.equal(reset.attempt, 0);
  });

  test("a canceled task can be retried", async (t) => {
    const { client } = openClient(t);
    const task = await client.submit("job");
    await client.cancel(task.id);
    const retried = await client.retry(task.id);
    assert.equal(retried.status, "queued");
    assert.equal(retried.cancel_requested_at_ms, null);
  });

  test("queued, running, succeeded and missing tasks give null", async (t) => {
    const { client } = openClient(t);
    const queued = await client.submit("job");
    assert.equal(await client.retry(queued.id), null);
    const running = await client.submit("run");
    await claimTask(client.store, running);
    assert.equal(await client.retry(running.id), null);
    const done = await submitAndSucceed(client, "ok");
    assert.equal(await client.retry(done.id), null);
    assert.equal(await client.retry("task_01HZZZZZZZZZZZZZZZZZZZZZZZ"), null);
    assert.equal((await client.get(queued.id)).status, "queued");
    assert.equal((await client.get(running.id)).status, "running");
    assert.equal((await client.get(done.id)).status, "succeeded");
  });

  test("retryByKey re-queues the keyed task; resetAttempt applies; unknown key → null", async (t) => {
    const { client } = openClient(t);
    const failed = await submitAndFail(client, "job", { key: "k" });
    const retried = await client.retryByKey("k", { resetAttempt: true });
    assert.equal(retried.id, failed.id);
    assert.equal(retried.status, "queued");
    assert.equal(retried.attempt, 0);
    assert.equal(await client.retryByKey("k"), null, "queued now: not retryable");
    assert.equal(await client.retryByKey("unknown"), null);
    const canceled = await client.submit("job", {}, { key: "c" });
    await client.cancel(canceled.id);
    const again = await client.retryByKey("c");
    assert.equal(again.status, "queued");
    assert.equal(again.attempt, 0);
  });
});

// ---------------------------------------------------------------------------
describe("purge", () => {
  test("validation errors are plain Errors", async (t) => {
    const { client } = openClient(t);
    assertPlainError(await rejectionOf(client.purge({ olderThanMs: -1 })), "olderThanMs must be >= 0, got -1");
    assertPlainError(await rejectionOf(client.purge({ limit: 0 })), "limit must be >= 1, got 0");
    assertPlainError(await rejectionOf(client.purge({ limit: -5 })), "limit must be >= 1, got -5");
  });

  test("with defaults it deletes every finished task and keeps live ones", async (t) => {
    const { client } = openClient(t);
    const ok = await submitAndSucceed(client, "ok");
    const bad = await submitAndFail(client, "bad");
    const gone = await client.submit("gone");
    const canceled = await client.cancel(gone.id);
    const queued = await client.submit("queued");
    const running = await client.submit("running");
    await claimTask(client.store, running);
    await waitUntilPast(Math.max(ok.completed_at_ms, bad.completed_at_ms, canceled.completed_at_ms));
    const deleted = await client.purge();
    assert.deepEqual([...deleted].sort(), [ok.id, bad.id, canceled.id].sort());
    for (const id of deleted) assert.equal(await client.get(id), null);
    assert.equal((await client.get(queued.id)).status, "queued");
    assert.equal((await client.get(running.id)).status, "running");
    assert.deepEqual(await client.purge(), []);
  });

  test("only tasks completed strictly before now − olderThanMs are deleted", async (t) => {
    const { client } = openClient(t);
    const older = await submitAndSucceed(client, "older");
    await waitFor(() => Date.now() > older.completed_at_ms + 400, { timeoutMs: 5_000 });
    const newer = await submitAndSucceed(client, "newer");
    assert.deepEqual(await client.purge({ olderThanMs: 60_000 }), [], "nothing is a minute old");
    const deleted = await client.purge({ olderThanMs: 200 });
    assert.deepEqual(deleted, [older.id]);
    assert.notEqual(await client.get(newer.id), null);
  });

  test("limit caps one call, oldest completion first; looping drains the rest", async (t) => {
    const { client } = openClient(t);
    const finished = [];
    for (let i = 0; i < 5; i++) {
      const done = await submitAndSucceed(client, "job", { i });
      finished.push(done);
      await waitUntilPast(done.completed_at_ms);
    }
    const first = await client.purge({ limit: 2 });
    assert.deepEqual(first, [finished[0].id, finished[1].id]);
    const second = await client.purge({ limit: 2 });
    assert.deepEqual(second, [finished[2].id, finished[3].id]);
    const third = await client.purge({ limit: 2 });
    assert.deepEqual(third, [finished[4].id]);
    assert.deepEqual(await client.stats(), {});
  });

  test("purging a keyed task frees its key", async (t) => {
    const { client, dbPath } = openClient(t);
    const done = await submitAndSucceed(client, "job", {}, { key: "k" });
    await waitUntilPast(done.completed_at_ms);
    assert.deepEqual(await client.purge(), [done.id]);
    assert.equal(await client.getByKey("k"), null);
    const fresh = await client.submit("job", {}, { key: "k", conflict: "reject" });
    assert.equal((await client.getByKey("k")).id, fresh.id);
    await client.close();
    const keyRows = await runPython(
      [
        "import sqlite3, sys",
        "c = sqlite3.connect(sys.argv[1])",
        "sys.stdout.write(repr(c.execute('SELECT key, task_id FROM cairnq_task_keys').fetchall()))",
      ].join("\n"),
      [dbPath],
    );
    assert.equal(keyRows, `[('k', '${fresh.id}')]`);
  });
});

// ---------------------------------------------------------------------------
describe("stats", () => {
  test("an empty database gives {}", async (t) => {
    const { client } = openClient(t);
    assert.deepEqual(await client.stats(), {});
  });

  test("per queue, zero-filled, statuses in STATUSES order, queues ascending", async (t) => {
    const { client } = openClient(t);
    await client.submit("job", {}, { queue: "zeta" });
    await client.submit("job", {}, { queue: "alpha" });
    await client.submit("job", {}, { queue: "alpha" });
    const running = await client.submit("run", {}, { queue: "mid" });
    await claimTask(client.store, running);
    await submitAndSucceed(client, "ok", {}, { queue: "mid" });
    await submitAndFail(client, "bad", { queue: "mid" });
    const c = await client.submit("job", {}, { queue: "mid" });
    await client.cancel(c.id);

    const stats = await client.stats();
    assert.deepEqual(Object.keys(stats), ["alpha", "mid", "zeta"]);
    for (const queue of Object.keys(stats)) assert.deepEqual(Object.keys(stats[queue]), [...STATUSES]);
    assert.deepEqual(stats, {
      alpha: { queued: 2, running: 0, succeeded: 0, failed: 0, canceled: 0 },
      mid: { queued: 0, running: 1, succeeded: 1, failed: 1, canceled: 1 },
      zeta: { queued: 1, running: 0, succeeded: 0, failed: 0, canceled: 0 },
    });
    for (const counts of Object.values(stats)) {
      for (const n of Object.values(counts)) assert.equal(typeof n, "number");
    }
  });

  test("a queue disappears once all its rows are purged", async (t) => {
    const { client } = openClient(t);
    const done = await submitAndSucceed(client, "ok", {}, { queue: "temp" });
    await client.submit("job", {}, { queue: "kept" });
    await waitUntilPast(done.completed_at_ms);
    await client.purge();
    assert.deepEqual(Object.keys(await client.stats()), ["kept"]);
  });
});

// ---------------------------------------------------------------------------
describe("queueDepth", () => {
  test("headroom counts queued rows (delayed included), not running ones", async (t) => {
    const { client } = openClient(t);
    await client.submit("job", {}, { queue: "q" });
    await client.submit("job", {}, { queue: "q", runAtDelayMs: 60_000 });
    const running = await client.submit("run", {}, { queue: "q" });
    await claimTask(client.store, running);
    assert.equal(await client.queueDepth("q", 5), 3);
    assert.equal(await client.queueDepth("q", 2), 0);
    assert.equal(await client.queueDepth("q", 1), 0, "never negative");
    assert.equal(await client.queueDepth("other", 5), 5);
    assert.equal(await client.queueDepth("q", 0), 0);
  });

  test("a non-integer or negative maxDepth is a plain Error", async (t) => {
    const { client } = openClient(t);
    assertPlainError(
      await rejectionOf(client.queueDepth("q", 1.5)),
      "maxDepth must be a non-negative integer, got 1.5",
    );
    assertPlainError(
      await rejectionOf(client.queueDepth("q", -1)),
      "maxDepth must be a non-negative integer, got -1",
    );
  });
});

// ---------------------------------------------------------------------------
describe("wait and waitByKey", () => {
  test("resolves with the task for every terminal status, without throwing", async (t) => {
    const { client } = openClient(t);
    const ok = await submitAndSucceed(client, "ok", { r: 1 });
    const bad = await submitAndFail(client, "bad");
    const c = await client.submit("c");
    await client.cancel(c.id);
    assert.deepEqual(await client.wait(ok.id), ok);
    assert.equal((await client.wait(bad.id)).status, "failed");
    assert.equal((await client.wait(c.id)).status, "canceled");
  });

  test("resolves once the task finishes while it waits", async (t) => {
    const { client } = openClient(t);
    const task = await client.submit("job");
    let settled = false;
    const waiting = client.wait(task.id, { timeoutMs: 20_000, pollMs: 20 }).finally(() => (settled = true));
    await claimTask(client.store, task);
    assert.equal(settled, false);
    await client.store.complete({ taskId: task.id, workerId: "w1", result: { done: true } });
    const done = await waiting;
    assert.equal(done.status, "succeeded");
    assert.deepEqual(done.result, { done: true });
  });

  test("timeoutMs: 0 reads exactly once", async (t) => {
    const { client } = openClient(t);
    const done = await submitAndSucceed(client, "ok");
    assert.equal((await client.wait(done.id, { timeoutMs: 0 })).id, done.id);
    const queued = await client.submit("pending.job", {}, { queue: "slow" });
    const err = await rejectionOf(client.wait(queued.id, { timeoutMs: 0 }));
    assert.ok(err instanceof TaskTimeout);
    assert.equal(
      err.message,
      `task ${queued.id} did not finish within 0ms: never claimed by a worker — is a worker running with a handler for 'pending.job' on queue 'slow', against this same database?`,
    );
    assert.equal(err.taskId, queued.id);
    assert.equal(err.key, null);
    assert.equal(err.task.status, "queued");
    assert.deepEqual(await client.get(queued.id), queued, "waiting never modifies the task");
  });

  test("TaskTimeout.task is the last snapshot as a task row, columns in table order", async (t) => {
    const { client } = openClient(t);
    const queued = await client.submit("job", { a: [1, { b: 2 }] }, { metadata: { m: 1 } });
    const err = await rejectionOf(client.wait(queued.id, { timeoutMs: 0 }));
    assert.deepEqual(err.task, queued);
    assert.deepEqual(Object.keys(err.task), TASK_COLUMNS);
  });

  test("a missing id is polled until the deadline, then TaskTimeout with task null", async (t) => {
    const { client } = openClient(t);
    const started = Date.now();
    const err = await rejectionOf(client.wait("task_missing", { timeoutMs: 200, pollMs: 20 }));
    assert.ok(Date.now() - started >= 150, "it waited for (about) the timeout");
    assert.ok(err instanceof TaskTimeout);
    assert.ok(err instanceof CairnQError);
    assert.equal(err.name, "TaskTimeout");
    assert.equal(err.taskId, "task_missing");
    assert.equal(err.task, null);
    assert.equal(err.key, null);
    assert.equal(
      err.message,
      "task task_missing did not finish within 200ms: task not found — wrong database file, or already purged?",
    );
  });

  test("the timeout message describes a running task, with or without a cancel request", async (t) => {
    const { client } = openClient(t);
    const task = await client.submit("job", {}, { maxAttempts: 4 });
    await claimTask(client.store, task);
    const running = await rejectionOf(client.wait(task.id, { timeoutMs: 0 }));
    assert.equal(running.message, `task ${task.id} did not finish within 0ms: still running (attempt 1/4)`);
    assert.equal(running.task.status, "running");
    await client.cancel(task.id);
    const cancelling = await rejectionOf(client.wait(task.id, { timeoutMs: 0 }));
    assert.equal(
      cancelling.message,
      `task ${task.id} did not finish within 0ms: cancel requested, waiting for the handler to observe it`,
    );
  });

  test("the timeout message describes a re-queued task and its next run", async (t) => {
    const { client } = openClient(t);
    const task = await client.submit("job");
    await claimTask(client.store, task);
    await client.store.fail({ taskId: task.id, workerId: "w1", error: ENVELOPE, retryable: true, delayMs: 60_000 });
    const err = await rejectionOf(client.wait(task.id, { timeoutMs: 0 }));
    assert.match(
      err.message,
      new RegExp(`^task ${task.id} did not finish within 0ms: still queued \\(attempt 1/3\\), next run in ~\\d+ms$`),
    );
    const next = Number(err.message.match(/~(\d+)ms$/)[1]);
    assert.ok(next > 50_000 && next <= 60_000, `next run in ${next}ms`);
  });

  test("waitByKey on a key with no task times out with the key as subject and taskId", async (t) => {
    const { client } = openClient(t);
    const err = await rejectionOf(client.waitByKey("nobody", { timeoutMs: 100, pollMs: 10 }));
    assert.ok(err instanceof TaskTimeout);
    assert.equal(err.taskId, "nobody");
    assert.equal(err.key, "nobody");
    assert.equal(err.task, null);
    assert.equal(
      err.message,
      "key nobody did not finish within 100ms: no task under this key — never submitted, or already purged?",
    );
  });

  test("waitByKey timing out on an existing task reports that task", async (t) => {
    const { client } = openClient(t);
    const task = await client.submit("keyed.job", {}, { key: "k1" });
    const err = await rejectionOf(client.waitByKey("k1", { timeoutMs: 0 }));
    assert.equal(err.taskId, task.id);
    assert.equal(err.key, "k1");
    assert.equal(err.task.id, task.id);
    assert.match(err.message, /^key k1 did not finish within 0ms: never claimed by a worker/);
    assert.ok(err.message.includes("'keyed.job'"));
  });

  test("waitByKey waits for a key that only appears later", async (t) => {
    const { client } = openClient(t);
    let settled = false;
    const waiting = client.waitByKey("later", { timeoutMs: 20_000, pollMs: 20 }).finally(() => (settled = true));
    const task = await client.submit("job", {}, { key: "later" });
    await claimTask(client.store, task);
    assert.equal(settled, false);
    await client.store.complete({ taskId: task.id, workerId: "w1", result: 7 });
    const done = await waiting;
    assert.equal(done.id, task.id);
    assert.equal(done.result, 7);
  });

  test("a replace mid-wait moves waitByKey to the replacement task", async (t) => {
    const { client } = openClient(t);
    const first = await client.submit("job", { v: 1 }, { key: "k" });
    let settled = false;
    const waiting = client.waitByKey("k", { timeoutMs: 20_000, pollMs: 20 }).finally(() => (settled = true));
    const second = await client.submit("job", { v: 2 }, { key: "k", conflict: "replace" });
    assert.equal((await client.get(first.id)).status, "canceled");
    await claimTask(client.store, second);
    assert.equal(settled, false, "the canceled original must not end the wait");
    await client.store.complete({ taskId: second.id, workerId: "w1", result: "second" });
    const done = await waiting;
    assert.equal(done.id, second.id);
    assert.equal(done.result, "second");
  });

  test("timeoutMs: Infinity waits for as long as it takes", async (t) => {
    const { client } = openClient(t);
    const task = await client.submit("job");
    const waiting = client.wait(task.id, { timeoutMs: Infinity, pollMs: 20 });
    await client.cancel(task.id);
    const done = await waiting;
    assert.equal(done.status, "canceled");
  });

  test("a poll interval larger than the time left still honours the deadline", async (t) => {
    const { client } = openClient(t);
    const task = await client.submit("job");
    const started = Date.now();
    const err = await rejectionOf(client.wait(task.id, { timeoutMs: 200, pollMs: Infinity }));
    assert.ok(err instanceof TaskTimeout, `${err.name}: ${err.message}`);
    assert.ok(Date.now() - started < 10_000);
    const slowPoll = await rejectionOf(client.wait(task.id, { timeoutMs: 200, pollMs: 60_000 }));
    assert.ok(slowPoll instanceof TaskTimeout, `${slowPoll.name}: ${slowPoll.message}`);
  });

  test("a pending wait keeps the process alive until it settles", async () => {
    const entry = JSON.stringify(new URL("../index.mjs", import.meta.url).href);
    const script = `
      import fs from "node:fs"; import os from "node:os"; import path from "node:path";
      const { CairnQ } = await import(${entry});
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cairnq-"));
      process.on("exit", () => fs.rmSync(dir, { recursive: true, force: true }));
      const client = CairnQ.sqlite(path.join(dir, "q.db"));
      const task = await client.submit("job", {});
      client.wait(task.id, { timeoutMs: 300 }).catch((e) => console.log("wait:" + e.name));
      client.waitByKey("absent", { timeoutMs: 300 }).catch((e) => console.log("waitByKey:" + e.name));
    `;
    const out = await runProcess(process.execPath, ["--input-type=module", "-e", script], { timeoutMs: 20_000 });
    assert.equal(out.code, 0, out.stderr);
    assert.deepEqual(out.stdout.trim().split("\n").sort(), ["wait:TaskTimeout", "waitByKey:TaskTimeout"]);
  });

  test("a timed-out wait can be resumed with wait(err.taskId)", async (t) => {
    const { client } = openClient(t);
    const task = await client.submit("job");
    const err = await rejectionOf(client.wait(task.id, { timeoutMs: 50 }));
    await claimTask(client.store, task);
    await client.store.complete({ taskId: task.id, workerId: "w1", result: "late" });
    assert.equal((await client.wait(err.taskId)).result, "late");
  });
});

// ---------------------------------------------------------------------------
describe("call", () => {
  /** Complete the first task named `name` as soon as it appears. */
  async function actAsWorker(client, name, finish) {
    const task = await waitFor(async () => (await client.list({ name, status: "queued" }))[0], {
      timeoutMs: 10_000,
    });
    await claimTask(client.store, task);
    return finish(task);
  }

  test("resolves with the task's result", async (t) => {
    const { client } = openClient(t);
    const calling = client.call("math.add", { a: 2, b: 3 }, { pollMs: 20 });
    await actAsWorker(client, "math.add", (task) =>
      client.store.complete({ taskId: task.id, workerId: "w1", result: { sum: task.payload.a + task.payload.b } }),
    );
    assert.deepEqual(await calling, { sum: 5 });
  });

  test("resolves with null when the task succeeded without a result", async (t) => {
    const { client } = openClient(t);
    const def = defineTask("noop");
    const calling = client.call(def, undefined, { pollMs: 20 });
    const task = await actAsWorker(client, "noop", async (task) => {
      await client.store.complete({ taskId: task.id, workerId: "w1", result: undefined });
      return task;
    });
    assert.equal(await calling, null);
    assert.deepEqual(task.payload, {}, "an omitted payload is stored as {}");
  });

  test("rejects with TaskFailed carrying the envelope's fields", async (t) => {
    const { client } = openClient(t);
    const calling = client.call("validate", {}, { pollMs: 20 });
    await actAsWorker(client, "validate", (task) =>
      client.store.fail({ taskId: task.id, workerId: "w1", error: ENVELOPE, retryable: false }),
    );
    const err = await rejectionOf(calling);
    assert.ok(err instanceof TaskFailed, String(err));
    assert.ok(err instanceof CairnQError);
    assert.equal(err.name, "TaskFailed");
    assert.equal(err.message, ENVELOPE.message);
    assert.equal(err.type, ENVELOPE.type);
    assert.equal(err.code, ENVELOPE.code);
    assert.equal(err.retryable, false);
    assert.deepEqual(err.details, ENVELOPE.details);
    assert.deepEqual(err.error, ENVELOPE);
  });

  test("rejects with TaskCanceled when the task is canceled", async (t) => {
    const { client } = openClient(t);
    const calling = client.call("cancel.me", {}, { pollMs: 20 });
    const task = await waitFor(async () => (await client.list({ name: "cancel.me" }))[0]);
    await client.cancel(task.id);
    const err = await rejectionOf(calling);
    assert.ok(err instanceof TaskCanceled, String(err));
    assert.equal(err.taskId, task.id);
    assert.equal(err.message, `task ${task.id} was canceled`);
  });

  test("with no worker it times out: never claimed, names the handler, task stays queued", async (t) => {
    const { client } = openClient(t);
    const err = await rejectionOf(client.call("unhandled", {}, { waitTimeoutMs: 300 }));
    assert.ok(err instanceof TaskTimeout, String(err));
    assert.ok(err.message.includes("never claimed by a worker"), err.message);
    assert.ok(err.message.includes("'unhandled'"), err.message);
    assert.ok(err.message.includes("did not finish within 300ms"), err.message);
    assert.equal(err.task.status, "queued");
    assert.equal(err.key, null);
    assert.equal((await client.get(err.taskId)).status, "queued", "the task keeps going");

    await claimTask(client.store, err.task);
    await client.store.complete({ taskId: err.taskId, workerId: "w1", result: "eventually" });
    const resumed = await client.wait(err.taskId);
    assert.equal(resumed.status, "succeeded");
    assert.equal(resumed.result, "eventually");
  });

  test("a keyed call that times out still reports key null", async (t) => {
    const { client } = openClient(t);
    const err = await rejectionOf(client.call("keyed", {}, { key: "call-key", waitTimeoutMs: 0 }));
    assert.ok(err instanceof TaskTimeout);
    assert.equal(err.key, null);
    assert.ok(err.message.startsWith(`task ${err.taskId} `));
  });

  test("submit options pass through, and a reuse hit waits on the existing task", async (t) => {
    const { client } = openClient(t);
    const existing = await client.submit("dedupe", { first: true }, { key: "once", queue: "q" });
    const calling = client.call("dedupe", { second: true }, { key: "once", queue: "q", pollMs: 20 });
    await claimTask(client.store, existing);
    await client.store.complete({ taskId: existing.id, workerId: "w1", result: "from the first" });
    assert.equal(await calling, "from the first");
    assert.equal((await client.list()).length, 1);
  });

  test("submit validation errors surface from call", async (t) => {
    const { client } = openClient(t);
    assertPlainError(
      await rejectionOf(client.call("job", {}, { maxAttempts: 0, waitTimeoutMs: 100 })),
      "maxAttempts must be >= 1, got 0",
    );
    assert.deepEqual(await client.stats(), {});
  });
});

// ---------------------------------------------------------------------------
describe("error classes", () => {
  const classes = {
    CairnQError,
    AlreadyExists,
    QueueFull,
    TaskTimeout,
    TaskFailed,
    TaskCanceled,
    TaskError,
    LostLease,
    EventLoopBlocked,
    ProtocolVersionMismatch,
    SerializationError,
  };

  test("every class is exported, extends CairnQError and Error, and names itself", () => {
    for (const [name, Cls] of Object.entries(classes)) {
      assert.equal(typeof Cls, "function", `${name} exported`);
      assert.equal(esm[name], Cls);
      const instance = Object.create(Cls.prototype);
      assert.ok(instance instanceof CairnQError, `${name} extends CairnQError`);
      assert.ok(instance instanceof Error, `${name} extends Error`);
    }
    const samples = {
      CairnQError: new CairnQError("m"),
      AlreadyExists: new AlreadyExists("k"),
      QueueFull: new QueueFull("q", 1, 2),
      TaskTimeout: new TaskTimeout("t"),
      TaskFailed: new TaskFailed({}),
      TaskCanceled: new TaskCanceled("t"),
      TaskError: new TaskError("m"),
      LostLease: new LostLease("t"),
      EventLoopBlocked: new EventLoopBlocked(1, 2, 3),
      ProtocolVersionMismatch: new ProtocolVersionMismatch("m"),
      SerializationError: new SerializationError("m"),
    };
    for (const [name, err] of Object.entries(samples)) {
      assert.equal(err.name, name);
      assert.ok(err instanceof classes[name]);
      assert.ok(err instanceof CairnQError);
      assert.ok(err instanceof Error);
      assert.equal(typeof err.stack, "string");
    }
  });

  test("constructors set the documented fields and messages", () => {
    assert.equal(new CairnQError("plain").message, "plain");
    assert.equal(new CairnQError().message, "");

    const exists = new AlreadyExists("order-1");
    assert.equal(exists.key, "order-1");
    assert.equal(exists.message, "task with key order-1 already exists");

    const full = new QueueFull("emails", 100, 2500);
    assert.equal(full.queue, "emails");
    assert.equal(full.maxDepth, 100);
    assert.equal(full.waitedMs, 2500);
    assert.equal(
      full.message,
      "queue emails still holds 100 or more queued tasks after 2500ms; refusing to enqueue more",
    );

    const canceled = new TaskCanceled("task_1");
    assert.equal(canceled.taskId, "task_1");
    assert.equal(canceled.message, "task task_1 was canceled");

    const lost = new LostLease("task_2");
    assert.equal(lost.taskId, "task_2");
    assert.equal(lost.message, "lost lease on task task_2");

    const blocked = new EventLoopBlocked(700, 100, 300);
    assert.equal(blocked.lateMs, 700);
    assert.equal(blocked.intervalMs, 100);
    assert.equal(blocked.leaseMs, 300);
    assert.ok(
      blocked.message.startsWith(
        "heartbeat beat was 700ms late (interval 100ms, lease 300ms): the event loop was blocked long enough to miss a beat.",
      ),
    );
    assert.ok(blocked.message.length > 110, "one more advisory sentence follows");

    assert.equal(
      new ProtocolVersionMismatch("storage protocol_version=9, SDK supports 1").message,
      "storage protocol_version=9, SDK supports 1",
    );
    assert.equal(new SerializationError("nope").message, "nope");
  });

  test("TaskTimeout messages and fields per §4.2", () => {
    const none = new TaskTimeout("t1", { timeoutMs: 5, task: null });
    assert.equal(none.message, "task t1 did not finish within 5ms: task not found — wrong database file, or already purged?");
    assert.equal(none.taskId, "t1");
    assert.equal(none.task, null);
    assert.equal(none.key, null);

    assert.equal(new TaskTimeout("t1").message, "task t1 did not finish in time");
    assert.equal(new TaskTimeout("t1").task, null);
    const keyed = new TaskTimeout("k", { key: "k" });
    assert.equal(keyed.message, "key k did not finish in time");
    assert.equal(keyed.key, "k");
    assert.equal(
      new TaskTimeout("k", { key: "k", timeoutMs: 10 }).message,
      "key k did not finish within 10ms: no task under this key — never submitted, or already purged?",
    );

    const now = Date.now();
    const base = {
      id: "t9",
      name: "n",
      queue: "q",
      status: "queued",
      attempt: 0,
      max_attempts: 3,
      run_at_ms: now - 10,
      cancel_requested_at_ms: null,
    };
    assert.equal(
      new TaskTimeout("t9", { timeoutMs: 1, task: base }).message,
      "task t9 did not finish within 1ms: never claimed by a worker — is a worker running with a handler for 'n' on queue 'q', against this same database?",
    );
    assert.equal(
      new TaskTimeout("t9", { timeoutMs: 1, task: { ...base, attempt: 2 } }).message,
      "task t9 did not finish within 1ms: still queued (attempt 2/3)",
    );
    assert.match(
      new TaskTimeout("t9", { timeoutMs: 1, task: { ...base, run_at_ms: now + 60_000 } }).message,
      /^task t9 did not finish within 1ms: still queued \(attempt 0\/3\), next run in ~\d+ms$/,
    );
    assert.equal(
      new TaskTimeout("t9", { timeoutMs: 1, task: { ...base, status: "running", attempt: 1 } }).message,
      "task t9 did not finish within 1ms: still running (attempt 1/3)",
    );
    assert.equal(
      new TaskTimeout("t9", { timeoutMs: 1, task: { ...base, status: "running", attempt: 1, cancel_requested_at_ms: now } })
        .message,
      "task t9 did not finish within 1ms: cancel requested, waiting for the handler to observe it",
    );
    const withTask = new TaskTimeout("t9", { timeoutMs: 1, task: base, key: "kk" });
    assert.equal(withTask.task, base);
    assert.equal(withTask.key, "kk");
    assert.ok(withTask.message.startsWith("key kk did not finish within 1ms: never claimed"));
  });

  test("TaskFailed derives its fields from the envelope, with defaults for missing ones", () => {
    const full = new TaskFailed(ENVELOPE);
    assert.equal(full.message, ENVELOPE.message);
    assert.equal(full.type, ENVELOPE.type);
    assert.equal(full.code, ENVELOPE.code);
    assert.equal(full.retryable, false);
    assert.deepEqual(full.details, ENVELOPE.details);
    assert.equal(full.error, ENVELOPE);

    for (const missing of [null, undefined, {}]) {
      const err = new TaskFailed(missing);
      assert.equal(err.message, "task failed");
      assert.equal(err.type, "TaskError");
      assert.equal(err.code, "task_error");
      assert.equal(err.retryable, false);
      assert.deepEqual(err.details, {});
      assert.equal(err.error, missing);
    }
    assert.equal(new TaskFailed({ retryable: true }).retryable, true);
  });

  test("TaskError defaults and envelope()", () => {
    const plain = new TaskError("bad thing");
    assert.equal(plain.message, "bad thing");
    assert.equal(plain.code, "task_error");
    assert.equal(plain.retryable, false);
    assert.equal(plain.type, "TaskError");
    assert.deepEqual(plain.details, {});
    assert.deepEqual(plain.envelope(), {
      type: "TaskError",
      code: "task_error",
      message: "bad thing",
      retryable: false,
      details: {},
    });
    const custom = new TaskError("quota", { code: "rate_limited", retryable: true, type: "Quota", details: { wait: 5 } });
    const envelope = custom.envelope();
    assert.deepEqual(Object.keys(envelope), ["type", "code", "message", "retryable", "details"]);
    assert.deepEqual(envelope, { type: "Quota", code: "rate_limited", message: "quota", retryable: true, details: { wait: 5 } });
  });

  test("require('../index.js') (CommonJS) exports the very same objects as the ESM entry", () => {
    const require = createRequire(import.meta.url);
    const cjs = require("../index.js");
    assert.deepEqual(Object.keys(cjs).sort(), Object.keys(esm).filter((k) => k !== "default").sort());
    for (const name of Object.keys(esm)) {
      if (name === "default") continue;
      assert.equal(cjs[name], esm[name], `${name} is the same object in both entries`);
    }
    const err = new cjs.AlreadyExists("k");
    assert.ok(err instanceof AlreadyExists);
    assert.ok(err instanceof CairnQError);
  });

  test("the public entry exports the documented runtime values", () => {
    for (const name of [
      "CairnQ",
      "QueueDepthGate",
      "RetentionSweeper",
      "SQLiteStore",
      "PostgresStore",
      "TaskStore",
      "STATUSES",
      "defineTask",
      "isTerminal",
      "cancelRequested",
      "isQueued",
      "isRunning",
      "isSucceeded",
      "isFailed",
      "isCanceled",
      ...Object.keys(classes),
    ]) {
      assert.ok(name in esm, `${name} is exported`);
    }
    assert.deepEqual([...STATUSES], ["queued", "running", "succeeded", "failed", "canceled"]);
    assert.ok(Object.isFrozen(STATUSES));
  });

  test("status predicates", () => {
    const row = (status, cancel = null) => ({ status, cancel_requested_at_ms: cancel });
    assert.equal(esm.isTerminal(row("succeeded")), true);
    assert.equal(esm.isTerminal(row("failed")), true);
    assert.equal(esm.isTerminal(row("canceled")), true);
    assert.equal(esm.isTerminal(row("queued")), false);
    assert.equal(esm.isTerminal(row("running")), false);
    assert.equal(esm.cancelRequested(row("running", 5)), true);
    assert.equal(esm.cancelRequested(row("running", null)), false);
    assert.equal(esm.cancelRequested({ status: "running" }), false);
    for (const status of STATUSES) {
      const fn = esm[`is${status[0].toUpperCase()}${status.slice(1)}`];
      for (const other of STATUSES) assert.equal(fn(row(other)), other === status);
    }
  });
});

// ---------------------------------------------------------------------------
describe("databases cairnq must refuse", () => {
  test("a non-database file: connect rejects naming the file and leaves its bytes alone", async (t) => {
    const dbPath = makeDbPath(t, "x.db");
    fs.writeFileSync(dbPath, randomBytes(8192));
    const before = sha256OfFile(dbPath);
    const client = CairnQ.sqlite(dbPath);
    defer(t, () => client.close());
    const err = await rejectionOf(client.connect());
    assert.ok(err instanceof Error);
    assert.ok(err.message.includes(dbPath), `message names the file: ${err.message}`);
    const again = await rejectionOf(client.submit("job"));
    assert.ok(again.message.includes(dbPath), again.message);
    await client.close();
    assert.equal(sha256OfFile(dbPath), before, "the file's bytes are unchanged");
    assert.equal(fs.statSync(dbPath).size, 8192);
  });

  test("protocol_version 2 → ProtocolVersionMismatch; ledger, meta and rows untouched", async (t) => {
    const dbPath = makeDbPath(t);
    const setup = CairnQ.sqlite(dbPath);
    const existing = await setup.submit("job", { keep: true });
    await setup.close();

    const dump = [
      "import sqlite3, sys, json",
      "c = sqlite3.connect(sys.argv[1])",
      "out = {",
      "  'meta': c.execute('SELECT key, value FROM cairnq_meta ORDER BY key').fetchall(),",
      "  'ledger': c.execute('SELECT name, applied_at_ms FROM cairnq_migrations ORDER BY name').fetchall(),",
      "  'tasks': c.execute('SELECT id FROM cairnq_tasks ORDER BY id').fetchall(),",
      "}",
      "sys.stdout.write(json.dumps(out))",
    ].join("\n");
    await runPython(
      [
        "import sqlite3, sys",
        "c = sqlite3.connect(sys.argv[1])",
        "c.execute(\"UPDATE cairnq_meta SET value = '2' WHERE key = 'protocol_version'\")",
        "c.commit()",
      ].join("\n"),
      [dbPath],
    );
    const before = JSON.parse(await runPython(dump, [dbPath]));
    assert.deepEqual(before.meta, [
      ["protocol_version", "2"],
      ["schema_version", "6"],
    ]);

    const client = CairnQ.sqlite(dbPath);
    defer(t, () => client.close());
    const err = await rejectionOf(client.connect());
    assert.ok(err instanceof ProtocolVersionMismatch, String(err));
    assert.ok(err instanceof CairnQError);
    assert.equal(err.name, "ProtocolVersionMismatch");
    assert.equal(err.message, "storage protocol_version=2, SDK supports 1");
    const viaSubmit = await rejectionOf(client.submit("job", { must: "not be written" }));
    assert.ok(viaSubmit instanceof ProtocolVersionMismatch, String(viaSubmit));
    await client.close();

    const after = JSON.parse(await runPython(dump, [dbPath]));
    assert.deepEqual(after, before);
    assert.deepEqual(after.tasks, [[existing.id]]);
  });

  test("a missing protocol_version row reads as 0 and is refused, not re-stamped", async (t) => {
    const dbPath = makeDbPath(t);
    const setup = CairnQ.sqlite(dbPath);
    await setup.connect();
    await setup.close();
    await runPython(
      [
        "import sqlite3, sys",
        "c = sqlite3.connect(sys.argv[1])",
        "c.execute(\"DELETE FROM cairnq_meta WHERE key = 'protocol_version'\")",
        "c.commit()",
      ].join("\n"),
      [dbPath],
    );
    const client = CairnQ.sqlite(dbPath);
    defer(t, () => client.close());
    const err = await rejectionOf(client.connect());
    assert.ok(err instanceof ProtocolVersionMismatch, String(err));
    assert.equal(err.message, "storage protocol_version=0, SDK supports 1");
    await client.close();
    const meta = await runPython(
      [
        "import sqlite3, sys",
        "c = sqlite3.connect(sys.argv[1])",
        "sys.stdout.write(repr(c.execute('SELECT key, value FROM cairnq_meta ORDER BY key').fetchall()))",
      ].join("\n"),
      [dbPath],
    );
    assert.equal(meta, "[('schema_version', '6')]");
  });
});
