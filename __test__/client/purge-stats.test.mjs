// purge, stats and queueDepth (docs/api.md, "Stores"; docs/protocol.md,
// "Purge") — on every dialect.

import assert from "node:assert/strict";

import { STATUSES } from "../../index.mjs";
import {
  assertPlainError,
  claimTask,
  openClient,
  rejectionOf,
  runPython,
  submitAndFail,
  submitAndSucceed,
  waitFor,
  waitUntilPast,
} from "../support/helpers.mjs";
import { forEachDialect, sqlite, test } from "../support/dialects.mjs";
import { runForeignSql } from "../support/foreign-sql.mjs";

// ---------------------------------------------------------------------------
forEachDialect("purge", (dialect) => {
  test("validation errors are plain Errors", async (t) => {
    const { client } = await dialect.open(t);
    assertPlainError(await rejectionOf(client.purge({ olderThanMs: -1 })), "olderThanMs must be >= 0, got -1");
    assertPlainError(await rejectionOf(client.purge({ limit: 0 })), "limit must be >= 1, got 0");
    assertPlainError(await rejectionOf(client.purge({ limit: -5 })), "limit must be >= 1, got -5");
    // Checked in this order, before anything is deleted.
    assertPlainError(
      await rejectionOf(client.purge({ olderThanMs: NaN, limit: 0 })),
      "olderThanMs must be >= 0, got NaN",
    );
    assertPlainError(
      await rejectionOf(client.purge({ olderThanMs: Infinity })),
      "olderThanMs must be >= 0, got Infinity",
    );
    assertPlainError(await rejectionOf(client.purge({ limit: 0, status: "queued" })), "limit must be >= 1, got 0");
    assertPlainError(await rejectionOf(client.purge({ status: "running" })), "status must be terminal, got running");
    assertPlainError(await rejectionOf(client.purge({ status: "finished" })), "status must be terminal, got finished");
  });

  test('queue, status and name each narrow the purge; together they all apply; "" is a real filter', async (t) => {
    const { client, db } = await dialect.open(t);
    const aOk = await submitAndSucceed(client, "alpha", {}, { queue: "a" });
    const aBad = await submitAndFail(client, "alpha", { queue: "a" });
    const bOk = await submitAndSucceed(client, "beta", {}, { queue: "b" });
    const bBeta = await submitAndSucceed(client, "gamma", {}, { queue: "b" });
    // The API refuses an empty name or queue; another program may write one.
    const blank = await submitAndSucceed(client, "blank", {}, { queue: "blank" });
    await runForeignSql(db, `update cairnq_tasks set name = '', queue = '' where id = '${blank.id}'`);
    const live = await client.submit("alpha", {}, { queue: "a" });
    await waitUntilPast(
      Math.max(
        aOk.completed_at_ms,
        aBad.completed_at_ms,
        bOk.completed_at_ms,
        bBeta.completed_at_ms,
        blank.completed_at_ms,
      ),
    );

    assert.deepEqual(await client.purge({ queue: "nowhere" }), []);
    assert.deepEqual(await client.purge({ queue: "a", status: "succeeded", name: "beta" }), []);
    assert.deepEqual(await client.purge({ queue: "a", status: "failed" }), [aBad.id]);
    assert.deepEqual(await client.purge({ status: "succeeded", name: "beta" }), [bOk.id]);
    assert.deepEqual(await client.purge({ queue: "" }), [blank.id]);
    assert.deepEqual(await client.purge({ queue: "a" }), [aOk.id]);
    assert.deepEqual(await client.purge({ name: "gamma", olderThanMs: 3_600_000 }), [], "the cutoff still applies");
    assert.deepEqual(await client.purge({ name: "gamma" }), [bBeta.id]);
    assert.equal((await client.get(live.id)).status, "queued");
  });

  test("with defaults it deletes every finished task and keeps live ones", async (t) => {
    const { client } = await dialect.open(t);
    const ok = await submitAndSucceed(client, "ok");
    const bad = await submitAndFail(client, "bad");
    const gone = await client.submit("gone");
    const canceled = await client.cancel(gone.id);
    const queued = await client.submit("queued");
    const running = await client.submit("running");
    await claimTask(client.store, running);
    await waitUntilPast(Math.max(ok.completed_at_ms, bad.completed_at_ms, canceled.completed_at_ms));
    const deleted = await client.purge();
    assert.deepEqual([...deleted].sort(), [ok.id, bad.id, canceled.id].sort());
    for (const id of deleted) assert.equal(await client.get(id), null);
    assert.equal((await client.get(queued.id)).status, "queued");
    assert.equal((await client.get(running.id)).status, "running");
    assert.deepEqual(await client.purge(), []);
  });

  test("only tasks completed strictly before now − olderThanMs are deleted", async (t) => {
    const { client } = await dialect.open(t);
    const older = await submitAndSucceed(client, "older");
    await waitFor(() => Date.now() > older.completed_at_ms + 400, { timeoutMs: 5_000 });
    const newer = await submitAndSucceed(client, "newer");
    assert.deepEqual(await client.purge({ olderThanMs: 60_000 }), [], "nothing is a minute old");
    const deleted = await client.purge({ olderThanMs: 200 });
    assert.deepEqual(deleted, [older.id]);
    assert.notEqual(await client.get(newer.id), null);
  });

  test("limit caps one call, oldest completion first; looping drains the rest", async (t) => {
    const { client } = await dialect.open(t);
    const finished = [];
    for (let i = 0; i < 5; i++) {
      const done = await submitAndSucceed(client, "job", { i });
      finished.push(done);
      await waitUntilPast(done.completed_at_ms);
    }
    const first = await client.purge({ limit: 2 });
    assert.deepEqual(first, [finished[0].id, finished[1].id]);
    const second = await client.purge({ limit: 2 });
    assert.deepEqual(second, [finished[2].id, finished[3].id]);
    const third = await client.purge({ limit: 2 });
    assert.deepEqual(third, [finished[4].id]);
    assert.deepEqual(await client.stats(), {});
  });

  // Reads the key table straight from the SQLite file.
  if (dialect === sqlite) {
    test("purging a keyed task frees its key", async (t) => {
      const { client, dbPath } = openClient(t);
      const done = await submitAndSucceed(client, "job", {}, { key: "k" });
      await waitUntilPast(done.completed_at_ms);
      assert.deepEqual(await client.purge(), [done.id]);
      assert.equal(await client.getByKey("k"), null);
      const fresh = await client.submit("job", {}, { key: "k", conflict: "reject" });
      assert.equal((await client.getByKey("k")).id, fresh.id);
      await client.close();
      const keyRows = await runPython(
        [
          "import sqlite3, sys",
          "c = sqlite3.connect(sys.argv[1])",
          "sys.stdout.write(repr(c.execute('SELECT key, task_id FROM cairnq_task_keys').fetchall()))",
        ].join("\n"),
        [dbPath],
      );
      assert.equal(keyRows, `[('k', '${fresh.id}')]`);
    });
  }

  test("purge deletes finished tasks strictly older than the cutoff, oldest first, in limit-sized batches; keys cascade", async (t) => {
    const { client } = await dialect.open(t);
    const live = await client.submit("live");
    const finished = [];
    for (let i = 0; i < 5; i++) finished.push(await submitAndSucceed(client, "done", { i }, { key: `k${i}` }));
    await waitUntilPast(finished.at(-1).completed_at_ms);
    assert.deepEqual(await client.purge({ olderThanMs: 3_600_000 }), [], "nothing is an hour old");
    const first = await client.purge({ limit: 2 });
    assert.equal(first.length, 2);
    const byCompletion = [...finished].sort((a, b) => a.completed_at_ms - b.completed_at_ms || 0);
    for (const id of first)
      assert.ok(
        byCompletion.slice(0, 3).some((x) => x.id === id),
        "oldest completions first",
      );
    const rest = await client.purge();
    assert.deepEqual([...first, ...rest].sort(), finished.map((x) => x.id).sort());
    assert.equal(await client.getByKey("k0"), null, "the key went with its task");
    assert.deepEqual(
      (await client.list()).map((x) => x.id),
      [live.id],
    );
    const fresh = await client.submit("done", {}, { key: "k0", conflict: "reject" });
    assert.equal(fresh.status, "queued", "a purged key is free again");
    const err = await rejectionOf(client.purge({ limit: 0 }));
    assert.equal(err.message, "limit must be >= 1, got 0");
  });
});

// ---------------------------------------------------------------------------
forEachDialect("stats", (dialect) => {
  test("stats(queue) reports that queue alone, zero-filled when it has no rows; null means every queue", async (t) => {
    const { client } = await dialect.open(t);
    await client.submit("job", {}, { queue: "one" });
    await submitAndSucceed(client, "job", {}, { queue: "two" });
    const zeros = Object.fromEntries(STATUSES.map((status) => [status, 0]));
    assert.deepEqual(await client.stats("one"), { one: { ...zeros, queued: 1 } });
    assert.deepEqual(await client.stats("two"), { two: { ...zeros, succeeded: 1 } });
    assert.deepEqual(await client.stats("nosuch"), { nosuch: zeros });
    assert.deepEqual(await client.stats(""), { "": zeros });
    assert.deepEqual(Object.keys(await client.stats(null)), ["one", "two"]);
    assert.deepEqual(await client.stats(undefined), await client.stats());
  });

  test("an empty database gives {}", async (t) => {
    const { client } = await dialect.open(t);
    assert.deepEqual(await client.stats(), {});
  });

  test("per queue, zero-filled, statuses in STATUSES order, queues ascending", async (t) => {
    const { client } = await dialect.open(t);
    await client.submit("job", {}, { queue: "zeta" });
    await client.submit("job", {}, { queue: "alpha" });
    await client.submit("job", {}, { queue: "alpha" });
    const running = await client.submit("run", {}, { queue: "mid" });
    await claimTask(client.store, running);
    await submitAndSucceed(client, "ok", {}, { queue: "mid" });
    await submitAndFail(client, "bad", { queue: "mid" });
    const c = await client.submit("job", {}, { queue: "mid" });
    await client.cancel(c.id);

    const stats = await client.stats();
    assert.deepEqual(Object.keys(stats), ["alpha", "mid", "zeta"]);
    for (const queue of Object.keys(stats)) assert.deepEqual(Object.keys(stats[queue]), [...STATUSES]);
    assert.deepEqual(stats, {
      alpha: { queued: 2, running: 0, succeeded: 0, failed: 0, canceled: 0 },
      mid: { queued: 0, running: 1, succeeded: 1, failed: 1, canceled: 1 },
      zeta: { queued: 1, running: 0, succeeded: 0, failed: 0, canceled: 0 },
    });
    for (const counts of Object.values(stats)) {
      for (const n of Object.values(counts)) assert.equal(typeof n, "number");
    }
  });

  test("a queue disappears once all its rows are purged", async (t) => {
    const { client } = await dialect.open(t);
    const done = await submitAndSucceed(client, "ok", {}, { queue: "temp" });
    await client.submit("job", {}, { queue: "kept" });
    await waitUntilPast(done.completed_at_ms);
    await client.purge();
    assert.deepEqual(Object.keys(await client.stats()), ["kept"]);
  });
});

// ---------------------------------------------------------------------------
forEachDialect("queueDepth", (dialect) => {
  test("headroom counts queued rows (delayed included), not running ones", async (t) => {
    const { client } = await dialect.open(t);
    await client.submit("job", {}, { queue: "q" });
    await client.submit("job", {}, { queue: "q", runAtDelayMs: 60_000 });
    const running = await client.submit("run", {}, { queue: "q" });
    await claimTask(client.store, running);
    assert.equal(await client.queueDepth("q", 5), 3);
    assert.equal(await client.queueDepth("q", 2), 0);
    assert.equal(await client.queueDepth("q", 1), 0, "never negative");
    assert.equal(await client.queueDepth("other", 5), 5);
    assert.equal(await client.queueDepth("q", 0), 0);
  });

  test("a non-integer or negative maxDepth is a plain Error", async (t) => {
    const { client } = await dialect.open(t);
    assertPlainError(
      await rejectionOf(client.queueDepth("q", 1.5)),
      "maxDepth must be a non-negative integer, got 1.5",
    );
    assertPlainError(await rejectionOf(client.queueDepth("q", -1)), "maxDepth must be a non-negative integer, got -1");
  });
});
