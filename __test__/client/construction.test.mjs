// CairnQ construction and connection (docs/api.md, "CairnQ"): lazy connect, an
// injected store, close and reuse — on every dialect; SQLite files and options
// on SQLite.

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";

import { CairnQ, SQLiteStore } from "../../index.mjs";
import { defer, makeDbPath, makeTempDir, openClient, runPython } from "../support/helpers.mjs";
import { forEachDialect, sqlite, test } from "../support/dialects.mjs";

// ---------------------------------------------------------------------------
forEachDialect("construction and connection", (dialect) => {
  // A SQLite file's missing directories.
  if (dialect === sqlite) {
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
  }

  test("connect() is optional and idempotent", async (t) => {
    const { client } = await dialect.open(t);
    await client.connect();
    await client.connect();
    const task = await client.submit("job");
    assert.equal((await client.get(task.id)).status, "queued");
  });

  test("new CairnQ(store) wraps exactly that store, exposed as `store`", async (t) => {
    const store = dialect.store(await dialect.createDatabase(t));
    const client = new CairnQ(store);
    defer(t, () => client.close());
    assert.equal(client.store, store);
    const task = await client.submit("job");
    assert.equal((await store.get(task.id)).id, task.id, "the client writes through the injected store");
  });

  test("close() then reuse reopens lazily and the data is still there", async (t) => {
    const { client } = await dialect.open(t);
    const first = await client.submit("job", { n: 1 });
    await client.close();
    assert.equal((await client.get(first.id)).id, first.id);
    const second = await client.submit("job", { n: 2 });
    await client.close();
    await client.close(); // closing a closed client is harmless
    const listed = await client.list({ name: "job" });
    assert.deepEqual(listed.map((x) => x.id).sort(), [first.id, second.id].sort());
  });

  // SQLite's file lock, and a SQLite-only option (Postgres: postgres/connection.test.mjs).
  if (dialect === sqlite) {
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
  }
});
