// CairnQ on Postgres (docs/protocol.md, "Connection setup (Postgres)",
// "Statements", "Wakes (LISTEN/NOTIFY)"): what only Postgres has — lazy
// migrations run against a real server, jsonb columns and numeric types, the
// advisory key lock shared with other SDKs, and LISTEN/NOTIFY wakeups. The
// client behaviours both dialects share run on Postgres from the shared suites
// (client/, worker/, housekeeping.test.mjs through support/dialects.mjs). Every test
// gets a database of its own (support/pg-helpers.mjs `createDatabase`), dropped when it
// ends.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";

import { AlreadyExists, CairnQ, PostgresStore } from "../../index.mjs";
import {
  TASK_COLUMNS,
  TASK_ID,
  claimTask,
  defer,
  rejectionOf,
  settlesWithin,
  submitAndFail,
  submitAndSucceed,
  waitFor,
} from "../support/helpers.mjs";
import {
  PG_SKIP,
  POSTGRES_MIGRATIONS,
  PSQL,
  backendQueries,
  createDatabase,
  isListenQuery,
  makePgWorker,
  openPgClient,
  psql,
  waitForListeners,
} from "../support/pg-helpers.mjs";

// A hung test must fail, not hold CI: generous for a loaded machine.
const SUITE_TIMEOUT_MS = 180_000;

/** A client on a fresh database of its own. */
async function freshClient(t, opts = {}) {
  const db = await createDatabase(t);
  return { ...db, client: openPgClient(t, db.dsn, opts) };
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
    assert.deepEqual(ledger.split("\n"), POSTGRES_MIGRATIONS);
    assert.equal(await psql(dsn, "select value from cairnq_meta where key = 'schema_version'"), "10");
    assert.equal(await psql(dsn, "select value from cairnq_meta where key = 'protocol_version'"), "1");
    assert.equal(await client.store.protocolVersion(), 1);
  });

  test("connect() is idempotent and shared by concurrent callers; four clients cold-start one database at once", async (t) => {
    const { dsn } = await createDatabase(t);
    const clients = Array.from({ length: 4 }, () => openPgClient(t, dsn));
    await Promise.all(clients.flatMap((c) => [c.connect(), c.connect(), c.stats()]));
    assert.equal(await psql(dsn, "select count(*) from cairnq_migrations"), "10");
    const task = await clients[0].submit("job", { n: 1 });
    assert.equal((await clients[3].get(task.id)).id, task.id);
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
    assert.equal(
      await psql(dsn, `select payload #>> '{numbers,big}' from cairnq_tasks where id = '${task.id}'`),
      "9007199254740991",
    );

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
    const flags = await client.store.heartbeatBatch({
      taskIds: [a.id, b.id, "task_missing"],
      workerId: "w1",
      leaseMs: 5000,
    });
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
describe("Postgres: wait, call and push wakeups", { skip: PG_SKIP, timeout: SUITE_TIMEOUT_MS }, () => {
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
