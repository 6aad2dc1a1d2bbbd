// store.claimSession(input, plan): one claim transaction whose draws a JS plan
// makes one at a time, on both dialects.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { openClient } from "./support/helpers.mjs";
import { PG_SKIP, createDatabase, openPgClient } from "./support/pg-helpers.mjs";

const dialects = [
  { name: "sqlite", skip: false, open: async (t) => openClient(t).client },
  { name: "postgres", skip: PG_SKIP, open: async (t) => openPgClient(t, (await createDatabase(t)).dsn) },
];

for (const dialect of dialects) {
  describe(`claimSession on ${dialect.name}`, { skip: dialect.skip }, () => {
    test("draws run in one session; empty draws claim nothing; the plan's value comes back", async (t) => {
      const client = await dialect.open(t);
      for (const name of ["a", "b", "a", "c"]) await client.submit(name, {}, { queue: "q" });
      const input = { queues: ["q"], workerId: "w1", leaseMs: 30_000, names: ["a", "b"] };
      const drawn = await client.store.claimSession(input, async (draw) => {
        const a = await draw(["a"], 5);
        const none = await draw([], 5);
        const zero = await draw(["b"], 0);
        const b = await draw(["b"], 5);
        return { a, b, none, zero };
      });
      assert.deepEqual(
        drawn.a.map((t) => t.name),
        ["a", "a"],
      );
      assert.deepEqual(
        drawn.b.map((t) => [t.name, t.status, t.worker_id, t.attempt]),
        [["b", "running", "w1", 1]],
      );
      assert.deepEqual([drawn.none, drawn.zero], [[], []]);
      assert.equal((await client.list({ name: "c" }))[0].status, "queued");
    });

    test("a plan that throws rolls its draws back and the error surfaces", async (t) => {
      const client = await dialect.open(t);
      const task = await client.submit("a", {}, { queue: "q" });
      const input = { queues: ["q"], workerId: "w1", names: null };
      await assert.rejects(
        client.store.claimSession(input, async (draw) => {
          assert.equal((await draw(null, 5)).length, 1);
          throw new Error("plan failed");
        }),
        /plan failed/,
      );
      const after = await client.get(task.id);
      assert.deepEqual([after.status, after.attempt, after.worker_id], ["queued", 0, null]);
    });

    test("expired leases are recovered first and can be drawn in the same session", async (t) => {
      const client = await dialect.open(t);
      const task = await client.submit("a", {}, { queue: "q" });
      await client.store.claim({ queues: ["q"], workerId: "gone", leaseMs: 1 });
      const deadline = Date.now() + 10_000;
      let drawn = [];
      while (drawn.length === 0 && Date.now() < deadline) {
        drawn =
          (await client.store.claimSession({ queues: ["q"], workerId: "w2", names: null }, (draw) => draw(null, 1))) ??
          [];
      }
      assert.deepEqual(
        drawn.map((t) => [t.id, t.worker_id, t.attempt]),
        [[task.id, "w2", 2]],
      );
    });
  });
}

test("on SQLite the probe skips the plan when nothing is claimable", async (t) => {
  const { client } = openClient(t);
  let called = false;
  const outcome = await client.store.claimSession({ queues: ["q"], workerId: "w1", names: null }, async () => {
    called = true;
  });
  assert.equal(outcome, undefined);
  assert.equal(called, false);
});
