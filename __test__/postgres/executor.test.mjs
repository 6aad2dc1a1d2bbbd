// Postgres inside the application's own connection (docs/api.md, "PgExecutor"):
// a store given a PgExecutor runs every statement, migration, claim session,
// keyed submit and LISTEN through it and never closes it; `completeIn` /
// `ctx.succeedIn` commit the caller's rows and the settlement together, on
// executor and DSN stores; SQLite refuses with UnsupportedBackend. The
// executor is node-postgres (`pg`, a devDependency) as an application would
// use it, on a database of each test's own.
import { describe, test } from "node:test";
import assert from "node:assert/strict";

import pg from "pg";

import {
  CairnQ,
  ListenUnavailable,
  LostLease,
  PostgresStore,
  SchemaMismatch,
  UnsupportedBackend,
  Worker,
  createPoolExecutor,
} from "../../index.mjs";
import { claimTask, defer, manageWorker, openClient, rejectionOf, spawnFixture, waitFor } from "../support/helpers.mjs";
import { PG_SKIP, POSTGRES_MIGRATIONS, createDatabase, dsnWithDatabase, psql } from "../support/pg-helpers.mjs";

const SUITE_TIMEOUT_MS = 180_000;
const UNSUPPORTED =
  "this store cannot share a transaction with the caller — completeIn requires a Postgres store (see PgExecutor)";

/** A pool executor on a fresh database, ended when the test ends. */
async function openExecutor(t, opts = {}) {
  const db = await createDatabase(t);
  const dsn = `${db.dsn}${db.dsn.includes("?") ? "&" : "?"}application_name=app_executor`;
  const executor = await createPoolExecutor(dsn, opts);
  defer(t, () => executor.close());
  return { ...db, executor, dsn };
}

/** An executor that counts what the store asks of it. */
function counting(executor) {
  const calls = { query: 0, exec: 0, tx: 0, listen: 0 };
  const wrapped = {
    query: (text, values) => (calls.query++, executor.query(text, values)),
    exec: (sql) => (calls.exec++, executor.exec(sql)),
    tx: (fn) => (calls.tx++, executor.tx(fn)),
    listen: (...args) => (calls.listen++, executor.listen(...args)),
  };
  return { calls, wrapped };
}

function closeLater(t, closable) {
  defer(t, () => closable.close());
  return closable;
}

describe("a store on the application's executor", { skip: PG_SKIP, timeout: SUITE_TIMEOUT_MS }, () => {
  test("migrates, submits, claims and settles through the executor, opening no connection of its own", async (t) => {
    const { executor, adminDsn, database } = await openExecutor(t);
    const { calls, wrapped } = counting(executor);
    const client = closeLater(t, CairnQ.postgres(wrapped));
    const task = await client.submit("job", { n: 1 });
    const keyed = await client.submit("job", { n: 2 }, { key: "k" });
    assert.equal((await client.submit("job", { n: 3 }, { key: "k" })).id, keyed.id, "reuse through the key's lock");
    assert.ok(calls.exec >= 1 && calls.tx >= 2 && calls.query >= 3, JSON.stringify(calls));

    const worker = manageWorker(t, Worker.postgres(wrapped, { pollIntervalMs: 20 }));
    worker.worker.task("job", async (_ctx, payload) => ({ doubled: payload.n * 2 }));
    worker.start();
    const done = await client.wait(task.id, { timeoutMs: 20_000 });
    assert.deepEqual(done.result, { doubled: 2 });
    assert.equal(typeof done.created_at_ms, "number", "int8 from pg arrives as a string and leaves as a number");
    assert.equal(typeof done.completed_at_ms, "number");

    const others = await psql(
      adminDsn,
      `select count(*) from pg_stat_activity where datname = '${database}' and application_name <> 'app_executor'`,
    );
    assert.equal(others, "0", "every connection to the database is the executor's");
  });

  test("close() leaves the executor open; the store can be opened again on it", async (t) => {
    const { executor } = await openExecutor(t);
    const client = CairnQ.postgres(executor);
    await client.submit("job", null);
    await client.close();
    assert.deepEqual(await executor.query("select 1 as one", []), [{ one: 1 }]);
    const again = closeLater(t, CairnQ.postgres(executor));
    assert.equal((await again.list({})).length, 1);
  });

  test("an object that is not an executor is refused with a clear TypeError", () => {
    for (const bad of [{}, { query() {} }, 42, null]) {
      assert.throws(() => new PostgresStore(/** @type {any} */ (bad)), {
        name: "TypeError",
        message: /a connection string or a PgExecutor/,
      });
    }
  });

  test("LISTEN through executor.listen wakes a waiting worker; notifications reach watch", async (t) => {
    const { executor } = await openExecutor(t);
    const { calls, wrapped } = counting(executor);
    const client = closeLater(t, CairnQ.postgres(wrapped));
    await client.store.connect();
    await waitFor(() => client.store._native.listening(), { timeoutMs: 20_000, message: "never listening" });
    assert.equal(calls.listen, 1);
    const signals = [];
    const stop = client.watch({ pollMs: 60_000 }, (s) => signals.push(s));
    defer(t, stop);
    const task = await client.submit("job", null, { queue: "pushq" });
    await waitFor(() => signals.some((s) => s.reason === "queued" && s.queue === "pushq"), {
      timeoutMs: 20_000,
      message: "no queued signal",
    });
    await client.cancel(task.id);
    await waitFor(() => signals.some((s) => s.reason === "done" && s.taskId === task.id), {
      timeoutMs: 20_000,
      message: "no done signal",
    });
  });

  test("an executor's notification reaches watch callbacks inside its onNotify, queue-filtered, past a throwing one", async (t) => {
    const { executor } = await openExecutor(t);
    const everything = [];
    const onPushq = [];
    // What each watch had heard when the executor's onNotify returned.
    const heardAtReturn = [];
    const { query, exec, tx } = executor;
    const listen = (channels, onNotify, onClose) =>
      executor.listen(
        channels,
        (channel, payload) => {
          onNotify(channel, payload);
          heardAtReturn.push({ payload, everything: everything.slice(), onPushq: onPushq.slice() });
        },
        onClose,
      );
    const client = closeLater(t, CairnQ.postgres({ query, exec, tx, listen }));
    await client.connect();
    await waitFor(() => client.store._native.listening(), { timeoutMs: 20_000, message: "never listening" });
    const stops = [
      client.watch({ queues: ["pushq"], pollMs: 600_000 }, (s) => onPushq.push(s)),
      client.watch({ pollMs: 600_000 }, () => {
        throw new Error("a broken consumer");
      }),
      client.watch({ pollMs: 600_000 }, (s) => everything.push(s)),
    ];
    defer(t, () => stops.forEach((stop) => stop()));

    const heard = (payload) =>
      waitFor(() => heardAtReturn.find((h) => h.payload === payload), {
        timeoutMs: 20_000,
        message: `no notification ${payload}`,
      });
    const queued = { reason: "queued", queue: "pushq" };
    await client.submit("job", null, { queue: "pushq" });
    assert.deepEqual(await heard("pushq"), { payload: "pushq", everything: [queued], onPushq: [queued] });
    const other = { reason: "queued", queue: "otherq" };
    const task = await client.submit("job", null, { queue: "otherq" });
    assert.deepEqual(await heard("otherq"), { payload: "otherq", everything: [queued, other], onPushq: [queued] });
    await client.cancel(task.id);
    const done = { reason: "done", taskId: task.id };
    assert.deepEqual(await heard(task.id), {
      payload: task.id,
      everything: [queued, other, done],
      onPushq: [queued, done],
    });
    assert.deepEqual(everything, [queued, other, done], "each notification is delivered once");
  });

  test("without listen it polls; a listen that is unavailable is not retried, a failing one is", async (t) => {
    const { executor } = await openExecutor(t);
    const { query, exec, tx } = executor;
    const polling = closeLater(t, CairnQ.postgres({ query, exec, tx }));
    const task = await polling.submit("job", null);
    const worker = manageWorker(t, Worker.postgres({ query, exec, tx }, { pollIntervalMs: 20 }));
    worker.worker.task("job", async () => "polled");
    worker.start();
    assert.equal((await polling.wait(task.id, { timeoutMs: 20_000 })).result, "polled");
    assert.equal(polling.store._native.listening(), false);

    let unavailable = 0;
    let transient = 0;
    const refusing = closeLater(
      t,
      CairnQ.postgres({
        query,
        exec,
        tx,
        listen: async () => {
          unavailable++;
          throw new ListenUnavailable("no LISTEN behind this pooler");
        },
      }),
    );
    const flaky = closeLater(
      t,
      CairnQ.postgres({
        query,
        exec,
        tx,
        listen: async () => {
          transient++;
          throw new Error("connection reset");
        },
      }),
    );
    await Promise.all([refusing.store.connect(), flaky.store.connect()]);
    // The flaky one retries after 1 s, then 2 s: by its third try, a retry of
    // the refused one would have happened twice.
    await waitFor(() => transient >= 3, { timeoutMs: 20_000, message: "the transient failure was not retried" });
    assert.equal(unavailable, 1, "ListenUnavailable turns push off for good");
    assert.equal(await refusing.list({}).then((l) => l.length), 1, "the store still works, polling");
  });

  test("bigint, decimal-text and number integers all come back as JS numbers", async (t) => {
    const { executor } = await openExecutor(t);
    const asBigInt = (rows) =>
      rows.map((row) =>
        Object.fromEntries(Object.entries(row).map(([k, v]) => [k, k.endsWith("_ms") && v != null ? BigInt(v) : v])),
      );
    const bigints = {
      query: (text, values) => executor.query(text, values).then(asBigInt),
      exec: (sql) => executor.exec(sql),
      tx: (fn) =>
        executor.tx((s) => fn({ query: (text, values) => s.query(text, values).then(asBigInt), exec: s.exec })),
    };
    const client = closeLater(t, CairnQ.postgres(bigints));
    const task = await client.submit("job", { a: 1 }, { runAtDelayMs: 5_000 });
    const read = await client.get(task.id);
    for (const column of ["run_at_ms", "created_at_ms", "updated_at_ms"]) {
      assert.equal(typeof read[column], "number", column);
    }
    assert.equal(read.lease_until_ms, null, "a null stays null");
    assert.equal(read.run_at_ms - read.created_at_ms, 5_000);
  });

  test("createPoolExecutor installs no global int8 parser", async (t) => {
    await openExecutor(t);
    assert.equal(pg.types.getTypeParser(20, "text")("9007199254740993"), "9007199254740993");
  });
});

describe("completeIn and ctx.succeedIn", { skip: PG_SKIP, timeout: SUITE_TIMEOUT_MS }, () => {
  /** An executor store or a DSN store on a fresh database with an `invoices` table. */
  async function open(t, kind) {
    const { executor, dsn } = await openExecutor(t);
    await executor.exec("create table invoices (task_id text primary key, amount int not null)");
    const client = closeLater(t, kind === "executor" ? CairnQ.postgres(executor) : CairnQ.postgres(dsn));
    const invoices = () => executor.query("select task_id, amount from invoices order by amount", []);
    return { client, store: client.store, invoices, executor, source: kind === "executor" ? executor : dsn };
  }

  for (const kind of ["executor", "dsn"]) {
    test(`${kind}: the caller's rows and the settlement commit together`, async (t) => {
      const { client, store, invoices } = await open(t, kind);
      const task = await client.submit("bill", null);
      await claimTask(store, task, { workerId: "w1" });
      const { task: row, value } = await store.completeIn({ taskId: task.id, workerId: "w1" }, async (s) => {
        await s.query("insert into invoices (task_id, amount) values ($1, $2)", [task.id, 42]);
        const [found] = await s.query("select amount from invoices where task_id = $1", [task.id]);
        return { amount: found.amount };
      });
      assert.equal(row.status, "succeeded");
      assert.deepEqual(row.result, { amount: 42 });
      assert.deepEqual(value, { amount: 42 });
      assert.deepEqual(await invoices(), [{ task_id: task.id, amount: 42 }]);
    });

    test(`${kind}: a lost lease rolls the caller's rows back with LostLease`, async (t) => {
      const { client, store, invoices } = await open(t, kind);
      const task = await client.submit("bill", null);
      await claimTask(store, task, { workerId: "w1" });
      const err = await rejectionOf(
        store.completeIn({ taskId: task.id, workerId: "someone-else" }, async (s) => {
          await s.query("insert into invoices (task_id, amount) values ($1, $2)", [task.id, 1]);
        }),
      );
      assert.ok(err instanceof LostLease, String(err));
      assert.equal(err.taskId, task.id);
      assert.deepEqual(await invoices(), []);
      assert.equal((await client.get(task.id)).status, "running");
    });

    test(`${kind}: a pending cancel ends the row canceled and still commits the rows`, async (t) => {
      const { client, store, invoices } = await open(t, kind);
      const task = await client.submit("bill", null);
      await claimTask(store, task, { workerId: "w1" });
      await client.cancel(task.id);
      const { task: row } = await store.completeIn({ taskId: task.id, workerId: "w1" }, async (s) => {
        await s.query("insert into invoices (task_id, amount) values ($1, $2)", [task.id, 7]);
        return "ok";
      });
      assert.equal(row.status, "canceled");
      assert.deepEqual(await invoices(), [{ task_id: task.id, amount: 7 }]);
    });

    test(`${kind}: a throwing fn rolls back and settles nothing; exec runs parameterless SQL`, async (t) => {
      const { client, store, invoices } = await open(t, kind);
      const task = await client.submit("bill", null);
      await claimTask(store, task, { workerId: "w1" });
      const boom = new Error("boom");
      const err = await rejectionOf(
        store.completeIn({ taskId: task.id, workerId: "w1" }, async (s) => {
          await s.exec(`insert into invoices values ('${task.id}', 1); insert into invoices values ('x', 2)`);
          throw boom;
        }),
      );
      assert.equal(err, boom);
      assert.deepEqual(await invoices(), []);
      assert.equal((await client.get(task.id)).status, "running");
    });

    test(`${kind}: statements of one session may overlap`, async (t) => {
      const { client, store, invoices } = await open(t, kind);
      const task = await client.submit("bill", null);
      await claimTask(store, task, { workerId: "w1" });
      await store.completeIn({ taskId: task.id, workerId: "w1" }, (s) =>
        Promise.all(
          [1, 2, 3].map((n) =>
            s.query("insert into invoices (task_id, amount) values ($1, $2)", [`${task.id}-${n}`, n]),
          ),
        ),
      );
      assert.equal((await invoices()).length, 3);
    });

    test(`${kind}: ctx.succeedIn after the lease was taken rolls back with LostLease and aborts the signal`, async (t) => {
      const { client, invoices, executor, source } = await open(t, kind);
      const worker = manageWorker(t, Worker.postgres(source, { pollIntervalMs: 20 }));
      const firstAttempt = [];
      worker.worker.task("bill", async (ctx) => {
        try {
          return await ctx.succeedIn(async (s) => {
            await s.query("insert into invoices (task_id, amount) values ($1, $2)", [ctx.taskId, ctx.attempt]);
            if (ctx.attempt === 1) {
              // Another worker's recovery takes the task meanwhile (outside this transaction).
              await executor.query("update cairnq_tasks set worker_id = 'thief', lease_until_ms = 0 where id = $1", [
                ctx.taskId,
              ]);
            }
          });
        } catch (err) {
          firstAttempt.push(err instanceof LostLease, ctx.lostLease, ctx.signal.aborted);
          throw err;
        }
      });
      worker.start();
      const task = await client.submit("bill", null);
      const done = await waitFor(
        async () => {
          const row = await client.get(task.id);
          return row.status === "succeeded" ? row : null;
        },
        { timeoutMs: 30_000, message: "the recovered task did not succeed" },
      );
      assert.deepEqual(firstAttempt, [true, true, true]);
      assert.equal(done.attempt, 2);
      assert.deepEqual(await invoices(), [{ task_id: task.id, amount: 2 }], "the first attempt's row was rolled back");
    });

    test(`${kind}: ctx.succeedIn settles once; the handler's return does not settle again`, async (t) => {
      const { client, invoices, source } = await open(t, kind);
      const worker = manageWorker(t, Worker.postgres(source, { pollIntervalMs: 20 }));
      const answers = [];
      worker.worker.task("bill", async (ctx, payload) => {
        const first = await ctx.succeedIn(async (s) => {
          await s.query("insert into invoices (task_id, amount) values ($1, $2)", [ctx.taskId, payload.amount]);
          return { billed: payload.amount };
        });
        answers.push(first?.status, await ctx.succeedIn(async () => "again"), ctx.settled);
        return "the handler's own return";
      });
      worker.start();
      const task = await client.submit("bill", { amount: 5 });
      const done = await client.wait(task.id, { timeoutMs: 20_000 });
      assert.equal(done.status, "succeeded");
      assert.deepEqual(done.result, { billed: 5 });
      // The handler goes on after its settlement is visible.
      await waitFor(() => answers.length === 3, { timeoutMs: 20_000, message: "the handler did not finish" });
      assert.deepEqual(answers, ["succeeded", null, true]);
      assert.deepEqual(await invoices(), [{ task_id: task.id, amount: 5 }]);
    });
  }

  test("SQLite refuses with UnsupportedBackend; the context stays unsettled", async (t) => {
    const { client } = openClient(t);
    const task = await client.submit("bill", null);
    await claimTask(client.store, task, { workerId: "w1" });
    let ran = false;
    const err = await rejectionOf(
      client.store.completeIn({ taskId: task.id, workerId: "w1" }, async () => (ran = true)),
    );
    assert.ok(err instanceof UnsupportedBackend, String(err));
    assert.equal(err.message, UNSUPPORTED);
    assert.equal(ran, false);

    const worker = manageWorker(t, Worker.sqlite(client.store.path, { pollIntervalMs: 20 }));
    let seen = null;
    worker.worker.task("later", async (ctx) => {
      seen = await rejectionOf(ctx.succeedIn(async () => "never"));
      return { settled: ctx.settled };
    });
    worker.start();
    const later = await client.submit("later", null);
    const done = await client.wait(later.id, { timeoutMs: 20_000 });
    assert.ok(seen instanceof UnsupportedBackend, String(seen));
    assert.deepEqual(done.result, { settled: false }, "the worker settled it from the return");
  });
});

describe("schema", { skip: PG_SKIP, timeout: SUITE_TIMEOUT_MS }, () => {
  const tablesIn = (adminDsn, database, schema) =>
    psql(
      dsnWithDatabase(adminDsn, database),
      `select count(*) from pg_tables where schemaname = '${schema}' and tablename like 'cairnq_%'`,
    ).then(Number);

  test("a DSN store creates its schema and its tables there; an executor store joins them", async (t) => {
    const { dsn, adminDsn, database } = await createDatabase(t);
    const owner = closeLater(t, CairnQ.postgres(dsn, { schema: "tenant_a" }));
    const task = await owner.submit("job", { n: 1 });
    assert.equal(await tablesIn(adminDsn, database, "tenant_a"), 4);
    assert.equal(await tablesIn(adminDsn, database, "public"), 0);

    const executor = await createPoolExecutor(dsn, { schema: "tenant_a" });
    defer(t, () => executor.close());
    const joined = closeLater(t, CairnQ.postgres(executor, { schema: "tenant_a" }));
    assert.equal((await joined.get(task.id)).id, task.id);
    const viaSearchPath = closeLater(t, CairnQ.postgres(`${dsn}?options=-c%20search_path%3Dtenant_a`));
    assert.equal((await viaSearchPath.get(task.id)).id, task.id, "joining the one installation needs no `schema`");
  });

  test("a schema name that could rewrite the statement is refused, and nothing is created", async (t) => {
    const { dsn, adminDsn, database } = await createDatabase(t);
    const message =
      'schema must be a plain identifier (letters, digits, _ and $, not starting with a digit), got "x\\"; drop table y; --"';
    const bad = 'x"; drop table y; --';
    const client = closeLater(t, CairnQ.postgres(dsn, { schema: bad }));
    const err = await rejectionOf(client.submit("job", null));
    assert.equal(err.message, message);
    await assert.rejects(createPoolExecutor(dsn, { schema: bad }), { message });
    await assert.rejects(createPoolExecutor(dsn, { schema: "" }), { message: /got ""$/ });
    const schemas = await psql(
      dsnWithDatabase(adminDsn, database),
      "select count(*) from pg_namespace where nspname not in ('public', 'information_schema') and nspname not like 'pg_%'",
    );
    assert.equal(schemas, "0");
    assert.equal(await tablesIn(adminDsn, database, "public"), 0);
  });

  test("beside an installation elsewhere on the database, connecting refuses with SchemaMismatch", async (t) => {
    const { dsn, adminDsn, database } = await createDatabase(t);
    await closeLater(t, CairnQ.postgres(dsn, { schema: "billing" })).submit("job", null);

    const split = closeLater(t, CairnQ.postgres(dsn));
    const err = await rejectionOf(split.submit("job", null));
    assert.ok(err instanceof SchemaMismatch, String(err));
    assert.ok(
      err.message.startsWith(
        'cairnq tables already exist in schema "billing" of this database, but this connection resolves to "public", where there are none. Connecting would create a second, parallel installation',
      ),
      err.message,
    );
    assert.equal(await tablesIn(adminDsn, database, "public"), 0, "the refused connect created nothing");

    const executor = await createPoolExecutor(dsn);
    defer(t, () => executor.close());
    const misconfigured = closeLater(t, CairnQ.postgres(executor, { schema: "billing" }));
    const missed = await rejectionOf(misconfigured.submit("job", null));
    assert.ok(missed instanceof SchemaMismatch, String(missed));
    assert.equal(
      missed.message,
      `cairnq is configured for schema "billing" but this connection resolves to "public" — check the connection's search_path`,
    );

    const deliberate = closeLater(t, CairnQ.postgres(dsn, { schema: "public" }));
    await deliberate.submit("job", null);
    assert.equal(await tablesIn(adminDsn, database, "public"), 4, "an explicit schema is a separate installation");
  });
});

describe("succeedIn under SIGKILL", { skip: PG_SKIP, timeout: SUITE_TIMEOUT_MS }, () => {
  test("workers killed at random: no row without its settlement, no settlement without its row", async (t) => {
    const { dsn, adminDsn, database } = await createDatabase(t);
    const admin = dsnWithDatabase(adminDsn, database);
    await psql(admin, "create table invoices (task_id text primary key, amount int not null)");
    const client = closeLater(t, CairnQ.postgres(dsn));
    const ids = [];
    const submitBatch = async () => {
      for (let i = 0; i < 20; i++) {
        ids.push((await client.submit("bill", { amount: ids.length }, { maxAttempts: 100 })).id);
      }
    };
    const allDone = async () => (await client.stats("default")).default.succeeded === ids.length;
    await submitBatch();

    const config = { dsn, leaseMs: 1_000, holdMs: 60 };
    const spawnWorker = () => spawnFixture(t, "succeed-in-worker.mjs", config);
    const live = [spawnWorker(), spawnWorker(), spawnWorker()];
    const KILLS = 9;
    let kills = 0;
    const seen = new Set();
    while (kills < KILLS) {
      // A random worker dies: two kills in three the moment it reports a row
      // written in a transaction still open, the third at whatever it is
      // doing once it has written anything. Work runs out? More is submitted.
      const victim = live[Math.floor(Math.random() * live.length)];
      const inFlight = kills % 3 !== 2;
      const event = await waitFor(
        async () => {
          const found = victim
            .events()
            .find((e) => e.event === "writing" && (!inFlight || !seen.has(`${victim.pid}:${e.id}`)));
          if (found) return found;
          if (await allDone()) await submitBatch();
          return null;
        },
        { timeoutMs: 60_000, intervalMs: 10, message: `no progress; ${victim.tail()}` },
      );
      seen.add(`${victim.pid}:${event.id}`);
      victim.kill("SIGKILL");
      await victim.exited;
      kills++;
      live.splice(live.indexOf(victim), 1, spawnWorker());
    }
    // The survivors and replacements finish everything, killed tasks included.
    await waitFor(allDone, { timeoutMs: 90_000, intervalMs: 50, message: "the tasks did not all succeed" });
    for (const proc of live) proc.kill("SIGKILL");

    const tasks = await Promise.all(ids.map((id) => client.get(id)));
    const rows = new Map(
      (await psql(admin, "select task_id || ':' || amount from invoices"))
        .split("\n")
        .filter(Boolean)
        .map((line) => line.split(":"))
        .map(([id, amount]) => [id, Number(amount)]),
    );
    for (const task of tasks) {
      assert.equal(task.status, "succeeded", `${task.id}: ${task.status}`);
      assert.ok(rows.has(task.id), `${task.id} succeeded without its row`);
      assert.deepEqual(task.result, { amount: rows.get(task.id) });
    }
    assert.equal(rows.size, ids.length, "a row without its settlement");
    assert.ok(
      tasks.some((task) => task.attempt > 1),
      "some task was re-run after a kill",
    );
  });
});

// An adapter over another driver, unit-tested the way 0.12's were: a fake
// that records every call and answers `[]` to everything but the
// `protocol_version` read. The connect sequence it sees is the protocol's
// (docs/protocol.md, "Connection setup (Postgres)"), and nothing more.

/** A recording fake executor: `log` holds one line per call, in order. */
function recordingExecutor({ version = "1", listen } = {}) {
  const log = [];
  const calls = { close: 0, listen: 0 };
  const isVersionRead = (text) => /from cairnq_meta where key = 'protocol_version'/.test(text);
  const session = (where) => ({
    query: async (text, values) => {
      log.push({ where, op: "query", text, values });
      return isVersionRead(text) ? [{ value: version }] : [];
    },
    exec: async (sql) => {
      log.push({ where, op: "exec", text: sql });
    },
  });
  let txs = 0;
  const executor = {
    ...session("outside"),
    tx: async (fn) => {
      const where = `tx${++txs}`;
      log.push({ where, op: "begin" });
      try {
        const value = await fn(session(where));
        log.push({ where, op: "commit" });
        return value;
      } catch (err) {
        log.push({ where, op: "rollback" });
        throw err;
      }
    },
    close: async () => {
      calls.close++;
    },
  };
  if (listen) {
    executor.listen = (...args) => {
      calls.listen++;
      return listen(...args);
    };
  }
  return { executor, log, calls };
}

/** The connect sequence the protocol asks, as `where op text-pattern` lines. */
function expectedConnect() {
  const lines = [
    ["outside", "query", /from \(select 1\) as one\s+left join pg_catalog\.pg_class/],
    ["outside", "exec", /^create table if not exists cairnq_migrations/],
  ];
  POSTGRES_MIGRATIONS.forEach((name, i) => {
    const where = `tx${i + 1}`;
    lines.push(
      [where, "begin", null],
      [where, "exec", /^lock table cairnq_migrations in exclusive mode$/],
      [where, "query", /^select 1 from cairnq_migrations where name = \$1/, [name]],
      [where, "exec", /cairnq/],
      [where, "query", /^insert into cairnq_migrations \(name, applied_at_ms\)/, [name]],
      [where, "commit", null],
    );
  });
  lines.push(["outside", "query", /from cairnq_meta where key = 'protocol_version'/]);
  return lines;
}

function assertSequence(log, expected) {
  assert.equal(
    log.length,
    expected.length,
    `calls: ${log.map((l) => `${l.where} ${l.op} ${l.text ?? ""}`.slice(0, 90)).join("\n")}`,
  );
  expected.forEach(([where, op, pattern, values], i) => {
    const line = log[i];
    const seen = `call ${i}: ${line.where} ${line.op} ${line.text ?? ""}`;
    assert.equal(line.where, where, seen);
    assert.equal(line.op, op, seen);
    if (pattern) assert.match(line.text.trim(), pattern, seen);
    if (values) assert.deepEqual(line.values, values, seen);
  });
}

describe("an executor that answers only what the protocol asks", { timeout: SUITE_TIMEOUT_MS }, () => {
  test("connects with exactly the protocol's sequence: guard, ledger, each migration under the lock in tx, version", async () => {
    const { executor, log, calls } = recordingExecutor();
    const store = new PostgresStore(executor);
    await store.connect();
    assertSequence(log, expectedConnect());
    await store.close();
    assert.equal(calls.close, 0, "an application's executor is never closed");
  });

  test("protocol_version 999 is refused with that number; the executor is not closed", async () => {
    const { executor, calls } = recordingExecutor({ version: "999" });
    const store = new PostgresStore(executor);
    const err = await rejectionOf(store.connect());
    assert.equal(err.name, "ProtocolVersionMismatch");
    assert.equal(err.message, "storage protocol_version=999, SDK supports 1");
    await store.close();
    assert.equal(calls.close, 0);
  });

  test("without listen it polls: watch emits poll signals, a worker idles, nothing is pushed", async (t) => {
    const { executor, log } = recordingExecutor();
    const client = closeLater(t, CairnQ.postgres(executor));
    await client.connect();
    assert.equal(client.store._native.listening(), false);
    const signals = [];
    const stop = client.watch({ pollMs: 10 }, (s) => signals.push(s));
    defer(t, stop);
    await waitFor(() => signals.length >= 3, { timeoutMs: 20_000, message: "no poll signals" });
    assert.ok(
      signals.every((s) => s.reason === "poll"),
      JSON.stringify(signals),
    );

    const errors = [];
    const worker = manageWorker(
      t,
      new Worker(client.store, ["default"], { pollIntervalMs: 10, onError: (err) => errors.push(err) }),
    );
    worker.worker.task("job", async () => null);
    worker.start();
    const connected = log.length;
    await waitFor(() => log.slice(connected).filter((l) => /claimable|has_work/.test(l.text ?? "")).length >= 3, {
      timeoutMs: 20_000,
      message: "the worker did not poll",
    });
    assert.deepEqual(errors, []);
  });

  test("a LISTEN that works is started once, after the protocol_version read", async (t) => {
    const { executor, log, calls } = recordingExecutor({ listen: async () => () => {} });
    const client = closeLater(t, CairnQ.postgres(executor));
    await client.connect();
    await waitFor(() => client.store._native.listening(), { timeoutMs: 20_000, message: "never listening" });
    assert.equal(calls.listen, 1);
    assertSequence(log, expectedConnect());
  });

  test("close() during a hung connect returns at once; that connect rejects saying so, no LISTEN follows", async () => {
    const { executor, calls } = recordingExecutor({ listen: async () => () => {} });
    const tx = executor.tx;
    let entered;
    const inMigration = new Promise((resolve) => (entered = resolve));
    let release;
    const held = new Promise((resolve) => (release = resolve));
    executor.tx = async (fn) => {
      entered();
      await held;
      return tx(fn);
    };
    const store = new PostgresStore(executor);
    let connectEnded = false;
    const connecting = store.connect().finally(() => (connectEnded = true));
    await inMigration;
    await store.close();
    assert.equal(connectEnded, false, "close() returned while the connect was still held");
    release();
    const err = await rejectionOf(connecting);
    assert.equal(err.constructor, Error);
    assert.equal(err.message, "store was closed while connecting");

    const signals = [];
    const stop = store.watch({ pollMs: 10 }, (s) => signals.push(s));
    await waitFor(() => signals.length >= 3, { timeoutMs: 20_000, message: "no poll signals" });
    stop();
    assert.ok(
      signals.every((s) => s.reason === "poll"),
      JSON.stringify(signals),
    );
    assert.equal(store._native.listening(), false);
    assert.deepEqual(calls, { close: 0, listen: 0 }, "no LISTEN after the close, and the executor stays open");

    await store.connect();
    await waitFor(() => calls.listen === 1, { timeoutMs: 20_000, message: "a later connect did not LISTEN" });
    await store.close();
    assert.equal(calls.close, 0);
  });

  test("completeIn runs fn in the executor's tx, then complete there; no row is LostLease", async () => {
    const { executor, log } = recordingExecutor();
    const store = new PostgresStore(executor);
    await store.connect();
    const connected = log.length;
    let sawSession = false;
    const err = await rejectionOf(
      store.completeIn({ taskId: "task_x", workerId: "w1" }, async (session) => {
        await session.query("insert into invoices values ($1)", ["task_x"]);
        sawSession = true;
      }),
    );
    assert.ok(err instanceof LostLease, String(err));
    assert.ok(sawSession);
    const after = log.slice(connected).map((l) => `${l.where} ${l.op}`);
    assert.deepEqual(after, ["tx11 begin", "tx11 query", "tx11 query", "tx11 rollback"]);
  });
});

describe("a cairnq_tasks that is not the protocol's", { skip: PG_SKIP, timeout: SUITE_TIMEOUT_MS }, () => {
  for (const kind of ["dsn", "executor"]) {
    test(`${kind}: is refused at connect, naming the migration, and left as it was`, async (t) => {
      const { executor, dsn, adminDsn, database } = await openExecutor(t);
      const admin = dsnWithDatabase(adminDsn, database);
      await psql(
        admin,
        "create table cairnq_tasks (id text primary key, body text); insert into cairnq_tasks values ('a', 'b')",
      );
      const client = closeLater(t, CairnQ.postgres(kind === "dsn" ? dsn : executor));
      const err = await rejectionOf(client.connect());
      assert.match(err.message, /^migration 0001_init\.sql failed: column "\w+" does not exist/);
      assert.equal(
        await psql(
          admin,
          "select string_agg(attname, ',' order by attnum) from pg_attribute where attrelid = 'cairnq_tasks'::regclass and attnum > 0",
        ),
        "id,body",
      );
      assert.equal(await psql(admin, "select coalesce(to_regclass('cairnq_meta')::text, 'none')"), "none");
      assert.equal(await psql(admin, "select count(*) from cairnq_migrations"), "0");
      assert.equal(await psql(admin, "select body from cairnq_tasks"), "b");
    });
  }
});
