// CairnQ on Postgres (API.md §5–§9, PROTOCOL §5.2, §6, §9): the client
// behaviours both dialects share, run against a real server, plus what only
// Postgres has — the advisory key lock shared with other SDKs, jsonb columns,
// the database clock, and LISTEN/NOTIFY wakeups. Every test gets a database
// of its own (pg-helpers.mjs `createDatabase`), dropped when it ends.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";

import { AlreadyExists, CairnQ, CairnQError, PostgresStore, QueueFull, TaskCanceled, TaskFailed, TaskTimeout } from "../../index.mjs";
import {
  TASK_COLUMNS,
  claimTask,
  defer,
  rejectionOf,
  settlesWithin,
  submitAndFail,
  submitAndSucceed,
  waitFor,
  waitUntilPast,
} from "../helpers.mjs";
import {
  PG_SKIP,
  PSQL,
  backendQueries,
  createDatabase,
  isListenQuery, makePgWorker,
  openPgClient,
  psql,
  waitForListeners,
} from "./pg-helpers.mjs";

// A hung test must fail, not hold CI: generous for a loaded machine.
const SUITE_TIMEOUT_MS = 180_000;

const TASK_ID = /^task_[0-7][0-9ABCDEFGHJKMNPQRSTVWXYZ]{25}$/;
const ENVELOPE = {
  type: "ValidationError",
  code: "bad_input",
  message: "field x is required",
  retryable: false,
  details: { field: "x", hints: ["add x"] },
};

/** A client on a fresh database of its own. */
async function freshClient(t, opts = {}) {
  const db = await createDatabase(t);
  return { ...db, client: openPgClient(t, db.dsn, opts) };
}

/** Sort the way `list` promises: created_at_ms descending, then id descending. */
function newestFirst(tasks) {
  return [...tasks].sort((a, b) =>
    a.created_at_ms !== b.created_at_ms ? b.created_at_ms - a.created_at_ms : a.id < b.id ? 1 : -1,
  );
}

/**
 * A psql session that takes `lock` inside an open transaction and holds it
 * until `release()` commits. Resolves once the lock is held.
 */
async function holdInPsql(dsn, lockSql) {
  const child = spawn(PSQL, ["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", dsn], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (d) => (stdout += d));
  child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d));
  let exitCode = null;
  const exited = new Promise((resolve) =>
    child.on("exit", (code) => {
      exitCode = code;
      resolve(code);
    }),
  );
  child.stdin.write(`begin;\n${lockSql};\nselect 'lock-held';\n`);
  await waitFor(() => stdout.includes("lock-held") || exitCode !== null, {
    timeoutMs: 30_000,
    message: `psql never reported the lock; stderr: ${stderr}`,
  });
  if (!stdout.includes("lock-held")) throw new Error(`psql exited early (${exitCode}): ${stderr}`);
  return {
    async release() {
      child.stdin.end("commit;\n");
      const code = await exited;
      if (code !== 0) throw new Error(`psql exited with ${code}: ${stderr}`);
    },
    kill() {
      if (exitCode === null) child.kill("SIGKILL");
    },
  };
}

// ---------------------------------------------------------------------------
describe("Postgres: connecting and submitting", { skip: PG_SKIP, timeout: SUITE_TIMEOUT_MS }, () => {
  test("the first operation connects and migrates lazily; rows have the 23 columns, defaults, numbers", async (t) => {
    const { client, dsn } = await freshClient(t);
    const task = await client.submit("job");
    assert.deepEqual(Object.keys(task), TASK_COLUMNS);
    assert.match(task.id, TASK_ID);
    assert.equal(task.name, "job");
    assert.equal(task.queue, "default");
    assert.equal(task.status, "queued");
    assert.deepEqual(task.payload, {});
    assert.deepEqual(task.metadata, {});
    assert.equal(task.result, null);
    assert.equal(task.error, null);
    assert.equal(task.progress, null);
    assert.equal(task.attempt, 0);
    assert.equal(task.max_attempts, 3);
    assert.equal(task.priority, 0);
    assert.equal(task.root_id, task.id);
    for (const col of ["attempt", "max_attempts", "priority", "run_at_ms", "created_at_ms", "updated_at_ms"]) {
      assert.equal(typeof task[col], "number", `${col} is a JS number`);
    }
    // The database clock, which on this host is the same clock as ours.
    assert.ok(Math.abs(task.created_at_ms - Date.now()) < 60_000, `created_at_ms ${task.created_at_ms}`);
    assert.equal(task.run_at_ms, task.created_at_ms);

    const ledger = await psql(dsn, "select name from cairnq_migrations order by name");
    assert.deepEqual(ledger.split("\n"), [
      "0001_init.sql",
      "0002_purge_index.sql",
      "0003_notify.sql",
      "0004_lease_index.sql",
      "0005_clear_terminal_lease.sql",
      "0006_claim_name_index.sql",
    ]);
    assert.equal(await psql(dsn, "select value from cairnq_meta where key = 'protocol_version'"), "1");
    assert.equal(await client.store.protocolVersion(), 1);
  });

  test("connect() is idempotent and shared by concurrent callers; four clients cold-start one database at once", async (t) => {
    const { dsn } = await createDatabase(t);
    const clients = Array.from({ length: 4 }, () => openPgClient(t, dsn));
    await Promise.all(clients.flatMap((c) => [c.connect(), c.connect(), c.stats()]));
    assert.equal(await psql(dsn, "select count(*) from cairnq_migrations"), "6");
    const task = await clients[0].submit("job", { n: 1 });
    assert.equal((await clients[3].get(task.id)).id, task.id);
  });

  test("every submit option lands in its column", async (t) => {
    const { client } = await freshClient(t);
    const parent = await client.submit("parent");
    const task = await client.submit(
      "child",
      { a: 1 },
      {
        queue: "emails",
        key: "k-1",
        maxAttempts: 7,
        priority: -5,
        metadata: { trace: "abc" },
        parentId: parent.id,
        rootId: "root-x",
        correlationId: "corr-1",
        runAtDelayMs: 60_000,
      },
    );
    assert.equal(task.queue, "emails");
    assert.equal(task.max_attempts, 7);
    assert.equal(task.priority, -5);
    assert.deepEqual(task.metadata, { trace: "abc" });
    assert.equal(task.parent_id, parent.id);
    assert.equal(task.root_id, "root-x");
    assert.equal(task.correlation_id, "corr-1");
    assert.equal(task.run_at_ms - task.created_at_ms, 60_000, "run_at = database now + delay");
    assert.deepEqual(await client.getByKey("k-1"), task);
    assert.deepEqual(await client.get(task.id), task);
  });

  test("submit validation is a plain Error and writes nothing", async (t) => {
    const { client } = await freshClient(t);
    for (const [opts, message] of [
      [{ conflict: "merge" }, "unknown conflict strategy: merge"],
      [{ maxAttempts: 0 }, "maxAttempts must be >= 1, got 0"],
      [{ runAtDelayMs: -1 }, "runAtDelayMs must be >= 0, got -1"],
    ]) {
      const err = await rejectionOf(client.submit("job", {}, opts));
      assert.equal(err instanceof CairnQError, false);
      assert.equal(err.message, message);
    }
    assert.deepEqual(await client.stats(), {});
  });
});

// ---------------------------------------------------------------------------
describe("Postgres: jsonb columns and numbers", { skip: PG_SKIP, timeout: SUITE_TIMEOUT_MS }, () => {
  test("payload, metadata and result with nesting, unicode, escapes and numbers round-trip", async (t) => {
    const { client, dsn } = await freshClient(t);
    const payload = {
      text: "Grüße, 世界 — naïve café 🌲𝄞",
      nested: [[1, [2, [3, { deep: ["ünïcödé", null] }]]], [], [true, false, null, 1.5, -7, 0]],
      numbers: { int: 42, neg: -3, float: 0.1, exp: 1e300, tiny: 5e-324, big: Number.MAX_SAFE_INTEGER, negZero: -0 },
      empty: {},
      escapes: 'a "quoted" \\ backslash\n\ttab \u0001',
      bools: [true, false],
    };
    const metadata = { owner: "Zoë", tags: ["α", "β"], nested: { list: [[[]]] } };
    const task = await client.submit("json", payload, { metadata });
    // JSON semantics: -0 is written as 0.
    const expected = { ...payload, numbers: { ...payload.numbers, negZero: 0 } };
    assert.deepEqual(task.payload, expected);
    assert.deepEqual(task.metadata, metadata);
    assert.deepEqual((await client.get(task.id)).payload, expected);

    // Stored as real jsonb, not as a JSON string.
    assert.equal(await psql(dsn, `select jsonb_typeof(payload) from cairnq_tasks where id = '${task.id}'`), "object");
    assert.equal(await psql(dsn, `select payload->>'text' from cairnq_tasks where id = '${task.id}'`), payload.text);
    assert.equal(await psql(dsn, `select payload #>> '{numbers,big}' from cairnq_tasks where id = '${task.id}'`), "9007199254740991");

    await claimTask(client.store, task);
    const result = { echo: expected, list: [1, "two", { three: [3] }], unicode: "𝄞" };
    const done = await client.store.complete({ taskId: task.id, workerId: "w1", result });
    assert.deepEqual(done.result, result);
    assert.deepEqual((await client.get(task.id)).result, result);
    assert.equal(done.progress, 1, "success sets progress 1");
    assert.equal(typeof done.progress, "number");
  });

  test("undefined properties are dropped, and a null result is SQL NULL", async (t) => {
    const { client, dsn } = await freshClient(t);
    const task = await client.submit("job", { xs: [null, 1], absent: undefined });
    assert.deepEqual(task.payload, { xs: [null, 1] });
    await claimTask(client.store, task);
    const done = await client.store.complete({ taskId: task.id, workerId: "w1", result: null });
    assert.equal(done.result, null);
    assert.equal(await psql(dsn, `select result is null from cairnq_tasks where id = '${task.id}'`), "t");
  });

  test("progress values read back as numbers: 1.0 is 1, 0.25 stays 0.25; null leaves it unchanged", async (t) => {
    const { client } = await freshClient(t);
    const task = await client.submit("job");
    await claimTask(client.store, task);
    const quarter = await client.store.progress({ taskId: task.id, workerId: "w1", progress: 0.25, message: "¼ done" });
    assert.equal(quarter.progress, 0.25);
    assert.equal(quarter.message, "¼ done");
    const kept = await client.store.progress({ taskId: task.id, workerId: "w1", progress: null, message: null });
    assert.equal(kept.progress, 0.25);
    assert.equal(kept.message, "¼ done");
    const full = await client.store.progress({ taskId: task.id, workerId: "w1", progress: 1.0, message: null });
    assert.equal(full.progress, 1);
    assert.equal(typeof full.progress, "number");
    assert.equal((await client.get(task.id)).progress, 1);
  });

  test("heartbeatBatch reports each renewed task's cancel flag as a boolean", async (t) => {
    const { client } = await freshClient(t);
    const a = await client.submit("job", { a: 1 });
    const b = await client.submit("job", { b: 1 });
    const claimed = await client.store.claim({ queues: ["default"], workerId: "w1", limit: 2 });
    assert.equal(claimed.length, 2);
    await client.cancel(b.id);
    const flags = await client.store.heartbeatBatch({ taskIds: [a.id, b.id, "task_missing"], workerId: "w1", leaseMs: 5000 });
    assert.deepEqual(
      [...flags.entries()].sort(),
      [
        [a.id, false],
        [b.id, true],
      ].sort(),
    );
    const notMine = await client.store.heartbeatBatch({ taskIds: [a.id], workerId: "w2", leaseMs: 5000 });
    assert.equal(notMine.size, 0);
  });
});

// ---------------------------------------------------------------------------
describe("Postgres: keyed submit strategies", { skip: PG_SKIP, timeout: SUITE_TIMEOUT_MS }, () => {
  test("reuse returns a live task, and creates a new one after success, failure or cancel", async (t) => {
    const { client } = await freshClient(t);
    const first = await client.submit("job", { v: 1 }, { key: "k" });
    assert.deepEqual(await client.submit("job", { v: 2 }, { key: "k" }), first);
    const running = await claimTask(client.store, first);
    assert.deepEqual(await client.submit("job", { v: 3 }, { key: "k", conflict: "reuse" }), running);
    const done = await client.store.complete({ taskId: first.id, workerId: "w1", result: { ok: 1 } });

    const afterSuccess = await client.submit("job", { v: 4 }, { key: "k" });
    assert.notEqual(afterSuccess.id, first.id);
    assert.equal((await client.getByKey("k")).id, afterSuccess.id);
    assert.deepEqual(await client.get(first.id), done, "the old task is untouched");

    await client.cancel(afterSuccess.id);
    const afterCancel = await client.submit("job", { v: 5 }, { key: "k" });
    assert.notEqual(afterCancel.id, afterSuccess.id);
    await claimTask(client.store, afterCancel);
    await client.store.fail({ taskId: afterCancel.id, workerId: "w1", error: ENVELOPE, retryable: false });
    const afterFail = await client.submit("job", { v: 6 }, { key: "k" });
    assert.notEqual(afterFail.id, afterCancel.id);
    assert.equal((await client.list()).length, 4);
  });

  test("reuse-succeeded returns a succeeded task with its result, but not a failed one", async (t) => {
    const { client } = await freshClient(t);
    const done = await submitAndSucceed(client, "answer", { answer: 42 }, { key: "ok" });
    const hit = await client.submit("answer", {}, { key: "ok", conflict: "reuse-succeeded" });
    assert.equal(hit.id, done.id);
    assert.deepEqual(hit.result, { answer: 42 });
    const live = await client.submit("live", {}, { key: "live" });
    assert.equal((await client.submit("live", {}, { key: "live", conflict: "reuse-succeeded" })).id, live.id);
    const failed = await submitAndFail(client, "broken", { key: "bad" });
    const fresh = await client.submit("broken", {}, { key: "bad", conflict: "reuse-succeeded" });
    assert.notEqual(fresh.id, failed.id);
    assert.equal(fresh.status, "queued");
  });

  test("reject raises AlreadyExists for any existing task, rolls back, and leaves no advisory lock", async (t) => {
    const { client, dsn } = await freshClient(t);
    const queued = await client.submit("q.job", {}, { key: "q" });
    const done = await submitAndSucceed(client, "s.job", {}, { key: "s" });
    const failed = await submitAndFail(client, "f.job", { key: "f" });
    const before = await client.stats();
    for (const [key, existing] of [
      ["q", queued],
      ["s", done],
      ["f", failed],
    ]) {
      const err = await rejectionOf(client.submit("job", { new: true }, { key, conflict: "reject" }));
      assert.ok(err instanceof AlreadyExists, `${key}: ${err}`);
      assert.equal(err.key, key);
      assert.equal(err.message, `task with key ${key} already exists`);
      assert.equal((await client.getByKey(key)).id, existing.id);
    }
    assert.deepEqual(await client.stats(), before);
    assert.equal(await psql(dsn, "select count(*) from cairnq_task_keys"), "3");
    // The key lock is transaction-scoped: a rejected submit released it.
    assert.equal(await psql(dsn, "select count(*) from pg_locks where locktype = 'advisory'"), "0");
    const fresh = await client.submit("job", {}, { key: "unused", conflict: "reject" });
    assert.equal((await client.getByKey("unused")).id, fresh.id);
  });

  test("replace cancels a queued task, flags a running one, leaves a terminal one alone", async (t) => {
    const { client } = await freshClient(t);
    const queued = await client.submit("job", { v: 1 }, { key: "q" });
    const replacement = await client.submit("job", { v: 2 }, { key: "q", conflict: "replace" });
    assert.notEqual(replacement.id, queued.id);
    assert.equal((await client.get(queued.id)).status, "canceled");
    assert.equal((await client.getByKey("q")).id, replacement.id);

    const running = await client.submit("run.job", {}, { key: "r" });
    await claimTask(client.store, running);
    const second = await client.submit("run.job", {}, { key: "r", conflict: "replace" });
    const flagged = await client.get(running.id);
    assert.equal(flagged.status, "running");
    assert.notEqual(flagged.cancel_requested_at_ms, null);
    assert.equal((await client.getByKey("r")).id, second.id);

    const done = await submitAndSucceed(client, "done.job", { r: 1 }, { key: "d" });
    const third = await client.submit("done.job", {}, { key: "d", conflict: "replace" });
    assert.notEqual(third.id, done.id);
    assert.deepEqual(await client.get(done.id), done);
  });

  test("concurrent reuse submits from four clients collapse onto one task per key (the advisory lock)", async (t) => {
    const { dsn } = await createDatabase(t);
    const clients = Array.from({ length: 4 }, () => openPgClient(t, dsn, { max: 6 }));
    await Promise.all(clients.map((c) => c.connect()));
    const finished = await submitAndSucceed(clients[0], "job", {}, { key: "finished" });

    const submits = [];
    for (let i = 0; i < 48; i++) {
      const client = clients[i % clients.length];
      submits.push(client.submit("job", { i }, { key: "finished" }));
      submits.push(client.submit("job", { i }, { key: "fresh" }));
      submits.push(client.submit("own", { i }, { key: `own-${i}` }));
    }
    const results = await Promise.all(submits);
    const idsAt = (offset) => new Set(results.filter((_, i) => i % 3 === offset).map((x) => x.id));
    const onFinished = idsAt(0);
    const onFresh = idsAt(1);
    assert.equal(onFinished.size, 1, `a burst against a finished key makes one new task, got ${onFinished.size}`);
    assert.ok(!onFinished.has(finished.id));
    assert.equal(onFresh.size, 1, `a burst against a new key makes one task, got ${onFresh.size}`);
    assert.equal(idsAt(2).size, 48, "distinct keys make distinct tasks");
    assert.equal((await clients[1].getByKey("finished")).id, [...onFinished][0]);
    assert.equal((await clients[2].getByKey("fresh")).id, [...onFresh][0]);
    // 1 finished + 1 new on "finished" + 1 on "fresh" + 48 own.
    assert.equal((await clients[3].list({ limit: 1000 })).length, 51);
  });

  test("the key lock is pg_advisory_xact_lock(hashtextextended(key, 0)), shared with every SDK", async (t) => {
    const { client, dsn } = await freshClient(t);
    await client.connect();
    const holder = await holdInPsql(dsn, "select pg_advisory_xact_lock(hashtextextended('contended', 0))");
    defer(t, () => holder.kill());

    const blocked = client.submit("job", { v: 1 }, { key: "contended" });
    blocked.catch(() => {});
    const cancelBlocked = client.cancelByKey("contended");
    cancelBlocked.catch(() => {});
    assert.equal(await settlesWithin(blocked, 500), false, "a keyed submit waits for the key lock");
    assert.equal(await settlesWithin(cancelBlocked, 50), false, "cancelByKey takes the same lock");
    // Other keys and unkeyed submits are not held up.
    const other = await client.submit("job", {}, { key: "other" });
    assert.equal(other.status, "queued");
    await client.submit("job", {});

    await holder.release();
    const task = await blocked;
    assert.equal(task.status, "queued");
    assert.equal((await client.getByKey("contended")).id, task.id);
    await cancelBlocked; // ran after the submit or before it; either way it settled
    assert.equal(await psql(dsn, "select count(*) from pg_locks where locktype = 'advisory'"), "0");
  });
});

// ---------------------------------------------------------------------------
describe("Postgres: reads, cancel, retry, purge, stats, queueDepth", { skip: PG_SKIP, timeout: SUITE_TIMEOUT_MS }, () => {
  test("get/getByKey give null for what does not exist", async (t) => {
    const { client } = await freshClient(t);
    assert.equal(await client.get("task_01HZZZZZZZZZZZZZZZZZZZZZZZ"), null);
    assert.equal(await client.getByKey("nope"), null);
    await client.submit("job", {}, { key: "" });
    assert.equal((await client.getByKey("")).name, "job", "an empty string is a real key");
  });

  test("list filters by equality, orders newest first with the id as tie-break, and pages", async (t) => {
    const { client } = await freshClient(t);
    const made = [];
    for (let i = 0; i < 12; i++) {
      made.push(
        await client.submit(i % 2 ? "odd" : "even", { i }, {
          queue: i % 3 ? "a" : "b",
          rootId: i < 4 ? "r1" : null,
          correlationId: i === 5 ? "c5" : null,
        }),
      );
    }
    const runner = await client.submit("runner", {}, { queue: "c" });
    await claimTask(client.store, runner);
    made.push(runner);
    const all = newestFirst(made).map((x) => x.id);
    assert.deepEqual((await client.list()).map((x) => x.id), all);
    assert.deepEqual((await client.list({ limit: 5, offset: 5 })).map((x) => x.id), all.slice(5, 10));
    assert.deepEqual((await client.list({ limit: 5, offset: 10 })).map((x) => x.id), all.slice(10));
    assert.deepEqual(await client.list({ limit: 0 }), []);
    const names = (rows) => rows.map((x) => x.id).sort();
    assert.deepEqual(names(await client.list({ name: "odd" })), names(made.filter((x) => x.name === "odd")));
    assert.deepEqual(names(await client.list({ queue: "b", name: "even" })), names(made.filter((x) => x.queue === "b" && x.name === "even")));
    assert.deepEqual(names(await client.list({ rootId: "r1" })), names(made.slice(0, 4)));
    assert.deepEqual(names(await client.list({ correlationId: "c5" })), [made[5].id]);
    assert.deepEqual(names(await client.list({ status: "running" })), [runner.id]);
    assert.equal((await client.list({ status: null, queue: null })).length, 13);
    const err = await rejectionOf(client.list({ status: "done" }));
    assert.equal(err.message, "unknown status filter: done");
  });

  test("cancel: queued → canceled at once; running → flag only; terminal or missing → null", async (t) => {
    const { client } = await freshClient(t);
    const queued = await client.submit("job");
    const canceled = await client.cancel(queued.id);
    assert.equal(canceled.status, "canceled");
    assert.equal(canceled.cancel_requested_at_ms, null);
    assert.notEqual(canceled.completed_at_ms, null);
    assert.equal(await client.cancel(queued.id), null);
    assert.equal(await client.cancel("task_missing"), null);

    const running = await client.submit("job2");
    await claimTask(client.store, running);
    const flagged = await client.cancel(running.id);
    assert.equal(flagged.status, "running");
    assert.notEqual(flagged.cancel_requested_at_ms, null);
    // Cancel wins on completion: the result is dropped.
    const finished = await client.store.complete({ taskId: running.id, workerId: "w1", result: { dropped: true } });
    assert.equal(finished.status, "canceled");
    assert.equal(finished.result, null);

    const keyed = await client.submit("job3", {}, { key: "kc" });
    assert.equal((await client.cancelByKey("kc")).id, keyed.id);
    assert.equal((await client.get(keyed.id)).status, "canceled");
    assert.equal(await client.cancelByKey("kc"), null);
    assert.equal(await client.cancelByKey("unknown"), null);
  });

  test("retry re-queues failed and canceled tasks; resetAttempt zeroes the attempt; retryByKey", async (t) => {
    const { client } = await freshClient(t);
    const failed = await submitAndFail(client, "job", { key: "kr" });
    assert.equal(failed.status, "failed");
    assert.equal(failed.attempt, 1);
    const again = await client.retry(failed.id);
    assert.equal(again.status, "queued");
    assert.equal(again.attempt, 1);
    assert.equal(again.error, null);
    assert.equal(again.completed_at_ms, null);
    assert.equal(await client.retry(failed.id), null, "a queued task cannot be retried");
    await client.cancel(failed.id);
    const reset = await client.retryByKey("kr", { resetAttempt: true });
    assert.equal(reset.id, failed.id);
    assert.equal(reset.attempt, 0);
    assert.equal(reset.status, "queued");
    assert.equal(await client.retryByKey("unknown"), null);
    assert.equal(await client.retry("task_missing"), null);
    const done = await submitAndSucceed(client, "ok");
    assert.equal(await client.retry(done.id), null);
  });

  test("purge deletes finished tasks strictly older than the cutoff, oldest first, in limit-sized batches; keys cascade", async (t) => {
    const { client } = await freshClient(t);
    const live = await client.submit("live");
    const finished = [];
    for (let i = 0; i < 5; i++) finished.push(await submitAndSucceed(client, "done", { i }, { key: `k${i}` }));
    await waitUntilPast(finished.at(-1).completed_at_ms);
    assert.deepEqual(await client.purge({ olderThanMs: 3_600_000 }), [], "nothing is an hour old");
    const first = await client.purge({ limit: 2 });
    assert.equal(first.length, 2);
    const byCompletion = [...finished].sort((a, b) => a.completed_at_ms - b.completed_at_ms || 0);
    for (const id of first) assert.ok(byCompletion.slice(0, 3).some((x) => x.id === id), "oldest completions first");
    const rest = await client.purge();
    assert.deepEqual([...first, ...rest].sort(), finished.map((x) => x.id).sort());
    assert.equal(await client.getByKey("k0"), null, "the key went with its task");
    assert.deepEqual((await client.list()).map((x) => x.id), [live.id]);
    const fresh = await client.submit("done", {}, { key: "k0", conflict: "reject" });
    assert.equal(fresh.status, "queued", "a purged key is free again");
    const err = await rejectionOf(client.purge({ limit: 0 }));
    assert.equal(err.message, "limit must be >= 1, got 0");
  });

  test("stats: per queue, zero-filled, queues ascending; {} when empty; queueDepth counts queued rows", async (t) => {
    const { client } = await freshClient(t);
    assert.deepEqual(await client.stats(), {});
    await client.submit("job", {}, { queue: "zeta" });
    await client.submit("job", {}, { queue: "alpha", runAtDelayMs: 60_000 });
    const running = await client.submit("job", {}, { queue: "alpha" });
    await claimTask(client.store, running);
    await submitAndSucceed(client, "done", {}, { queue: "alpha" });
    const stats = await client.stats();
    assert.deepEqual(Object.keys(stats), ["alpha", "zeta"]);
    assert.deepEqual(stats, {
      alpha: { queued: 1, running: 1, succeeded: 1, failed: 0, canceled: 0 },
      zeta: { queued: 1, running: 0, succeeded: 0, failed: 0, canceled: 0 },
    });
    assert.deepEqual(Object.keys(stats.alpha), ["queued", "running", "succeeded", "failed", "canceled"]);
    assert.equal(await client.queueDepth("alpha", 5), 4, "the delayed task counts, the running one does not");
    assert.equal(await client.queueDepth("alpha", 1), 0);
    assert.equal(await client.queueDepth("empty", 3), 3);
    assert.equal(await client.queueDepth("alpha", 0), 0);
    const err = await rejectionOf(client.queueDepth("alpha", -1));
    assert.equal(err.message, "maxDepth must be a non-negative integer, got -1");
  });
});

// ---------------------------------------------------------------------------
describe("Postgres: wait, call and push wakeups", { skip: PG_SKIP, timeout: SUITE_TIMEOUT_MS }, () => {
  test("wait resolves with any terminal status; a timeout keeps the task and describes it", async (t) => {
    const { client } = await freshClient(t);
    const done = await submitAndSucceed(client, "ok", { r: 1 });
    assert.deepEqual(await client.wait(done.id), done);
    const failed = await submitAndFail(client, "bad");
    assert.equal((await client.wait(failed.id)).status, "failed");

    const queued = await client.submit("unhandled");
    const err = await rejectionOf(client.wait(queued.id, { timeoutMs: 300 }));
    assert.ok(err instanceof TaskTimeout);
    assert.match(err.message, /never claimed by a worker/);
    assert.match(err.message, /'unhandled'/);
    assert.equal(err.task.status, "queued");
    assert.equal((await client.get(queued.id)).status, "queued");

    const missing = await rejectionOf(client.waitByKey("nokey", { timeoutMs: 100 }));
    assert.match(missing.message, /no task under this key/);
    assert.equal(missing.key, "nokey");
  });

  test("call: the result, TaskFailed, TaskCanceled — with a worker on the same database", async (t) => {
    const { client, dsn } = await freshClient(t);
    const worker = makePgWorker(t, dsn, { retryBackoffMs: 0 });
    worker.worker.task("double", (ctx, p) => ({ doubled: p.n * 2, attempt: ctx.attempt }));
    worker.worker.task("reject", () => {
      throw Object.assign(new Error("nope"), { name: "ValueError" });
    });
    worker.worker.task("slow", async (ctx) => {
      while (!(await ctx.canceled())) await new Promise((r) => setTimeout(r, 20));
      return { late: true };
    });
    worker.start();

    assert.deepEqual(await client.call("double", { n: 21 }), { doubled: 42, attempt: 1 });
    const failed = await rejectionOf(client.call("reject", {}, { maxAttempts: 2 }));
    assert.ok(failed instanceof TaskFailed, String(failed));
    assert.equal(failed.type, "ValueError");
    assert.equal(failed.code, "handler_error");
    assert.equal(failed.message, "nope");

    const slow = client.call("slow", {}, { key: "slow-1" });
    slow.catch(() => {});
    const running = await waitFor(async () => {
      const task = await client.getByKey("slow-1");
      return task?.status === "running" ? task : null;
    });
    await client.cancel(running.id);
    const canceled = await rejectionOf(slow);
    assert.ok(canceled instanceof TaskCanceled, String(canceled));
    assert.equal(canceled.taskId, running.id);
  });

  test("LISTEN/NOTIFY: with 5 s polls on both sides, calls complete well within 3 s", async (t) => {
    const { client, dsn, database, adminDsn } = await freshClient(t);
    const worker = makePgWorker(t, dsn, { pollIntervalMs: 5000 });
    // The handler takes a moment, so the caller's first read sees it unfinished
    // and its sleep must be ended by the cairnq_done notification.
    worker.worker.task("echo", async (ctx, p) => {
      await new Promise((r) => setTimeout(r, 200));
      return p;
    });
    worker.start();
    // Warm up: both stores connected and listening, the worker idle.
    assert.deepEqual(await client.call("echo", { warm: true }, { waitTimeoutMs: 20_000 }), { warm: true });
    await waitForListeners(adminDsn, database, 2);

    // Each call starts right after the previous task finished, so the worker has
    // just begun a 5 s idle sleep that only the cairnq_queued notification (or a
    // remembered one) ends early; the caller sleeps 5 s unless cairnq_done ends it.
    for (let i = 0; i < 3; i++) {
      const started = Date.now();
      const result = await client.call("echo", { i, s: "é🌲" }, { pollMs: 5000, waitTimeoutMs: 20_000 });
      const elapsed = Date.now() - started;
      assert.deepEqual(result, { i, s: "é🌲" });
      assert.ok(elapsed < 3000, `call ${i} took ${elapsed}ms: a wake did not arrive`);
    }
  });

  test("a write by any writer (plain SQL through psql) ends a waiter's sleep: the trigger notifies", async (t) => {
    const { client, dsn, database, adminDsn } = await freshClient(t);
    const task = await client.submit("external");
    await waitForListeners(adminDsn, database, 1);
    await claimTask(client.store, task, { workerId: "psql-worker" });
    const started = Date.now();
    const waiting = client.wait(task.id, { pollMs: 5000, timeoutMs: 20_000 });
    assert.equal(await settlesWithin(waiting, 300), false, "the task is still running");
    await psql(
      dsn,
      `update cairnq_tasks set status = 'succeeded', result = '{"by": "psql"}'::jsonb, progress = 1,
         lease_until_ms = null, completed_at_ms = (extract(epoch from now()) * 1000)::bigint,
         updated_at_ms = (extract(epoch from now()) * 1000)::bigint
       where id = '${task.id}'`,
    );
    const done = await waiting;
    const elapsed = Date.now() - started;
    assert.equal(done.status, "succeeded");
    assert.deepEqual(done.result, { by: "psql" });
    assert.ok(elapsed < 3000, `the wait took ${elapsed}ms: the cairnq_done notification did not end its 5 s sleep`);
  });

  test("a PostgresStore shared by a client and a worker: its wakes serve both", async (t) => {
    const { dsn, database, adminDsn } = await createDatabase(t);
    const store = new PostgresStore(dsn, { max: 4 });
    const client = new CairnQ(store);
    defer(t, () => client.close());
    const worker = makePgWorker(t, dsn, { store, pollIntervalMs: 5000 });
    worker.worker.task("add", (ctx, p) => p.a + p.b);
    worker.start();
    assert.equal(await client.call("add", { a: 1, b: 2 }, { waitTimeoutMs: 20_000 }), 3);
    await waitForListeners(adminDsn, database, 1);
    const listening = (await backendQueries(adminDsn, database)).filter(isListenQuery);
    assert.equal(listening.length, 1, "one store, one LISTEN connection");
    const started = Date.now();
    assert.equal(await client.call("add", { a: 2, b: 3 }, { pollMs: 5000, waitTimeoutMs: 20_000 }), 5);
    const elapsed = Date.now() - started;
    assert.ok(elapsed < 3000, `the call took ${elapsed}ms`);
  });
});

// ---------------------------------------------------------------------------
describe("Postgres: backpressure and retention", { skip: PG_SKIP, timeout: SUITE_TIMEOUT_MS }, () => {
  test("a full queue rejects with QueueFull and writes nothing; room made elsewhere lets a waiting submit in", async (t) => {
    const { client, dsn } = await freshClient(t, { maxQueueDepth: { limited: 3 }, maxQueueWaitMs: 300, queuePollIntervalMs: 20 });
    const queued = [];
    for (let i = 0; i < 3; i++) queued.push(await client.submit("job", { i }, { queue: "limited" }));
    const started = Date.now();
    const err = await rejectionOf(client.submit("job", { i: 3 }, { queue: "limited" }));
    assert.ok(err instanceof QueueFull, String(err));
    assert.equal(err.queue, "limited");
    assert.equal(err.maxDepth, 3);
    assert.ok(err.waitedMs >= 300, `waitedMs ${err.waitedMs}`);
    assert.ok(Date.now() - started >= 300);
    assert.equal((await client.list({ queue: "limited" })).length, 3, "nothing was enqueued");
    // Other queues are not gated by a record limit.
    for (let i = 0; i < 5; i++) await client.submit("job", {}, { queue: "free" });

    // A second client on the same database, willing to wait.
    const patient = openPgClient(t, dsn, { maxQueueDepth: 3, maxQueueWaitMs: 30_000, queuePollIntervalMs: 20 });
    const waiting = patient.submit("job", { late: true }, { queue: "limited" });
    waiting.catch(() => {});
    assert.equal(await settlesWithin(waiting, 300), false, "the queue is full");
    await client.cancel(queued[0].id);
    const admitted = await waiting;
    assert.deepEqual(admitted.payload, { late: true });
    assert.equal((await client.list({ queue: "limited", status: "queued" })).length, 3);
  });

  test("retention with a short interval purges finished tasks and keeps live ones", async (t) => {
    const { dsn } = await createDatabase(t);
    const setup = openPgClient(t, dsn);
    const live = await setup.submit("live");
    const finished = [];
    for (let i = 0; i < 3; i++) finished.push(await submitAndSucceed(setup, "done", { i }));
    finished.push(await submitAndFail(setup, "broken"));
    const errors = [];
    const swept = openPgClient(t, dsn, { retention: { olderThanMs: 0, intervalMs: 50, onError: (e) => errors.push(e) } });
    await waitFor(async () => (await setup.list()).length === 1, { timeoutMs: 20_000, message: "retention never purged" });
    assert.deepEqual((await setup.list()).map((x) => x.id), [live.id]);
    for (const task of finished) assert.equal(await setup.get(task.id), null);
    // It keeps sweeping: a task finished later goes too.
    const later = await submitAndSucceed(setup, "done", { later: true });
    await waitFor(async () => (await setup.get(later.id)) === null, { timeoutMs: 20_000 });
    assert.equal((await setup.get(live.id)).status, "queued");
    assert.deepEqual(errors, []);
    await swept.close();
  });
});
