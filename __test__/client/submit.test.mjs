// CairnQ.submit and its options (docs/api.md, "Values and JSON", "Stores"): the
// row it writes, defaults, TaskDefs, and validation that writes nothing — on
// every dialect.

import { describe } from "node:test";
import assert from "node:assert/strict";

import { defineTask } from "../../index.mjs";
import { TASK_COLUMNS, TASK_ID, assertPlainError, rejectionOf } from "../support/helpers.mjs";
import { forEachDialect, test } from "../support/dialects.mjs";

// ---------------------------------------------------------------------------
forEachDialect("submit", (dialect) => {
  test("a default task has the 23 columns in table order and the documented defaults", async (t) => {
    const { client } = await dialect.open(t);
    const before = Date.now();
    const task = await client.submit("email.send");
    const after = Date.now();
    assert.deepEqual(Object.keys(task), TASK_COLUMNS);
    assert.match(task.id, TASK_ID);
    assert.equal(task.name, "email.send");
    assert.equal(task.queue, "default");
    assert.equal(task.status, "queued");
    assert.deepEqual(task.payload, {});
    assert.equal(task.result, null);
    assert.equal(task.error, null);
    assert.deepEqual(task.metadata, {});
    assert.equal(task.progress, null);
    assert.equal(task.message, null);
    assert.equal(task.attempt, 0);
    assert.equal(task.max_attempts, 3);
    assert.equal(task.priority, 0);
    assert.equal(task.worker_id, null);
    assert.equal(task.lease_until_ms, null);
    assert.equal(task.cancel_requested_at_ms, null);
    assert.equal(task.parent_id, null);
    assert.equal(task.root_id, task.id, "a top-level task is its own root");
    assert.equal(task.correlation_id, null);
    assert.equal(task.completed_at_ms, null);
    assert.equal(typeof task.created_at_ms, "number");
    assert.ok(task.created_at_ms >= before && task.created_at_ms <= after + dialect.clockSlackMs);
    assert.equal(task.updated_at_ms, task.created_at_ms);
    assert.equal(task.run_at_ms, task.created_at_ms);
    assert.deepEqual(await client.get(task.id), task, "get returns the same row");
    assert.deepEqual(Object.keys(await client.get(task.id)), TASK_COLUMNS);
  });

  test("every submit option lands in its column", async (t) => {
    const { client } = await dialect.open(t);
    const task = await client.submit(
      "report.build",
      { report: 7 },
      {
        queue: "reports",
        key: "report-7",
        conflict: "reuse",
        maxAttempts: 5,
        priority: 9,
        metadata: { requestedBy: "ana" },
        parentId: "task_PARENT",
        rootId: "task_ROOT",
        correlationId: "req-42",
        runAtDelayMs: 60_000,
      },
    );
    assert.equal(task.queue, "reports");
    assert.deepEqual(task.payload, { report: 7 });
    assert.equal(task.max_attempts, 5);
    assert.equal(task.priority, 9);
    assert.deepEqual(task.metadata, { requestedBy: "ana" });
    assert.equal(task.parent_id, "task_PARENT");
    assert.equal(task.root_id, "task_ROOT");
    assert.equal(task.correlation_id, "req-42");
    assert.equal(task.run_at_ms, task.created_at_ms + 60_000);
    assert.deepEqual(await client.getByKey("report-7"), task);
  });

  test("null options mean 'use the default'", async (t) => {
    const { client } = await dialect.open(t);
    const task = await client.submit(
      "job",
      { a: 1 },
      {
        queue: null,
        key: null,
        conflict: null,
        maxAttempts: null,
        priority: null,
        metadata: null,
        parentId: null,
        rootId: null,
        correlationId: null,
        runAtDelayMs: null,
      },
    );
    assert.equal(task.queue, "default");
    assert.equal(task.max_attempts, 3);
    assert.equal(task.priority, 0);
    assert.deepEqual(task.metadata, {});
    assert.equal(task.root_id, task.id);
    assert.equal(task.run_at_ms, task.created_at_ms);
  });

  test("a TaskDef is accepted wherever a name is", async (t) => {
    const { client } = await dialect.open(t);
    const def = defineTask("invoice.render");
    assert.deepEqual(def, { name: "invoice.render" });
    const task = await client.submit(def, { invoice: 1 });
    assert.equal(task.name, "invoice.render");
    assert.deepEqual(task.payload, { invoice: 1 });
  });

  test("ids are unique and root_id defaults per task", async (t) => {
    const { client } = await dialect.open(t);
    const tasks = await Promise.all(Array.from({ length: 50 }, () => client.submit("job")));
    assert.equal(new Set(tasks.map((x) => x.id)).size, 50);
    for (const task of tasks) assert.equal(task.root_id, task.id);
  });

  test("an empty string is a real key", async (t) => {
    const { client } = await dialect.open(t);
    const task = await client.submit("job", {}, { key: "" });
    assert.equal((await client.getByKey("")).id, task.id);
    const again = await client.submit("job", {}, { key: "" });
    assert.equal(again.id, task.id, "reuse hit on the empty-string key");
  });

  describe("validation: plain Error, exact message, nothing written", () => {
    const cases = [
      [
        "an unknown conflict strategy (without a key)",
        { conflict: "overwrite" },
        "unknown conflict strategy: overwrite",
      ],
      ["an unknown conflict strategy (with a key)", { key: "k", conflict: "nope" }, "unknown conflict strategy: nope"],
      ["maxAttempts 0", { maxAttempts: 0 }, "maxAttempts must be >= 1, got 0"],
      ["maxAttempts 0.5", { maxAttempts: 0.5 }, "maxAttempts must be >= 1, got 0.5"],
      ["maxAttempts -3", { key: "k", maxAttempts: -3 }, "maxAttempts must be >= 1, got -3"],
      ["runAtDelayMs -1", { runAtDelayMs: -1 }, "runAtDelayMs must be >= 0, got -1"],
      ["runAtDelayMs -0.5", { key: "k", runAtDelayMs: -0.5 }, "runAtDelayMs must be >= 0, got -0.5"],
    ];
    for (const [label, opts, message] of cases) {
      test(label, async (t) => {
        const { client } = await dialect.open(t);
        const err = await rejectionOf(client.submit("job", { x: 1 }, opts));
        assertPlainError(err, message);
        assert.deepEqual(await client.stats(), {});
        assert.deepEqual(await client.list(), []);
        assert.equal(await client.getByKey("k"), null);
      });
    }

    // Submits issued in one tick share a commit; a bad one must not take the
    // others down with it.
    const wrongTypes = [
      ["a queue that is a number", ["job", {}, { queue: 5 }], "queue must be a string, got 5"],
      ["a key that is an object", ["job", {}, { key: { k: 1 } }], "key must be a string, got an object"],
      ["a name that is missing", [{}, {}], "name must be a string, got undefined"],
      [
        "a queue JSON cannot carry",
        ["job", {}, { queue: 5n }],
        "submit: an argument JSON cannot carry: Do not know how to serialize a BigInt",
      ],
    ];
    for (const [label, args, message] of wrongTypes) {
      test(`${label} fails that submit alone, among others of its tick`, async (t) => {
        const { client } = await dialect.open(t);
        const [before, bad, after] = await Promise.allSettled([
          client.submit("job", { n: 1 }),
          client.submit(.../** @type {[any, any, any]} */ (args)),
          client.submit("job", { n: 2 }),
        ]);
        assert.equal(bad.status, "rejected");
        assertPlainError(bad.reason, message);
        assert.equal(before.status, "fulfilled", String(before.reason));
        assert.equal(after.status, "fulfilled", String(after.reason));
        const rows = await client.list();
        assert.deepEqual(
          rows.map((row) => row.payload).sort((a, b) => a.n - b.n),
          [{ n: 1 }, { n: 2 }],
        );
      });
    }

    test("priority and non-integer numbers are not validated", async (t) => {
      const { client } = await dialect.open(t);
      const task = await client.submit("job", {}, { priority: -5, maxAttempts: 1 });
      assert.equal(task.priority, -5);
      assert.equal(task.max_attempts, 1);
    });
  });
});
