// Postgres connections (docs/api.md, "Stores"; docs/protocol.md,
// "Connection setup (Postgres)", "Wakes (LISTEN/NOTIFY)"): failures to connect
// are clear and never show the password; a failed connect is retried by the
// next call; close() ends every connection, the LISTEN one included; and
// LISTEN is only an accelerator — a store whose listener cannot connect keeps
// working as a pure poller.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import net from "node:net";

import { CairnQ, CairnQError, PostgresStore, Worker } from "../../index.mjs";
import { defer, rejectionOf, waitFor } from "../support/helpers.mjs";
import {
  PG_SKIP,
  backendQueries,
  connectionCount,
  createDatabase,
  dsnWithCredentials,
  dsnWithDatabase,
  dsnWithPort,
  freePort,
  isListenQuery,
  makePgWorker,
  openPgClient,
  psql,
  randomName,
  requireDsn,
} from "../support/pg-helpers.mjs";

// A hung test must fail, not hold CI: generous for a loaded machine.
const SUITE_TIMEOUT_MS = 180_000;

const SECRET = "s3cret-Not-The-Real-One-42";

function assertConnectionError(err, { mentions, secret = SECRET }) {
  assert.ok(err instanceof Error, `expected an Error, got ${err}`);
  assert.equal(err instanceof CairnQError, false, `${err.name}: a connection failure is not a CairnQError`);
  assert.ok(!err.message.includes(secret), `the message shows the password: ${err.message}`);
  assert.ok(!String(err.stack).includes(secret), "the stack shows the password");
  assert.match(err.message, /^cannot connect to Postgres at postgres:\/\/[^:@/]+@127\.0\.0\.1:\d+\//, err.message);
  for (const pattern of mentions) assert.match(err.message, pattern);
}

const isListen = isListenQuery;

describe("Postgres: connection failures", { skip: PG_SKIP, timeout: SUITE_TIMEOUT_MS }, () => {
  test("a wrong password: connect() rejects with the server's reason, never the password", async (t) => {
    const { dsn } = await createDatabase(t);
    const client = CairnQ.postgres(dsnWithCredentials(dsn, { password: SECRET }));
    defer(t, () => client.close());
    const err = await rejectionOf(client.connect());
    assertConnectionError(err, { mentions: [/password authentication failed/, /28P01/] });
    // Every operation reports the same, and a worker's run() too.
    assertConnectionError(await rejectionOf(client.submit("job")), { mentions: [/password authentication failed/] });
    const worker = Worker.postgres(dsnWithCredentials(dsn, { password: SECRET }));
    worker.task("job", () => null);
    assertConnectionError(await rejectionOf(worker.run()), { mentions: [/password authentication failed/] });
    await worker.close();
  });

  test("an unreachable port: connect() rejects promptly and says why", async (t) => {
    const port = await freePort();
    const dsn = dsnWithPort(dsnWithCredentials(requireDsn(), { password: SECRET }), port);
    const client = CairnQ.postgres(dsn);
    defer(t, () => client.close());
    const err = await rejectionOf(client.connect());
    assertConnectionError(err, { mentions: [new RegExp(`:${port}/`), /error connecting to server/, /refused/i] });
  });

  test("a wrong database name: rejected with the server's words; the next call retries and succeeds once it exists", async (t) => {
    // A role of its own, so the password is distinctive enough to look for.
    const admin = requireDsn();
    const role = randomName("cq_role");
    await psql(admin, `create role ${role} login password '${SECRET}'`);
    defer(t, () => psql(admin, `drop role if exists ${role}`));
    const database = randomName("cq_later");
    defer(t, () => psql(admin, `drop database if exists ${database} with (force)`));
    const dsn = dsnWithDatabase(dsnWithCredentials(admin, { user: role, password: SECRET }), database);
    const client = CairnQ.postgres(dsn);
    defer(t, () => client.close());
    const err = await rejectionOf(client.connect());
    assertConnectionError(err, { mentions: [new RegExp(`database "${database}" does not exist`), /3D000/] });
    assert.match(err.message, new RegExp(`postgres://${role}@127\\.0\\.0\\.1:\\d+/${database}:`));

    await psql(admin, `create database ${database} owner ${role}`);
    await client.connect();
    const task = await client.submit("job", { ok: true });
    assert.deepEqual((await client.get(task.id)).payload, { ok: true });
  });

  test("an invalid connection string is refused at construction without echoing it", () => {
    let err;
    try {
      CairnQ.postgres(`postgres://me:${SECRET}@127.0.0.1:notaport/db`);
    } catch (e) {
      err = e;
    }
    assert.ok(err instanceof Error, "construction throws");
    assert.ok(!err.message.includes(SECRET), err.message);
    assert.match(err.message, /invalid Postgres connection string/);
  });
});

describe("Postgres: close() while connecting", { timeout: SUITE_TIMEOUT_MS }, () => {
  test("to a server that never answers: close() returns at once; the connect rejects saying so", async (t) => {
    const sockets = new Set();
    const server = net.createServer((socket) => sockets.add(socket));
    await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
    const hangUp = () => sockets.forEach((socket) => socket.destroy());
    defer(t, () => {
      hangUp();
      server.close();
    });
    const store = new PostgresStore(`postgres://cairnq@127.0.0.1:${server.address().port}/silent`);
    let connectEnded = false;
    const connecting = store.connect().finally(() => (connectEnded = true));
    await waitFor(() => sockets.size > 0, { timeoutMs: 20_000, message: "the connect never reached the server" });
    await store.close();
    assert.equal(connectEnded, false, "close() returned while the server still had not answered");
    hangUp();
    const err = await rejectionOf(connecting);
    assert.equal(err.message, "store was closed while connecting");
    assert.equal(store._native.listening(), false);
  });
});

describe("Postgres: close() ends every connection", { skip: PG_SKIP, timeout: SUITE_TIMEOUT_MS }, () => {
  test("after client.close() and worker.close(), no backend is left on the database", async (t) => {
    const { dsn, database, adminDsn } = await createDatabase(t);
    const client = CairnQ.postgres(dsn);
    const worker = Worker.postgres(dsn, { pollIntervalMs: 100, concurrency: 3 });
    let closed = false;
    defer(t, async () => {
      if (!closed) {
        worker.stop();
        await client.close();
        await worker.close();
      }
    });
    worker.task("job", async (ctx, p) => p.n);
    const running = worker.run();
    const results = await Promise.all([1, 2, 3, 4, 5].map((n) => client.call("job", { n }, { waitTimeoutMs: 20_000 })));
    assert.deepEqual(results, [1, 2, 3, 4, 5]);

    // Both stores hold pool connections and one LISTEN connection each.
    await waitFor(async () => (await backendQueries(adminDsn, database)).filter(isListen).length === 2, {
      timeoutMs: 20_000,
      message: "two LISTEN connections (client and worker) never showed up",
    });
    assert.ok((await connectionCount(adminDsn, database)) >= 4);

    worker.stop();
    await running;
    await worker.close();
    await client.close();
    closed = true;
    await waitFor(async () => (await connectionCount(adminDsn, database)) === 0, {
      timeoutMs: 20_000,
      message: "connections to the test database remain after close()",
    });
  });

  test("a closed store reconnects lazily, and its LISTEN connection comes back with it", async (t) => {
    const { dsn, database, adminDsn } = await createDatabase(t);
    const client = openPgClient(t, dsn);
    const task = await client.submit("job");
    await waitFor(async () => (await backendQueries(adminDsn, database)).some(isListen), {
      message: "the LISTEN connection never showed up",
    });
    await client.close();
    await waitFor(async () => (await connectionCount(adminDsn, database)) === 0, { timeoutMs: 20_000 });

    assert.equal((await client.get(task.id)).id, task.id, "a later operation reconnects");
    // Every connect arms push again (a store reused after close() is not left polling only).
    await waitFor(async () => (await backendQueries(adminDsn, database)).some(isListen), {
      timeoutMs: 20_000,
      message: "the LISTEN connection did not come back after the reconnect",
    });
    const signals = [];
    const stop = client.watch({ pollMs: 60_000 }, (signal) => signals.push(signal));
    t.after(stop);
    await client.submit("job", {}, { queue: "after-close" });
    await waitFor(() => signals.some((s) => s.reason === "queued" && s.queue === "after-close"), {
      timeoutMs: 20_000,
      message: "no push after the reconnect",
    });
    await client.close();
    await waitFor(async () => (await connectionCount(adminDsn, database)) === 0, { timeoutMs: 20_000 });
  });
});

describe("Postgres: LISTEN is an accelerator only", { skip: PG_SKIP, timeout: SUITE_TIMEOUT_MS }, () => {
  test("a store whose LISTEN connection cannot connect (role connection limit) works as a pure poller", async (t) => {
    // A role allowed one connection: the pool (max 1) holds it, so the store's
    // listener is refused ("too many connections for role") for as long as it
    // tries. Everything must still work, by polling alone, with no error
    // surfacing to the user.
    const admin = requireDsn();
    const role = randomName("cq_role");
    const password = "pw-" + randomName("x");
    await psql(admin, `create role ${role} login password '${password}' connection limit 1`);
    defer(t, () => psql(admin, `drop role if exists ${role}`));
    const { dsn, database, adminDsn } = await createDatabase(t);
    await psql(adminDsn, `alter database ${database} owner to ${role}`);
    const roleDsn = dsnWithCredentials(dsn, { user: role, password });

    const store = new PostgresStore(roleDsn, { max: 1 });
    const client = new CairnQ(store);
    defer(t, () => client.close());
    const errors = [];
    const worker = makePgWorker(t, roleDsn, {
      store,
      pollIntervalMs: 100,
      onError: (err, info) => errors.push({ message: err.message, ...info }),
    });
    worker.worker.task("echo", (ctx, p) => ({ echoed: p, attempt: ctx.attempt }));
    worker.start();

    for (let i = 0; i < 5; i++) {
      assert.deepEqual(await client.call("echo", { i }, { waitTimeoutMs: 20_000 }), { echoed: { i }, attempt: 1 });
    }
    const ids = [];
    for (let i = 0; i < 20; i++) ids.push((await client.submit("echo", { i })).id);
    for (const id of ids) assert.equal((await client.wait(id, { timeoutMs: 20_000 })).status, "succeeded");

    // One connection for the role, and it never ran LISTEN.
    const queries = await backendQueries(adminDsn, database);
    assert.equal(queries.length, 1, `the role's connections: ${JSON.stringify(queries)}`);
    assert.equal(queries.filter(isListen).length, 0);
    assert.deepEqual(errors, [], "a missing listener is not an error");
  });
});
