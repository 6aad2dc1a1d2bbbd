// A task written by submitIn (docs/api.md, "The task and your rows in one
// transaction") is an ordinary protocol row: a Python worker (PyPI cairnq
// 0.7.0 and 0.15.1, support/python-sdks.mjs) runs it once the application's
// transaction commits, on SQLite (better-sqlite3) and on Postgres (pg).
import { describe, test } from "node:test";
import assert from "node:assert/strict";

import Database from "better-sqlite3";
import pg from "pg";

import { CairnQ } from "../../index.mjs";
import { defer, makeDbPath } from "../support/helpers.mjs";
import { PG_SKIP, createDatabase } from "../support/pg-helpers.mjs";
import { SDKS, pythonSdkProblem, sdkSkipReason, spawnPythonWorker } from "../support/python-sdks.mjs";

const TIMEOUT_MS = 240_000;

for (const sdk of SDKS) {
  const problem = pythonSdkProblem(sdk);
  // In CI a missing SDK must fail, not skip.
  const skip = problem && !process.env.CI ? sdkSkipReason(sdk, problem) : false;

  describe(`a Python ${sdk.version} worker runs what submitIn wrote`, { skip, timeout: TIMEOUT_MS }, () => {
    test("SQLite: the app's better-sqlite3 transaction", async (t) => {
      const path = makeDbPath(t, "app.db");
      const cq = CairnQ.sqlite(path);
      defer(t, () => cq.close());
      await cq.connect();
      const db = new Database(path);
      defer(t, () => db.close());
      db.pragma("busy_timeout = 10000");
      const ref = db.transaction(() => cq.submitIn(db, "echo", { order: 1 }, { priority: 2 }))();
      const worker = spawnPythonWorker(t, sdk, path, { handlers: ["echo"], pollMs: 50 });
      await worker.ready();
      const done = await cq.wait(ref.id, { timeoutMs: 120_000 });
      assert.equal(done.status, "succeeded");
      assert.equal(done.result.by, "python");
      assert.deepEqual(done.result.echo, { order: 1 });
    });

    test("Postgres: the app's pg transaction, keyed", { skip: PG_SKIP }, async (t) => {
      const { dsn } = await createDatabase(t);
      const cq = CairnQ.postgres(dsn);
      defer(t, () => cq.close());
      await cq.connect();
      const client = new pg.Client(dsn);
      await client.connect();
      defer(t, () => client.end());
      await client.query("begin");
      const ref = await cq.submitIn(client, "echo", { order: 2 }, { key: "order-2" });
      await client.query("commit");
      const worker = spawnPythonWorker(t, sdk, dsn, { handlers: ["echo"], pollMs: 50 });
      await worker.ready();
      const done = await cq.wait(ref.id, { timeoutMs: 120_000 });
      assert.equal(done.status, "succeeded");
      assert.equal(done.result.by, "python");
      assert.equal((await cq.getByKey("order-2")).id, ref.id);
    });
  });
}
