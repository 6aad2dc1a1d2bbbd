// Events of tasks the Python SDKs (0.7.0 and 0.15.1) submit and run, on
// SQLite and Postgres: the events triggers live in the database, so a
// listener of ours sees a Python worker's changes as it sees its own
// (docs/api.md, "Events"). Python processes are real: fixtures/python/.
import { describe, test } from "node:test";
import assert from "node:assert/strict";

import { CairnQ } from "../../index.mjs";
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
    { label: "SQLite", skip: skipReason, freshDatabase: async (t) => makeDbPath(t, "tasks.db") },
    {
      label: "Postgres",
      skip: skipReason || (pgDsn || process.env.CI ? false : "CAIRNQ_TEST_PG_DSN is not set"),
      async freshDatabase(t) {
        const { dsn, database } = await py("pg-create-database", pgDsn, "--prefix", "cairnq_ev");
        defer(t, () => py("pg-drop-database", pgDsn, database));
        return dsn;
      },
    },
  ];

  for (const backend of backends) {
    describe(`events of Python SDK ${sdk.version} tasks on ${backend.label}`, { skip: backend.skip }, () => {
      test(
        "submitted, run, progressed, finished by Python: every change is an event",
        { timeout: 240_000 },
        async (t) => {
          const db = await backend.freshDatabase(t);
          const client = backend.label === "SQLite" ? CairnQ.sqlite(db) : CairnQ.postgres(db, { max: 2 });
          defer(t, () => client.close());
          const subscription = client.events();
          defer(t, () => subscription.close());
          await subscription.ready();
          const events = [];
          subscription.on("event", (e) => events.push(e));

          const slow = (await py("submit", db, "--name", "slow", "--payload", JSON.stringify({ ms: 10 }))).task;
          const failing = (await py("submit", db, "--name", "fail_task_error", "--max-attempts", "1")).task;
          const worker = spawnPythonWorker(t, sdk, db, { handlers: ["slow", "fail_task_error"], pollMs: 50 });
          await worker.ready();

          const kindsOf = (id) => events.filter((e) => e.taskId === id).map((e) => e.kind);
          await waitFor(() => kindsOf(slow.id).includes("succeeded") && kindsOf(failing.id).includes("failed"), {
            timeoutMs: 60_000,
            message: `Python tasks' events: ${JSON.stringify(events)}`,
          });
          assert.deepEqual(kindsOf(slow.id), ["queued", "started", "progress", "succeeded"]);
          assert.deepEqual(kindsOf(failing.id), ["queued", "started", "failed"]);
          const of = (id, kind) => events.find((e) => e.taskId === id && e.kind === kind);
          assert.equal(of(slow.id, "started").workerId, worker.workerId);
          assert.deepEqual([of(slow.id, "progress").progress, of(slow.id, "progress").message], [0.5, "sleeping"]);
          assert.equal(of(slow.id, "succeeded").result.by, "python");
          assert.equal(of(failing.id, "failed").error.code, "bad_input");
          await worker.terminate();
        },
      );
    });
  }
}
