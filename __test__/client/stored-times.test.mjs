// Durations the database adds to its clock (docs/api.md, "Values and JSON"):
// a delay, lease or backoff that is not finite, or past 1e15 ms, is refused
// with a plain Error naming its option, on every API that stores one, and
// writes nothing; and a REAL that another SDK left in an integer column
// (SQLite keeps what it is given) reads back instead of failing every read.

import assert from "node:assert/strict";

import { TaskContext } from "../../index.mjs";
import { assertPlainError, assertThrowsPlainError, claimTask, rejectionOf, runPython } from "../support/helpers.mjs";
import { forEachDialect, makeStore, sqlite, test } from "../support/dialects.mjs";

const TOO_LARGE = [Infinity, -Infinity, 1e300, 1e15 + 1];

/** The refusal every stored duration words alike. */
function refusal(option, value) {
  return `${option} must be a finite number of milliseconds, at most 1e15 (about 31,700 years), got ${value}`;
}

forEachDialect("stored times", (dialect) => {
  test("submit refuses a delay past 1e15 ms or not finite, names runAtDelayMs and writes nothing", async (t) => {
    const { client } = await dialect.open(t);
    for (const v of [Infinity, 1e300, 1e15 + 1]) {
      assertPlainError(await rejectionOf(client.submit("job", {}, { runAtDelayMs: v })), refusal("runAtDelayMs", v));
    }
    // Below zero keeps the API's own wording.
    assertPlainError(
      await rejectionOf(client.submit("job", {}, { runAtDelayMs: -Infinity })),
      "runAtDelayMs must be >= 0, got -Infinity",
    );
    assert.deepEqual(await client.list(), [], "a refused submit wrote a row");
    // The largest delay is stored exactly, and every read still works.
    const far = await client.submit("job", {}, { runAtDelayMs: 1e15 });
    assert.equal(far.run_at_ms - far.created_at_ms, 1e15);
    assert.equal((await client.get(far.id)).run_at_ms, far.run_at_ms);
    assert.deepEqual(
      (await client.list()).map((x) => x.id),
      [far.id],
    );
    assert.equal((await client.cancel(far.id)).status, "canceled");
  });

  test("leases and retry delays of the worker-side store methods are checked the same way", async (t) => {
    const { client } = await dialect.open(t);
    const store = client.store;
    const task = await client.submit("job");
    for (const v of TOO_LARGE) {
      const claim = { queues: ["default"], workerId: "w1", leaseMs: v, limit: 1 };
      assertPlainError(await rejectionOf(store.claim(claim)), refusal("leaseMs", v));
      assertPlainError(await rejectionOf(store.claimSession(claim, async () => "drew")), refusal("leaseMs", v));
    }
    assert.equal((await client.get(task.id)).status, "queued", "a refused claim claimed");
    await claimTask(store, task);
    const owner = { taskId: task.id, workerId: "w1" };
    assertPlainError(
      await rejectionOf(store.heartbeat({ ...owner, leaseMs: Infinity })),
      refusal("leaseMs", "Infinity"),
    );
    assertPlainError(
      await rejectionOf(store.heartbeatBatch({ taskIds: [task.id], workerId: "w1", leaseMs: 1e300 })),
      refusal("leaseMs", "1e+300"),
    );
    assertPlainError(await rejectionOf(store.fail({ ...owner, delayMs: Infinity })), refusal("delayMs", "Infinity"));
    const row = await client.get(task.id);
    assert.equal(row.status, "running", "a refused write changed the row");
    assert.ok(Number.isSafeInteger(row.lease_until_ms));
    // The row still settles with ordinary values.
    assert.equal((await store.fail({ ...owner, delayMs: 5, retryable: true })).status, "queued");
  });

  test("worker and task-context options that become stored times are checked at construction", async (t) => {
    const { db } = await dialect.open(t);
    const store = makeStore(t, dialect, db);
    for (const [option, value] of [
      ["leaseMs", Infinity],
      ["retryBackoffMs", Infinity],
      ["retryBackoffMaxMs", 1e300],
    ]) {
      assertThrowsPlainError(() => dialect.worker(db, { [option]: value }), refusal(option, value));
    }
    const fields = { id: "task_x", name: "job", queue: "default", attempt: 1, payload: {}, metadata: {} };
    assertThrowsPlainError(() => new TaskContext(store, fields, "w1", Infinity), refusal("leaseMs", "Infinity"));
    assertThrowsPlainError(
      () => new TaskContext(store, fields, "w1", 1000, { retryBackoffMs: NaN }),
      refusal("retryBackoffMs", "NaN"),
    );
  });

  test("retention cutoffs past 1e15 ms purge nothing instead of failing", async (t) => {
    const { client } = await dialect.open(t);
    assert.deepEqual(await client.purge({ olderThanMs: 1e300 }), []);
    assert.equal(await client.store.purgeCount({ olderThanMs: 1e300 }), 0);
  });

  if (dialect === sqlite) {
    test("a busy timeout past what SQLite holds (Infinity too) waits as long as it can instead of failing the open", async (t) => {
      const { db } = await dialect.open(t);
      for (const busyTimeoutMs of [Infinity, 1e12]) {
        const client = dialect.client(db, { busyTimeoutMs });
        try {
          assert.equal((await client.submit("job")).status, "queued");
        } finally {
          await client.close();
        }
      }
    });

    test("a REAL in an integer column (another SDK's write) is read as a number, not an error for every read", async (t) => {
      const { client, dbPath } = await dialect.open(t);
      const task = await client.submit("job", {}, { runAtDelayMs: 60_000 });
      await client.submit("other");
      await runPython(
        [
          "import sqlite3, sys",
          "c = sqlite3.connect(sys.argv[1])",
          'c.execute("update cairnq_tasks set run_at_ms = 9.3e18, priority = 2.5, lease_until_ms = 1.5e12 where id = ?", (sys.argv[2],))',
          "c.commit()",
          "assert c.execute('select typeof(run_at_ms) from cairnq_tasks where id = ?', (sys.argv[2],)).fetchone()[0] == 'real'",
        ].join("\n"),
        [dbPath, task.id],
      );
      const row = await client.get(task.id);
      assert.equal(row.run_at_ms, 2 ** 63, "saturated to the largest 64-bit integer (2^63 - 1, as a JS number)");
      assert.equal(row.priority, 2);
      assert.equal(row.lease_until_ms, 1.5e12);
      assert.equal((await client.list()).length, 2);
      assert.equal((await client.cancel(task.id)).status, "canceled");
      assert.equal((await client.stats()).default.canceled, 1);
    });
  }
});
