// Keyed submits (docs/protocol.md, "Keyed submit"): the reuse, reuse-succeeded,
// reject and replace strategies and concurrent submits on one key — on every
// dialect.

import assert from "node:assert/strict";

import { AlreadyExists, CairnQ, CairnQError, SQLiteStore } from "../../index.mjs";
import {
  ENVELOPE,
  claimTask,
  defer,
  makeDbPath,
  rejectionOf,
  submitAndFail,
  submitAndSucceed,
} from "../support/helpers.mjs";
import { forEachDialect, sqlite, test } from "../support/dialects.mjs";

// ---------------------------------------------------------------------------
forEachDialect("keyed submit strategies", (dialect) => {
  test("reuse (the default) returns a live task unchanged", async (t) => {
    const { client } = await dialect.open(t);
    const first = await client.submit("job", { v: 1 }, { key: "k" });
    const second = await client.submit("job", { v: 2 }, { key: "k" });
    const explicit = await client.submit("job", { v: 3 }, { key: "k", conflict: "reuse" });
    assert.deepEqual(second, first);
    assert.deepEqual(explicit, first);
    assert.equal((await client.list()).length, 1);
  });

  test("reuse returns a running task unchanged", async (t) => {
    const { client } = await dialect.open(t);
    const first = await client.submit("job", {}, { key: "k" });
    const running = await claimTask(client.store, first);
    const again = await client.submit("job", {}, { key: "k" });
    assert.deepEqual(again, running);
  });

  test("reuse creates a new task once the old one succeeded, failed or was canceled", async (t) => {
    const { client } = await dialect.open(t);
    const succeeded = await submitAndSucceed(client, "job", { ok: 1 }, { key: "k" });
    const afterSuccess = await client.submit("job", { v: 2 }, { key: "k" });
    assert.notEqual(afterSuccess.id, succeeded.id);
    assert.equal(afterSuccess.status, "queued");
    assert.equal((await client.getByKey("k")).id, afterSuccess.id, "the key now points at the new task");
    assert.deepEqual(await client.get(succeeded.id), succeeded, "the old task is untouched");

    await client.cancel(afterSuccess.id);
    const afterCancel = await client.submit("job", { v: 3 }, { key: "k" });
    assert.notEqual(afterCancel.id, afterSuccess.id);

    await claimTask(client.store, afterCancel);
    await client.store.fail({ taskId: afterCancel.id, workerId: "w1", error: ENVELOPE, retryable: false });
    const afterFail = await client.submit("job", { v: 4 }, { key: "k" });
    assert.notEqual(afterFail.id, afterCancel.id);
    assert.equal((await client.list()).length, 4);
  });

  test("reuse-succeeded returns a succeeded task with its result, but not a failed one", async (t) => {
    const { client } = await dialect.open(t);
    const done = await submitAndSucceed(client, "answer", { answer: 42 }, { key: "ok" });
    const hit = await client.submit("answer", {}, { key: "ok", conflict: "reuse-succeeded" });
    assert.equal(hit.id, done.id);
    assert.equal(hit.status, "succeeded");
    assert.deepEqual(hit.result, { answer: 42 });

    const live = await client.submit("live", {}, { key: "live" });
    const liveHit = await client.submit("live", {}, { key: "live", conflict: "reuse-succeeded" });
    assert.equal(liveHit.id, live.id);

    const failed = await submitAndFail(client, "broken", { key: "bad" });
    const fresh = await client.submit("broken", {}, { key: "bad", conflict: "reuse-succeeded" });
    assert.notEqual(fresh.id, failed.id);
    assert.equal(fresh.status, "queued");
  });

  test("reject raises AlreadyExists for an existing task of any status and writes nothing", async (t) => {
    const { client } = await dialect.open(t);
    const queued = await client.submit("queued.job", {}, { key: "q" });
    const done = await submitAndSucceed(client, "done.job", {}, { key: "s" });
    const failed = await submitAndFail(client, "failed.job", { key: "f" });
    const before = await client.stats();
    for (const [key, existing] of [
      ["q", queued],
      ["s", done],
      ["f", failed],
    ]) {
      const err = await rejectionOf(client.submit("job", { new: true }, { key, conflict: "reject" }));
      assert.ok(err instanceof AlreadyExists, `${key}: ${err}`);
      assert.ok(err instanceof CairnQError);
      assert.equal(err.name, "AlreadyExists");
      assert.equal(err.key, key);
      assert.equal(err.message, `task with key ${key} already exists`);
      assert.equal((await client.getByKey(key)).id, existing.id);
    }
    assert.deepEqual(await client.stats(), before);
    const fresh = await client.submit("job", {}, { key: "unused", conflict: "reject" });
    assert.equal((await client.getByKey("unused")).id, fresh.id);
  });

  test("replace cancels a queued task and points the key at the new one", async (t) => {
    const { client } = await dialect.open(t);
    const old = await client.submit("job", { v: 1 }, { key: "k" });
    const replacement = await client.submit("job", { v: 2 }, { key: "k", conflict: "replace" });
    assert.notEqual(replacement.id, old.id);
    assert.deepEqual(replacement.payload, { v: 2 });
    const oldNow = await client.get(old.id);
    assert.equal(oldNow.status, "canceled");
    assert.notEqual(oldNow.completed_at_ms, null);
    assert.equal((await client.getByKey("k")).id, replacement.id);
  });

  test("replace only flags a running task for cancellation", async (t) => {
    const { client } = await dialect.open(t);
    const old = await client.submit("job", {}, { key: "k" });
    await claimTask(client.store, old);
    const replacement = await client.submit("job", {}, { key: "k", conflict: "replace" });
    const oldNow = await client.get(old.id);
    assert.equal(oldNow.status, "running");
    assert.notEqual(oldNow.cancel_requested_at_ms, null);
    assert.equal((await client.getByKey("k")).id, replacement.id);
  });

  test("replace leaves a terminal task untouched", async (t) => {
    const { client } = await dialect.open(t);
    const done = await submitAndSucceed(client, "job", { r: 1 }, { key: "k" });
    const replacement = await client.submit("job", {}, { key: "k", conflict: "replace" });
    assert.notEqual(replacement.id, done.id);
    assert.deepEqual(await client.get(done.id), done);
  });

  test("20 concurrent reuse submits against a finished key collapse onto one new task", async (t) => {
    const { client } = await dialect.open(t);
    const done = await submitAndSucceed(client, "job", {}, { key: "hot" });
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => client.submit("job", { i }, { key: "hot" })),
    );
    const ids = new Set(results.map((x) => x.id));
    assert.equal(ids.size, 1, `expected one task, got ${ids.size}`);
    const [newId] = ids;
    assert.notEqual(newId, done.id);
    assert.equal((await client.getByKey("hot")).id, newId);
    assert.equal((await client.list({ name: "job" })).length, 2);
  });

  // Two stores on one SQLite file (Postgres: postgres/client.test.mjs, the advisory lock).
  if (dialect === sqlite) {
    test("two SQLiteStores on one file in one process submit keyed tasks concurrently", async (t) => {
      const dbPath = makeDbPath(t);
      const a = new CairnQ(new SQLiteStore(dbPath));
      const b = new CairnQ(new SQLiteStore(dbPath));
      defer(t, () => a.close());
      defer(t, () => b.close());
      await Promise.all([a.connect(), b.connect()]);
      const submits = [];
      for (let i = 0; i < 20; i++) {
        const client = i % 2 === 0 ? a : b;
        submits.push(client.submit("shared", { i }, { key: "same-key" }));
        submits.push(client.submit("own", { i }, { key: `own-${i}` }));
      }
      const results = await Promise.all(submits);
      const shared = results.filter((x) => x.name === "shared");
      const own = results.filter((x) => x.name === "own");
      assert.equal(new Set(shared.map((x) => x.id)).size, 1, "same key → one task across both stores");
      assert.equal(new Set(own.map((x) => x.id)).size, 20, "distinct keys → distinct tasks");
      assert.equal((await a.list({ limit: 1000 })).length, 21);
      assert.deepEqual(await a.stats(), await b.stats());
      for (let i = 0; i < 20; i++) {
        assert.equal((await b.getByKey(`own-${i}`)).payload.i, i);
      }
    });
  }
});
