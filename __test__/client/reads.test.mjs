// Reads (docs/api.md, "Stores"): get, getByKey and list with its filters, order
// and paging — on every dialect.

import assert from "node:assert/strict";
import { TaskTimeout, isTerminal } from "../../index.mjs";

import {
  TASK_COLUMNS,
  assertPlainError,
  claimTask,
  newestFirst,
  rejectionOf,
  waitUntilPast,
} from "../support/helpers.mjs";
import { forEachDialect, test } from "../support/dialects.mjs";

// ---------------------------------------------------------------------------
forEachDialect("get, getByKey and list", (dialect) => {
  test("getStatus and getStatusByKey: {id, status} only, following the key; null for what does not exist", async (t) => {
    const { client } = await dialect.open(t);
    assert.equal(await client.getStatus("task_00000000000000000000000000"), null);
    assert.equal(await client.getStatusByKey("no-such-key"), null);
    const first = await client.submit("job", { big: "x".repeat(1000) }, { key: "k" });
    const ref = await client.getStatus(first.id);
    assert.deepEqual(Object.keys(ref), ["id", "status"]);
    assert.deepEqual(ref, { id: first.id, status: "queued" });
    assert.deepEqual(await client.getStatusByKey("k"), ref);
    const second = await client.submit("job", {}, { key: "k", conflict: "replace" });
    assert.deepEqual(await client.getStatusByKey("k"), { id: second.id, status: "queued" });
    assert.deepEqual(await client.getStatus(first.id), { id: first.id, status: "canceled" });
    assert.equal(isTerminal(await client.getStatus(first.id)), true);
    assert.deepEqual(await client.store.getStatus(second.id), { id: second.id, status: "queued" });
  });

  test("get and getByKey return null for what does not exist", async (t) => {
    const { client } = await dialect.open(t);
    assert.equal(await client.get("task_01HZZZZZZZZZZZZZZZZZZZZZZZ"), null);
    assert.equal(await client.getByKey("never-used"), null);
  });

  test("an id or key that is not a string names no task: null, and a wait runs to its deadline", async (t) => {
    const { client } = await dialect.open(t);
    const task = await client.submit("job", {}, { key: "5" });
    for (const id of [undefined, null, 5, { id: task.id }]) {
      assert.equal(await client.get(/** @type {any} */ (id)), null);
      assert.equal(await client.getStatus(/** @type {any} */ (id)), null);
      assert.equal(await client.cancel(/** @type {any} */ (id)), null);
      assert.equal(await client.retry(/** @type {any} */ (id)), null);
    }
    for (const key of [undefined, null, 5]) {
      assert.equal(await client.getByKey(/** @type {any} */ (key)), null);
      assert.equal(await client.getStatusByKey(/** @type {any} */ (key)), null);
      assert.equal(await client.cancelByKey(/** @type {any} */ (key)), null);
      assert.equal(await client.retryByKey(/** @type {any} */ (key)), null);
    }
    assert.equal((await client.get(task.id))?.status, "queued", "nothing was canceled");
    const err = await rejectionOf(client.wait(/** @type {any} */ (undefined), { timeoutMs: 50 }));
    assert.ok(err instanceof TaskTimeout, String(err));
    assert.equal(
      err.message,
      "task undefined did not finish within 50ms: task not found — wrong database file, or already purged?",
    );
    assert.equal(err.task, null);
  });

  test("getByKey follows the key to the task it currently points at", async (t) => {
    const { client } = await dialect.open(t);
    const first = await client.submit("job", {}, { key: "k" });
    assert.equal((await client.getByKey("k")).id, first.id);
    const second = await client.submit("job", {}, { key: "k", conflict: "replace" });
    assert.deepEqual(await client.getByKey("k"), second);
  });

  test("each filter narrows by equality and null means no filter", async (t) => {
    const { client } = await dialect.open(t);
    const a = await client.submit("alpha", {}, { queue: "q1", correlationId: "c1" });
    const b = await client.submit("beta", {}, { queue: "q2", correlationId: "c1", rootId: a.id, parentId: a.id });
    const c = await client.submit("alpha", {}, { queue: "q2" });
    await claimTask(client.store, c);
    const ids = async (input) => (await client.list(input)).map((x) => x.id).sort();

    assert.deepEqual(await ids({ status: "running" }), [c.id]);
    assert.deepEqual(await ids({ status: "queued" }), [a.id, b.id].sort());
    assert.deepEqual(await ids({ status: "failed" }), []);
    assert.deepEqual(await ids({ queue: "q2" }), [b.id, c.id].sort());
    assert.deepEqual(await ids({ name: "alpha" }), [a.id, c.id].sort());
    assert.deepEqual(await ids({ rootId: a.id }), [a.id, b.id].sort());
    assert.deepEqual(await ids({ correlationId: "c1" }), [a.id, b.id].sort());
    assert.deepEqual(await ids({ name: "alpha", queue: "q2" }), [c.id]);
    assert.deepEqual(await ids({ name: "alpha", status: "queued", queue: "q2" }), []);
    assert.deepEqual(
      await ids({ status: null, queue: null, name: null, rootId: null, correlationId: null }),
      [a.id, b.id, c.id].sort(),
    );
    assert.deepEqual(await ids(), [a.id, b.id, c.id].sort());
  });

  test("order is newest first with the id as tie-break, and limit/offset page through it", async (t) => {
    const { client } = await dialect.open(t);
    // Concurrent submits share milliseconds, which exercises the id tie-break.
    const created = [];
    for (let round = 0; round < 3; round++) {
      created.push(...(await Promise.all(Array.from({ length: 10 }, (_, i) => client.submit("job", { round, i })))));
      const newest = Math.max(...created.map((x) => x.created_at_ms));
      await waitUntilPast(newest);
    }
    const expected = newestFirst(created).map((x) => x.id);
    const listed = (await client.list()).map((x) => x.id);
    assert.deepEqual(listed, expected);
    assert.deepEqual(
      (await client.list({ limit: 7 })).map((x) => x.id),
      expected.slice(0, 7),
    );
    assert.deepEqual(
      (await client.list({ limit: 7, offset: 5 })).map((x) => x.id),
      expected.slice(5, 12),
    );
    assert.deepEqual(
      (await client.list({ offset: 28 })).map((x) => x.id),
      expected.slice(28),
    );
    assert.deepEqual(await client.list({ offset: 30 }), []);
    assert.deepEqual(await client.list({ limit: 0 }), []);
  });

  test("the default limit is 100", async (t) => {
    const { client } = await dialect.open(t);
    await Promise.all(Array.from({ length: 105 }, () => client.submit("job")));
    assert.equal((await client.list()).length, 100);
    assert.equal((await client.list({ limit: 200 })).length, 105);
  });

  test("rows come back with the 23 columns in table order", async (t) => {
    const { client } = await dialect.open(t);
    await client.submit("job");
    const [row] = await client.list();
    assert.deepEqual(Object.keys(row), TASK_COLUMNS);
  });

  test("an unknown status filter is a plain Error", async (t) => {
    const { client } = await dialect.open(t);
    assertPlainError(await rejectionOf(client.list({ status: "done" })), "unknown status filter: done");
  });

  test("negative limit or offset is a plain Error echoing the raw inputs", async (t) => {
    const { client } = await dialect.open(t);
    assertPlainError(
      await rejectionOf(client.list({ limit: -1 })),
      "limit/offset must be >= 0, got limit=-1 offset=undefined",
    );
    assertPlainError(
      await rejectionOf(client.list({ offset: -2 })),
      "limit/offset must be >= 0, got limit=undefined offset=-2",
    );
    assertPlainError(
      await rejectionOf(client.list({ limit: 5, offset: -1 })),
      "limit/offset must be >= 0, got limit=5 offset=-1",
    );
  });
});
