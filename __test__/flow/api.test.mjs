// Flow control's API (docs/api.md, "Flow control") in one process, on both
// dialects: refusals that name the field and write nothing, a task's group on
// its context and in its metadata, and the latest declaration winning for
// every declaring worker (logged once by the worker that replaced another's).
import assert from "node:assert/strict";
import { describe } from "node:test";

import { CairnQ, PostgresStore, Worker, createPoolExecutor } from "../../index.mjs";
import { forEachDialect, postgres, setupWorker, sqlite, test } from "../support/dialects.mjs";
import { defer, manageWorker, runPython, waitFor } from "../support/helpers.mjs";
import { PG_SKIP, psql } from "../support/pg-helpers.mjs";
import { staysFalse } from "../support/worker-helpers.mjs";

/** The flow-control tables the database holds (none until a worker declares limits). */
async function flowTables(dialect, db) {
  if (dialect === sqlite) {
    const code = [
      "import sqlite3, sys",
      "c = sqlite3.connect('file:' + sys.argv[1] + '?mode=ro', uri=True)",
      "print(','.join(r[0] for r in c.execute(\"select name from sqlite_master where type = 'table' and name like 'cairnq_flow%' order by name\")))",
    ].join("\n");
    return (await runPython(code, [db])).trim();
  }
  return (
    await psql(
      db,
      "select string_agg(tablename, ',' order by tablename) from pg_tables where tablename like 'cairnq_flow%'",
    )
  ).trim();
}

const NOOP = async () => {};

forEachDialect("flow control API", (dialect) => {
  test("bad rateLimit and groupConcurrency are refused naming the field; nothing is declared", async (t) => {
    const { client, db, handle, worker } = await setupWorker(t, dialect);
    const cases = [
      [{ rateLimit: { max: 0, perMs: 1000 } }, /^rateLimit\.max must be an integer >= 1, got 0$/],
      [{ rateLimit: { max: -2, perMs: 1000 } }, /^rateLimit\.max must be an integer >= 1, got -2$/],
      [{ rateLimit: { max: 2.5, perMs: 1000 } }, /^rateLimit\.max must be an integer >= 1, got 2\.5$/],
      [{ rateLimit: { max: NaN, perMs: 1000 } }, /^rateLimit\.max must be an integer >= 1, got NaN$/],
      [{ rateLimit: { max: "5", perMs: 1000 } }, /^rateLimit\.max must be a number, got "5"$/],
      [{ rateLimit: { perMs: 1000 } }, /^rateLimit\.max must be a number, got undefined$/],
      [{ rateLimit: { max: 5, perMs: 0 } }, /^rateLimit\.perMs must be >= 1, got 0$/],
      [{ rateLimit: { max: 5, perMs: 0.5 } }, /^rateLimit\.perMs must be >= 1, got 0\.5$/],
      [{ rateLimit: { max: 5, perMs: -1000 } }, /^rateLimit\.perMs must be >= 1, got -1000$/],
      [{ rateLimit: { max: 5, perMs: Infinity } }, /^rateLimit\.perMs must be a finite number of milliseconds/],
      [{ rateLimit: { max: 5, perMs: 1000, perGroup: 1 } }, /^rateLimit\.perGroup must be a boolean, got 1$/],
      [
        { rateLimit: { max: 5, perMs: 1000, per: 1 } },
        /^unknown key "per" in rateLimit \(known: key, max, perMs, perGroup\)$/,
      ],
      [{ rateLimit: { key: "", max: 5, perMs: 1000 } }, /^rateLimit\.key must be a non-empty string, got ""$/],
      [{ rateLimit: { key: 7, max: 5, perMs: 1000 } }, /^rateLimit\.key must be a string, got 7$/],
      [{ rateLimit: { key: ["openai"], max: 5, perMs: 1000 } }, /^rateLimit\.key must be a string, got an array$/],
      [
        { rateLimit: { key: "k".repeat(513), max: 5, perMs: 1000 } },
        /^rateLimit\.key must be at most 512 bytes of UTF-8, got 513 bytes$/,
      ],
      [{ rateLimit: { key: "openai", max: 0, perMs: 1000 } }, /^rateLimit\.max must be an integer >= 1, got 0$/],
      [{ rateLimit: { key: "openai", perMs: 1000 } }, /^rateLimit\.max must be a number, got undefined$/],
      [{ rateLimit: 60 }, /^rateLimit must be an object, got 60$/],
      [{ groupConcurrency: 0 }, /^groupConcurrency must be an integer >= 1, got 0$/],
      [{ groupConcurrency: 1.5 }, /^groupConcurrency must be an integer >= 1, got 1\.5$/],
      [{ groupConcurrency: "2" }, /^groupConcurrency must be a number, got "2"$/],
      [{ groupConcurrency: -Infinity }, /^groupConcurrency must be an integer >= 1, got -Infinity$/],
    ];
    for (const [options, message] of cases) {
      assert.throws(() => worker.task("summarize", options, NOOP), { message }, JSON.stringify(options));
    }
    // A refused registration registers nothing: a run declares nothing and
    // claims nothing of the name.
    const task = await client.submit("summarize", {});
    handle.start();
    assert.ok(await staysFalse(async () => (await client.get(task.id)).status !== "queued", 300));
    await handle.stopAndDrain();
    assert.equal(await flowTables(dialect, db), "");
  });

  test("a group that is not a non-empty string is refused naming it; nothing is written", async (t) => {
    const { client, db } = await dialect.open(t);
    const cases = [
      ["", /^group must be a non-empty string, got ""$/],
      [42, /^group must be a string, got 42$/],
      [{ id: 1 }, /^group must be a string, got an object$/],
      [true, /^group must be a string, got true$/],
      [["a"], /^group must be a string, got an array$/],
    ];
    for (const [group, message] of cases) {
      await assert.rejects(client.submit("export", {}, { group }), { message }, JSON.stringify(group));
    }
    await assert.rejects(client.submit("export", {}, { group: "g", metadata: [1] }), {
      message: /^group needs metadata to be an object, got \[1\]$/,
    });
    assert.deepEqual(await client.list(), []);
    // A grouped submit keeps the group in the metadata and creates nothing else.
    const task = await client.submit("export", {}, { group: "customer:42", metadata: { by: "test" } });
    assert.deepEqual(task.metadata, { by: "test", "cairnq.group": "customer:42" });
    assert.deepEqual((await client.get(task.id)).metadata, task.metadata);
    assert.equal(await flowTables(dialect, db), "");
  });

  test("a handler reads its task's group as ctx.group (null without one)", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect);
    const seen = new Map();
    worker.task("export", { groupConcurrency: 2 }, async (ctx) => {
      seen.set(ctx.taskId, ctx.group);
    });
    const grouped = await client.submit("export", {}, { group: "customer:7" });
    const plain = await client.submit("export", {});
    handle.start();
    await waitFor(() => seen.size === 2, { timeoutMs: 20_000 });
    assert.equal(seen.get(grouped.id), "customer:7");
    assert.equal(seen.get(plain.id), null);
  });

  test("the latest declaration wins for every declaring worker; the replacing one warns once", async (t) => {
    const { client, db } = await dialect.open(t);
    const warnings = [];
    const onWarning = (warning) => {
      if (warning.code === "CAIRNQ_FLOW_LIMITS_REPLACED") warnings.push(warning);
    };
    process.on("warning", onWarning);
    t.after(() => process.off("warning", onWarning));
    for (let i = 0; i < 5; i += 1) await client.submit("summarize", { i });
    const started = [];
    const handler = async (ctx) => {
      started.push(ctx.taskId);
    };
    const first = dialect.makeWorker(t, db);
    first.worker.task("summarize", { rateLimit: { max: 1, perMs: 600_000 } }, handler);
    first.start();
    await waitFor(() => started.length === 1, { timeoutMs: 20_000 });
    assert.ok(await staysFalse(() => started.length > 1, 300));
    assert.equal(warnings.length, 0);

    const second = dialect.makeWorker(t, db);
    second.worker.task("summarize", { rateLimit: { max: 3, perMs: 600_000 } }, handler);
    second.start();
    await waitFor(() => started.length === 3, { timeoutMs: 20_000 });
    assert.ok(await staysFalse(() => started.length > 3, 500));
    await waitFor(() => warnings.length === 1, { timeoutMs: 5_000 });
    assert.match(
      warnings[0].message,
      /^task "summarize": this worker declares rateLimit \{ max: 3, perMs: 600000 \}, replacing rateLimit \{ max: 1, perMs: 600000 \} declared by worker_\w+ at \d{4}-\d\d-\d\dT[\d:.]+Z; the latest declaration wins/,
    );
    assert.ok(warnings[0].message.includes(first.worker.workerId));
    // Limited tasks wait in the queue: not failed, no attempt used.
    const queued = await client.list({ status: "queued" });
    assert.equal(queued.length, 2);
    assert.ok(queued.every((task) => task.attempt === 0));
    await first.stopAndDrain();
    await second.stopAndDrain();
    assert.equal(warnings.length, 1);
    assert.equal(await flowTables(dialect, db), FLOW_TABLES);
  });

  test("two names of one worker sharing a key with different rates are refused, naming the key and both", async (t) => {
    const { client, db, worker } = await setupWorker(t, dialect);
    await client.connect();
    worker.task("chat", { rateLimit: { key: "openai", max: 10, perMs: 1000 } }, NOOP);
    assert.throws(() => worker.task("embed", { rateLimit: { key: "openai", max: 20, perMs: 1000 } }, NOOP), {
      message:
        'task "embed" declares rateLimit key "openai" as { max: 20, perMs: 1000 }, but task "chat" of this worker declares it as { max: 10, perMs: 1000 }: the names sharing a key declare the same max, perMs and perGroup',
    });
    assert.throws(
      () => worker.task("embed", { rateLimit: { key: "openai", max: 10, perMs: 1000, perGroup: true } }, NOOP),
      { message: /declares rateLimit key "openai" as \{ max: 10, perMs: 1000, perGroup: true \}/ },
    );
    worker.task("embed", { rateLimit: { key: "openai", max: 10, perMs: 1000 } }, NOOP);
    assert.equal(await flowTables(dialect, db), "");
  });

  test("a key declared otherwise by another worker is replaced, and the replacing worker warns naming both rates", async (t) => {
    const { db } = await dialect.open(t);
    const warnings = [];
    const onWarning = (warning) => {
      if (warning.code === "CAIRNQ_FLOW_LIMITS_REPLACED") warnings.push(warning);
    };
    process.on("warning", onWarning);
    t.after(() => process.off("warning", onWarning));
    const first = dialect.makeWorker(t, db);
    first.worker.task("chat", { rateLimit: { key: "openai", max: 10, perMs: 1000 } }, NOOP);
    first.start();
    await waitFor(async () => (await flowTables(dialect, db)) === FLOW_TABLES, { timeoutMs: 20_000 });
    const second = dialect.makeWorker(t, db);
    second.worker.task("embed", { rateLimit: { key: "openai", max: 30, perMs: 1000 } }, NOOP);
    second.start();
    await waitFor(() => warnings.length === 1, { timeoutMs: 20_000 });
    assert.match(
      warnings[0].message,
      /^rateLimit key "openai": this worker declares \{ max: 30, perMs: 1000 \} \(task "embed"\), replacing \{ max: 10, perMs: 1000 \} declared by worker_\w+ at [\d-]+T[\d:.]+Z; the latest declaration wins for every task name that declares the key$/,
    );
    await first.stopAndDrain();
    await second.stopAndDrain();
  });

  test("retryAfter(ms, { limit: true }) holds every name of the key until ms from now; refusals name the field", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect, { concurrency: 4 });
    const shared = { rateLimit: { key: "openai", max: 100, perMs: 1000 } };
    const starts = [];
    let pushedAt = null;
    worker.task("chat", shared, async (ctx) => {
      const start = { name: "chat", id: ctx.taskId, at: Date.now(), attempt: ctx.attempt };
      starts.push(start);
      if (pushedAt === null) {
        pushedAt = start.at;
        return ctx.retryAfter(800, { limit: true });
      }
    });
    worker.task("embed", shared, async (ctx) => {
      starts.push({ name: "embed", id: ctx.taskId, at: Date.now(), attempt: ctx.attempt });
    });
    const refusals = [];
    worker.task("plain", async (ctx) => {
      for (const options of [{ limit: true }, { limits: true }, { limit: "yes" }, 5]) {
        await ctx.retryAfter(100, options).catch((err) => refusals.push(err.message));
      }
    });
    const chat = await client.submit("chat", {});
    handle.start();
    // Once the push-back has committed (the task queued again, due later),
    // the other name's tasks arrive.
    await waitFor(
      async () => {
        const row = await client.get(chat.id);
        return pushedAt !== null && row.status === "queued" && row.run_at_ms >= pushedAt + 800;
      },
      { timeoutMs: 20_000 },
    );
    const embeds = [];
    for (let i = 0; i < 3; i += 1) embeds.push(await client.submit("embed", { i }));
    const plain = await client.submit("plain", {});
    for (const task of [chat, ...embeds, plain]) {
      assert.equal((await client.wait(task.id, { timeoutMs: 20_000 })).status, "succeeded", task.id);
    }
    // Nothing drawing from the key started before the push-back's end; the
    // pushed task ran again with its attempt given back.
    const after = starts.filter((s) => !(s.name === "chat" && s.at === pushedAt));
    assert.equal(after.length, 4, JSON.stringify(starts));
    for (const start of after)
      assert.ok(start.at >= pushedAt + 800, `${start.name} started ${start.at - pushedAt} ms after`);
    assert.deepEqual(
      starts.filter((s) => s.name === "chat").map((s) => s.attempt),
      [1, 1],
    );
    assert.deepEqual(refusals, [
      "ctx.retryAfter's limit: true needs a rateLimit on task \"plain\"'s registration, which declares none",
      'unknown key "limits" in ctx.retryAfter options (known: limit)',
      'limit must be a boolean, got "yes"',
      "ctx.retryAfter options must be an object, got 5",
    ]);
    // The refused calls wrote nothing: the task ran once, first attempt.
    const row = await client.get(plain.id);
    assert.equal(row.attempt, 1);
  });
});

const FLOW_TABLES = "cairnq_flow_keys,cairnq_flow_limits,cairnq_flow_starts";

describe("flow control through the application's executor", { skip: PG_SKIP }, () => {
  test("a rate limit and a group concurrency hold on a store over a pg pool", async (t) => {
    const db = await postgres.createDatabase(t);
    const executor = await createPoolExecutor(db);
    defer(t, () => executor.close());
    const client = new CairnQ(new PostgresStore(executor));
    defer(t, () => client.close());
    for (const group of ["a", "a", "a", "b", "b"]) await client.submit("export", {}, { group });
    const running = new Map();
    const started = [];
    let overlaps = 0;
    const handle = manageWorker(
      t,
      new Worker(new PostgresStore(executor), ["default"], { pollIntervalMs: 20, concurrency: 4 }),
    );
    handle.worker.task("export", { groupConcurrency: 1, rateLimit: { max: 3, perMs: 600_000 } }, async (ctx) => {
      started.push(ctx.taskId);
      running.set(ctx.group, (running.get(ctx.group) ?? 0) + 1);
      if (running.get(ctx.group) > 1) overlaps += 1;
      await new Promise((resolve) => setTimeout(resolve, 30));
      running.set(ctx.group, running.get(ctx.group) - 1);
    });
    handle.start();
    await waitFor(() => started.length === 3, { timeoutMs: 20_000 });
    assert.ok(await staysFalse(() => started.length > 3, 500));
    assert.equal(overlaps, 0);
    const queued = await client.list({ status: "queued" });
    assert.equal(queued.length, 2);
    assert.ok(queued.every((task) => task.attempt === 0));
    await handle.stopAndDrain();
    assert.equal(await flowTables(postgres, db), FLOW_TABLES);
  });
});
