// What the Python SDKs (0.7.0 and 0.15.1) do with this package's dead
// letters and uniqueness windows, on SQLite and Postgres (docs/api.md, "Dead
// letters", "Uniqueness window"): a Python worker fails a task submitted with
// `deadLetter` as any other (no letter; the metadata kept), and a Python
// keyed submit does not read a window. Python processes are real:
// fixtures/python/.
import { describe, test } from "node:test";
import assert from "node:assert/strict";

import { AlreadyExists, CairnQ } from "../../index.mjs";
import { defer, makeDbPath, waitFor } from "../support/helpers.mjs";
import { SDKS, pythonSdkProblem, pythonStep, sdkSkipReason, spawnPythonWorker } from "../support/python-sdks.mjs";

const pgDsn = process.env.CAIRNQ_TEST_PG_DSN;

for (const sdk of SDKS) {
  const sdkProblem = pythonSdkProblem(sdk);
  const skipReason = sdkProblem && !process.env.CI ? sdkSkipReason(sdk, sdkProblem) : false;

  async function py(command, db, ...args) {
    if (sdkProblem) throw new Error(sdkProblem);
    const out = await pythonStep(sdk, command, db, ...args);
    assert.equal(out.error, undefined, `python ${command} raised ${JSON.stringify(out.error)}`);
    return out;
  }

  const backends = [
    { label: "SQLite", skip: skipReason, db: async (t) => makeDbPath(t, "tasks.db"), open: (db) => CairnQ.sqlite(db) },
    {
      label: "Postgres",
      skip: skipReason || (pgDsn || process.env.CI ? false : "CAIRNQ_TEST_PG_DSN is not set"),
      async db(t) {
        const { dsn, database } = await py("pg-create-database", pgDsn, "--prefix", "cairnq_dl");
        defer(t, () => py("pg-drop-database", pgDsn, database));
        return dsn;
      },
      open: (db) => CairnQ.postgres(db, { max: 2 }),
    },
  ];

  for (const backend of backends) {
    describe(
      `dead letters and windows with Python SDK ${sdk.version} on ${backend.label}`,
      { skip: backend.skip },
      () => {
        test(
          "a Python worker fails a dead-lettered task with no letter; a Python submit reads no window",
          { timeout: 240_000 },
          async (t) => {
            const db = await backend.db(t);
            const client = backend.open(db);
            defer(t, () => client.close());
            const routed = await client.submit("fail_task_error", {}, { maxAttempts: 1, deadLetter: "dlq" });
            const held = await client.submit(
              "echo",
              { v: 1 },
              { key: "k", conflict: "reject", unique: { forMs: 3_600_000 } },
            );
            const worker = spawnPythonWorker(t, sdk, db, { handlers: ["fail_task_error", "echo"], pollMs: 50 });
            await worker.ready();
            const finished = async (id, status) => ((await client.get(id)).status === status ? true : null);
            await waitFor(() => finished(routed.id, "failed"), { timeoutMs: 60_000 });
            await waitFor(() => finished(held.id, "succeeded"), { timeoutMs: 60_000 });
            await worker.terminate();

            const failed = await client.get(routed.id);
            assert.equal(failed.error.code, "bad_input");
            assert.deepEqual(failed.metadata, { "cairnq.deadLetter": "dlq" }, "kept as stored");
            assert.deepEqual(await client.list({ queue: "dlq" }), [], "no letter from a Python worker");

            await assert.rejects(client.submit("echo", {}, { key: "k", conflict: "reject" }), AlreadyExists);
            const ours = await client.submit("echo", {}, { key: "k" });
            assert.equal(ours.id, held.id, "our reuse hands the finished holder back");
            const theirs = (await py("submit", db, "--name", "echo", "--key", "k", "--conflict", "reuse")).task;
            assert.notEqual(theirs.id, held.id, "a Python reuse starts a new task: it reads no window");
          },
        );
      },
    );
  }
}
