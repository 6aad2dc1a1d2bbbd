// CairnQ.submitMany and ctx.submitMany (docs/api.md, "Bulk submit"): one
// transaction, all or nothing, refs in item order, keyed items by their
// conflict rule, refusals naming the item — on every dialect.

import assert from "node:assert/strict";

import { AlreadyExists, SerializationError, defineTask } from "../../index.mjs";
import { rejectionOf } from "../support/helpers.mjs";
import { makeGate } from "../support/worker-helpers.mjs";
import { forEachDialect, setupWorker, test } from "../support/dialects.mjs";

/** Every task of the database, by id. */
async function allTasks(client) {
  const rows = await client.list({ limit: 100_000 });
  return new Map(rows.map((row) => [row.id, row]));
}

// ---------------------------------------------------------------------------
forEachDialect("submitMany", (dialect) => {
  test("stores every item with its options and answers refs in item order", async (t) => {
    const { client } = await dialect.open(t);
    const refs = await client.submitMany([
      { task: "a", payload: { n: 1 } },
      { task: defineTask("b"), payload: [2], options: { queue: "q2", priority: 7, maxAttempts: 5 } },
      { task: "c", options: { metadata: { m: true }, group: "tenant-1", runAtDelayMs: 60_000 } },
    ]);
    assert.equal(refs.length, 3);
    assert.deepEqual(
      refs.map((ref) => ref.status),
      ["queued", "queued", "queued"],
    );
    const rows = refs.map(async (ref) => client.get(ref.id));
    const [a, b, c] = await Promise.all(rows);
    assert.deepEqual([a.name, a.queue, a.payload, a.root_id], ["a", "default", { n: 1 }, a.id]);
    assert.deepEqual([b.name, b.queue, b.payload, b.priority, b.max_attempts], ["b", "q2", [2], 7, 5]);
    assert.deepEqual(c.payload, {});
    assert.deepEqual(c.metadata, { m: true, "cairnq.group": "tenant-1" });
    assert.ok(c.run_at_ms >= c.created_at_ms + 60_000);
    assert.deepEqual(await client.submitMany([]), [], "no items, no transaction");
  });

  test("a bad item refuses the whole call naming its place, and nothing is stored", async (t) => {
    const { client } = await dialect.open(t);
    const good = { task: "ok", payload: { fine: true } };
    const cases = [
      [{ task: "x", options: { priority: 1e12 } }, /^items\[2\]\.options\.priority must be a number from/],
      [{ task: "" }, /^items\[2\]\.task must be a non-empty string/],
      [{ task: "x", options: { maxAttempts: 0 } }, /^items\[2\]\.options\.maxAttempts must be >= 1, got 0$/],
      [{ task: "x", options: { queue: "" } }, /^items\[2\]\.options\.queue must be a non-empty string/],
      [{ task: "x", options: { prio: 1 } }, /^unknown key "prio" in items\[2\]\.options \(known: queue, /],
      [{ task: "x", opts: {} }, /^unknown key "opts" in items\[2\] \(known: task, payload, options\)$/],
      [{ task: "x", options: { priority: "high" } }, /^items\[2\]\.options\.priority must be a number, got "high"$/],
      [{ task: "x", options: { priority: NaN } }, /^items\[2\]\.options\.priority must be /],
      [{ task: "x", options: "fast" }, /^items\[2\]\.options must be an object, got "fast"$/],
      [{ task: 5 }, /^items\[2\]\.task must be a string, got 5$/],
      [null, /^items\[2\] must be an object, got null$/],
      [{ task: "x", options: { conflict: "nope", key: "k" } }, /^items\[2\]: unknown conflict strategy: nope$/],
      [{ task: "x", options: { key: "cairnq:own" } }, /^items\[2\]\.options\.key must be outside/],
      [{ task: "x", options: { debounceMs: 10 } }, /^items\[2\]\.options\.debounceMs requires a key$/],
    ];
    for (const [bad, message] of cases) {
      const err = await rejectionOf(client.submitMany([good, good, bad, good]));
      assert.equal(err.name, "Error", `${JSON.stringify(bad)}: ${err.name}: ${err.message}`);
      assert.match(err.message, message);
    }
    const payload = await rejectionOf(client.submitMany([good, { task: "x", payload: { n: 1n } }]));
    assert.ok(payload instanceof SerializationError);
    assert.match(payload.message, /^items\[1\]\.payload: /);
    const metadata = await rejectionOf(client.submitMany([{ task: "x", options: { metadata: { n: 1n } } }]));
    assert.ok(metadata instanceof SerializationError);
    assert.match(metadata.message, /^items\[0\]\.options\.metadata: /);
    const notArray = await rejectionOf(client.submitMany("tasks"));
    assert.equal(notArray.message, 'items must be an array, got "tasks"');
    assert.equal((await allTasks(client)).size, 0, "no item of a refused call is stored");
  });

  test("a keyed item's conflict refuses the call after earlier inserts: all rolled back", async (t) => {
    const { client } = await dialect.open(t);
    const held = await client.submit("held", {}, { key: "k1" });
    const err = await rejectionOf(
      client.submitMany([
        { task: "first", payload: { i: 0 } },
        { task: "keyed", options: { key: "k2" } },
        { task: "clash", options: { key: "k1", conflict: "reject" } },
      ]),
    );
    assert.ok(err instanceof AlreadyExists, `got ${err?.name}: ${err?.message}`);
    const rows = await allTasks(client);
    assert.deepEqual([...rows.keys()], [held.id], "only the task stored before the call");
    assert.equal(await client.getByKey("k2"), null, "the rolled-back item's key points nowhere");
  });

  test("keyed items follow their conflict rule, each seeing the items before it", async (t) => {
    const { client } = await dialect.open(t);
    const live = await client.submit("live", {}, { key: "live" });
    const refs = await client.submitMany([
      { task: "reuse", options: { key: "live" } },
      { task: "new", options: { key: "fresh" } },
      { task: "again", options: { key: "fresh" } },
      { task: "replace", options: { key: "fresh", conflict: "replace" } },
    ]);
    assert.equal(refs[0].id, live.id, "reuse answers the live task");
    assert.equal(refs[2].id, refs[1].id, "a later item reuses an earlier one's task");
    assert.notEqual(refs[3].id, refs[1].id);
    assert.equal((await client.get(refs[1].id)).status, "canceled", "replace canceled the earlier item");
    assert.equal((await client.getByKey("fresh")).id, refs[3].id);
    assert.equal((await allTasks(client)).size, 3);
  });

  test("payloads are stored as JSON.stringify writes each one alone", async (t) => {
    const { client } = await dialect.open(t);
    const when = new Date(Date.UTC(2026, 0, 2));
    const keyed = { toJSON: (key) => `called with "${key}"` };
    const nested = { at: when, keyed };
    const payloads = [{ a: null }, when, keyed, "text", 42, true, nested, { s: "null" }, undefined, null, [1, "x"]];
    const stored = async (items) => {
      const refs = await client.submitMany(items);
      return Promise.all(refs.map(async (ref) => (await client.get(ref.id)).payload));
    };
    const alone = (payload) => JSON.parse(JSON.stringify(payload ?? {}));
    // Each alone (a call with no null in its text takes one JSON.stringify), then all in one call.
    for (const payload of payloads) {
      assert.deepEqual(await stored([{ task: "p", payload }]), [alone(payload)], `${JSON.stringify(payload)}`);
    }
    assert.deepEqual(await stored(payloads.map((payload) => ({ task: "p", payload }))), payloads.map(alone));
  });

  test("10 000 items in one call", async (t) => {
    const { client } = await dialect.open(t);
    const items = Array.from({ length: 10_000 }, (_, i) => ({ task: "bulk", payload: { i } }));
    const refs = await client.submitMany(items);
    assert.equal(new Set(refs.map((ref) => ref.id)).size, 10_000);
    const rows = await allTasks(client);
    assert.equal(rows.size, 10_000);
    refs.forEach((ref, i) => assert.equal(rows.get(ref.id).payload.i, i, `item ${i}`));
  });

  test("ctx.submitMany wires parent, root and correlation; explicit options win", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect, { queues: ["q1"] });
    const seen = makeGate();
    worker.task("parent", async (ctx) => {
      seen.release(
        await ctx.submitMany([
          { task: "child", payload: { c: 1 } },
          { task: "child", options: { correlationId: "other", rootId: "root-x", parentId: null } },
        ]),
      );
    });
    const parent = await client.submit("parent", {}, { queue: "q1", correlationId: "corr" });
    handle.start();
    const [wired, own] = await Promise.all((await seen.promise).map((ref) => client.get(ref.id)));
    assert.deepEqual([wired.parent_id, wired.root_id, wired.correlation_id], [parent.id, parent.id, "corr"]);
    assert.deepEqual(wired.payload, { c: 1 });
    assert.deepEqual([own.parent_id, own.root_id, own.correlation_id], [null, "root-x", "other"]);
  });
});
