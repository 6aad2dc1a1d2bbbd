// Interop with the Python SDK (PyPI cairnq 0.7.0, schema_version 6, and 0.15.1,
// schema_version 10): both SDKs share one database, so whatever one writes the
// other must read and act on. The Python side runs through fixtures/python/cairnq_cli.py, one
// process per step, with the real SDK. Every scenario runs against each version
// (CAIRNQ_PYTHON: 0.7.0; CAIRNQ_PYTHON_015: 0.15.1).
import { describe, test } from "node:test";
import assert from "node:assert/strict";

import { CairnQ } from "../../index.mjs";
import { SDKS, pythonSdkProblem, pythonStep, sdkSkipReason } from "../support/python-sdks.mjs";
import { makeDbPath, migrationLedger } from "../support/helpers.mjs";

const pgDsn = process.env.CAIRNQ_TEST_PG_DSN;
const SCENARIO_TIMEOUT_MS = 180_000;

// docs/protocol.md, "Migration ledger": what 0.7.0 applies (up to 0006),
// and the four this package and 0.15.1 add after it.
const LEDGER = migrationLedger();
const isV6 = (name) => name < "0007";
const V6_SQLITE_LEDGER = LEDGER.sqlite.filter(isV6);
const V6_POSTGRES_LEDGER = LEDGER.postgres.filter(isV6);
const SINCE_V6 = LEDGER.sqlite.filter((name) => !isV6(name));
const V10_META = { protocol_version: "1", schema_version: "10" };

// Non-ASCII (Python stores it as \uXXXX escapes, we as raw UTF-8), an astral
// character (a surrogate pair on the Python side), nesting and JSON escapes.
const RICH_PAYLOAD = {
  text: "Grüße, 世界 — naïve café 🌲𝄞",
  nested: [[1, [2, [3, { deep: ["ünïcödé", null] }]]], [], [true, false, null, 1.5, -7, 0]],
  empty: {},
  escapes: 'a "quoted" \\ backslash\n\ttab',
};
const RICH_METADATA = { owner: "Zoë", tags: ["α", "β"], trace: { span: 42 } };
const BAD_INPUT_ENVELOPE = {
  type: "TaskError",
  code: "bad_input",
  message: "m",
  retryable: false,
  details: { field: "x" },
};

/** The helper commands, run with `sdk`'s interpreter. */
function pythonOf(sdk) {
  /** One step of the Python helper: its JSON output (`error` when the SDK raised). */
  const py = (command, db, ...args) => pythonStep(sdk, command, db, ...args);
  async function pyTask(command, db, ...args) {
    const out = await py(command, db, ...args);
    assert.equal(out.error, undefined, `python ${command} raised ${JSON.stringify(out.error)}`);
    return out.task;
  }
  return { py, pyTask };
}

for (const sdk of SDKS) {
  const sdkProblem = pythonSdkProblem(sdk);
  const skipReason = sdkSkipReason(sdk, sdkProblem);
  const { py, pyTask } = pythonOf(sdk);
  const isV10 = sdk.schemaVersion === "10";

  const backends = [
    {
      label: "SQLite",
      skip: skipReason,
      v6Ledger: V6_SQLITE_LEDGER,
      async freshDatabase(t) {
        return makeDbPath(t, "tasks.db");
      },
      open: (db) => CairnQ.sqlite(db),
    },
    {
      label: "Postgres",
      skip: skipReason || (pgDsn ? false : "CAIRNQ_TEST_PG_DSN is not set"),
      v6Ledger: V6_POSTGRES_LEDGER,
      // A database of its own per scenario: nothing migrated, no rows, and no
      // interference with other test files that use the shared test database.
      async freshDatabase(t) {
        const { dsn, database } = await py("pg-create-database", pgDsn);
        t.after(() => py("pg-drop-database", pgDsn, database));
        return dsn;
      },
      open: (db) => CairnQ.postgres(db, { max: 2 }),
    },
  ];

  /** Runs `fn` with a connected client of ours and always closes it. */
  async function withOurs(backend, db, fn) {
    const client = backend.open(db);
    try {
      await client.connect();
      return await fn(client);
    } finally {
      await client.close();
    }
  }

  test(
    `the Python cairnq SDK ${sdk.version} is importable`,
    { skip: sdkProblem && !process.env.CI ? skipReason : false },
    () => {
      assert.equal(sdkProblem, null, `${skipReason} — CI must provide it`);
    },
  );

  for (const backend of backends) {
    describe(`Python SDK ${sdk.version} interop on ${backend.label}`, { skip: backend.skip }, () => {
      const scenario = (name, fn) => test(name, { timeout: SCENARIO_TIMEOUT_MS }, fn);
      const v10Ledger = [...backend.v6Ledger, ...SINCE_V6];

      if (isV10) {
        scenario(
          "a database migrated by Python opens in ours without new migrations, and with the same schema",
          async (t) => {
            const db = await backend.freshDatabase(t);
            const created = await py("create-db", db);
            assert.deepEqual(
              created.migrations.map((m) => m.name),
              v10Ledger,
            );
            assert.deepEqual(created.meta, V10_META);

            await withOurs(backend, db, async (ours) => {
              assert.deepEqual(await ours.stats(), {});
            });
            assert.deepEqual(await py("ledger", db), {
              migrations: created.migrations,
              meta: created.meta,
              schema: created.schema,
            });

            // A database ours creates has the very same objects, texts included.
            const oursDb = await backend.freshDatabase(t);
            await withOurs(backend, oursDb, async () => {});
            const ledger = await py("ledger", oursDb);
            assert.deepEqual(ledger.schema, created.schema);
            assert.deepEqual(ledger.meta, V10_META);
          },
        );
      } else {
        scenario(
          "a v6 database migrated by Python 0.7.0 gets exactly 0007–0010 from ours, and 0.7.0 keeps using it",
          async (t) => {
            const db = await backend.freshDatabase(t);
            const created = await py("create-db", db);
            assert.deepEqual(
              created.migrations.map((m) => m.name),
              backend.v6Ledger,
            );
            assert.deepEqual(created.meta, { protocol_version: "1", schema_version: "6" });
            const before = await pyTask("submit", db, "--name", "interop.old", "--payload", '{"v":6}');

            await withOurs(backend, db, async (ours) => {
              assert.deepEqual((await ours.get(before.id)).payload, { v: 6 });
            });
            const migrated = await py("ledger", db);
            assert.deepEqual(
              migrated.migrations.slice(0, backend.v6Ledger.length),
              created.migrations,
              "applied rows are kept",
            );
            assert.deepEqual(
              migrated.migrations.map((m) => m.name),
              v10Ledger,
            );
            assert.deepEqual(migrated.meta, V10_META);
            assert.equal(
              Object.keys(migrated.schema).some((name) => name.endsWith(" cairnq_tasks_status_idx")),
              false,
            );

            // 0.7.0 ignores the ledger names it does not know, and works on.
            const reopened = await py("create-db", db);
            assert.deepEqual(
              { migrations: reopened.migrations, meta: reopened.meta },
              { migrations: migrated.migrations, meta: V10_META },
            );
            assert.equal((await pyTask("get", db, before.id)).status, "queued");
          },
        );
      }

      scenario(`a database migrated by ours opens in Python ${sdk.version} without re-migrating`, async (t) => {
        const db = await backend.freshDatabase(t);
        // withOurs connects, which is what migrates a fresh database.
        await withOurs(backend, db, async () => {});

        const ledger = await py("ledger", db);
        assert.deepEqual(
          ledger.migrations.map((m) => m.name),
          v10Ledger,
        );
        assert.deepEqual(ledger.meta, V10_META);

        const opened = await py("create-db", db);
        assert.equal(opened.protocol_version, 1);
        assert.deepEqual({ migrations: opened.migrations, meta: opened.meta, schema: opened.schema }, ledger);
      });

      if (isV10) {
        scenario("status probes, filtered purge and stats(queue) agree across SDKs", async (t) => {
          const db = await backend.freshDatabase(t);
          await withOurs(backend, db, async (ours) => {
            const keyed = await ours.submit("interop.probe", {}, { key: "probe-key", queue: "qa" });
            const theirs = await py("status", db, "--key", "probe-key");
            assert.deepEqual(theirs.ref, await ours.getStatusByKey("probe-key"));
            assert.deepEqual(theirs.ref, { id: keyed.id, status: "queued" });
            assert.deepEqual((await py("status", db, "task_00000000000000000000000000")).ref, null);

            const pyTaskInB = await pyTask("submit", db, "--name", "interop.probe", "--queue", "qb");
            assert.deepEqual(await ours.getStatus(pyTaskInB.id), { id: pyTaskInB.id, status: "queued" });
            for (const id of [keyed.id, pyTaskInB.id]) await ours.cancel(id);
            assert.deepEqual((await py("stats", db, "--queue", "qa")).stats, await ours.stats("qa"));
            assert.deepEqual((await py("stats", db, "--queue", "nobody")).stats, await ours.stats("nobody"));

            // Python purges one queue's canceled task; ours sees only the other left.
            assert.deepEqual((await py("purge", db, "--queue", "qb", "--status", "canceled")).ids, [pyTaskInB.id]);
            assert.deepEqual(await ours.purge({ queue: "qb" }), []);
            assert.deepEqual(await ours.purge({ status: "canceled", name: "interop.probe" }), [keyed.id]);
            assert.deepEqual(await ours.stats(), {});
          });
        });
      }

      scenario("a task submitted by Python reads equal in ours; our cancel and retry show in Python", async (t) => {
        const db = await backend.freshDatabase(t);
        const submitted = await pyTask(
          "submit",
          db,
          "--name",
          "interop.echo",
          "--payload",
          JSON.stringify(RICH_PAYLOAD),
          "--metadata",
          JSON.stringify(RICH_METADATA),
          "--max-attempts",
          "5",
          "--priority",
          "3",
        );

        await withOurs(backend, db, async (ours) => {
          const read = await ours.get(submitted.id);
          assert.deepEqual(read.payload, RICH_PAYLOAD);
          assert.deepEqual(read.metadata, RICH_METADATA);
          // Every column, as the other SDK reads the same row.
          assert.deepEqual(read, submitted);

          const canceled = await ours.cancel(submitted.id);
          assert.equal(canceled.status, "canceled");
          assert.deepEqual(await pyTask("get", db, submitted.id), canceled);

          const retried = await ours.retry(submitted.id);
          assert.equal(retried.status, "queued");
          assert.equal(retried.completed_at_ms, null);
          assert.deepEqual(await pyTask("get", db, submitted.id), retried);
        });
      });

      scenario("a task submitted by ours reads equal in Python; Python's cancel and retry show in ours", async (t) => {
        const db = await backend.freshDatabase(t);
        await withOurs(backend, db, async (ours) => {
          const submitted = await ours.submit("interop.echo", RICH_PAYLOAD, {
            metadata: RICH_METADATA,
            maxAttempts: 5,
            priority: 3,
          });

          const read = await pyTask("get", db, submitted.id);
          assert.deepEqual(read.payload, RICH_PAYLOAD);
          assert.deepEqual(read.metadata, RICH_METADATA);
          assert.deepEqual(read, submitted);

          const canceled = await pyTask("cancel", db, submitted.id);
          assert.equal(canceled.status, "canceled");
          assert.deepEqual(await ours.get(submitted.id), canceled);

          const retried = await pyTask("retry", db, submitted.id);
          assert.equal(retried.status, "queued");
          assert.deepEqual(await ours.get(submitted.id), retried);
        });
      });

      scenario("a key taken by Python is respected by ours (reject and reuse)", async (t) => {
        const db = await backend.freshDatabase(t);
        const key = "invoice:42:ü";
        const pythonTask = await pyTask("submit", db, "--name", "interop.keyed", "--key", key, "--conflict", "reject");

        await withOurs(backend, db, async (ours) => {
          await assert.rejects(ours.submit("interop.keyed", {}, { key, conflict: "reject" }), (err) => {
            assert.equal(err.name, "AlreadyExists");
            assert.equal(err.key, key);
            return true;
          });
          const reused = await ours.submit("interop.keyed", {}, { key, conflict: "reuse" });
          assert.equal(reused.id, pythonTask.id);
          assert.equal((await ours.getByKey(key)).id, pythonTask.id);
          assert.deepEqual(
            (await ours.list()).map((task) => task.id),
            [pythonTask.id],
          );
        });
      });

      scenario("a key taken by ours is respected by Python (reject and reuse)", async (t) => {
        const db = await backend.freshDatabase(t);
        const key = "invoice:43:ü";
        await withOurs(backend, db, async (ours) => {
          const ourTask = await ours.submit("interop.keyed", {}, { key, conflict: "reject" });

          const rejected = await py("submit", db, "--name", "interop.keyed", "--key", key, "--conflict", "reject");
          assert.equal(rejected.error?.name, "AlreadyExists", JSON.stringify(rejected));
          const reused = await pyTask("submit", db, "--name", "interop.keyed", "--key", key, "--conflict", "reuse");
          assert.equal(reused.id, ourTask.id);
          assert.equal((await pyTask("get-by-key", db, key)).id, ourTask.id);
          assert.deepEqual(
            (await ours.list()).map((task) => task.id),
            [ourTask.id],
          );
        });
      });

      scenario("ours claims and fails a Python task; Python reads the envelope", async (t) => {
        const db = await backend.freshDatabase(t);
        const submitted = await pyTask("submit", db, "--name", "interop.work", "--payload", '{"n":1}');

        await withOurs(backend, db, async (ours) => {
          const claimed = await ours.store.claim({ queues: ["default"], workerId: "js-w", leaseMs: 30000 });
          assert.equal(claimed.length, 1);
          assert.equal(claimed[0].id, submitted.id);
          assert.equal(claimed[0].status, "running");
          assert.equal(claimed[0].attempt, 1);

          const failed = await ours.store.fail({
            taskId: submitted.id,
            workerId: "js-w",
            error: BAD_INPUT_ENVELOPE,
            retryable: false,
          });
          assert.equal(failed.status, "failed");
        });

        const read = await pyTask("get", db, submitted.id);
        assert.equal(read.status, "failed");
        assert.deepEqual(read.error, BAD_INPUT_ENVELOPE);
        assert.equal(read.worker_id, "js-w");
        assert.equal(read.attempt, 1);
        assert.equal(read.lease_until_ms, null);
        assert.equal(typeof read.completed_at_ms, "number");
      });

      scenario("Python claims and fails a task of ours; ours reads the envelope", async (t) => {
        const db = await backend.freshDatabase(t);
        await withOurs(backend, db, async (ours) => {
          const submitted = await ours.submit("interop.work", { n: 2 });

          const exchange = await py(
            "claim-fail",
            db,
            "--worker-id",
            "py-w",
            "--error",
            JSON.stringify(BAD_INPUT_ENVELOPE),
            "--no-retryable",
          );
          assert.deepEqual(
            exchange.claimed.map((task) => task.id),
            [submitted.id],
          );
          assert.equal(exchange.failed.status, "failed");

          const read = await ours.get(submitted.id);
          assert.equal(read.status, "failed");
          assert.deepEqual(read.error, BAD_INPUT_ENVELOPE);
          assert.equal(read.worker_id, "py-w");
          assert.equal(read.attempt, 1);
          assert.equal(read.lease_until_ms, null);
          assert.deepEqual(read, exchange.failed);
        });
      });
    });
  }
}
