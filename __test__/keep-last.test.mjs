// Retention by count (docs/api.md, "Retention", `keepLast`) on every dialect:
// purge and purgeCount past the newest rows, a client's retention rules, and
// a store that is not this package's own handed `keepLast` in its purge input.
import assert from "node:assert/strict";

import { RetentionSweeper } from "../index.mjs";
import { forEachDialect, test } from "./support/dialects.mjs";
import { submitAndFail, submitAndSucceed, waitFor, waitUntilPast } from "./support/helpers.mjs";

/** `count` tasks of `queue` succeeded one after another, each completed at a later millisecond. */
async function succeedInTurn(client, count, queue = "default") {
  const done = [];
  for (let i = 0; i < count; i++) {
    const task = await submitAndSucceed(client, "job", {}, { queue });
    await waitUntilPast(task.completed_at_ms);
    done.push(task.id);
  }
  return done;
}

async function present(client, ids) {
  const kept = [];
  for (const id of ids) if ((await client.get(id)) !== null) kept.push(id);
  return kept;
}

forEachDialect("retention by count", (dialect) => {
  test("purge({keepLast}) deletes past the newest, batch by batch; purgeCount counts the same", async (t) => {
    const { client } = await dialect.open(t);
    const done = await succeedInTurn(client, 5);
    const failed = await submitAndFail(client, "job");
    const live = await client.submit("job");
    assert.equal(await client.purgeCount({ keepLast: 2, status: "succeeded" }), 3);
    assert.equal((await client.purge({ keepLast: 2, status: "succeeded", limit: 2 })).length, 2);
    assert.equal((await client.purge({ keepLast: 2, status: "succeeded", limit: 2 })).length, 1);
    assert.deepEqual(await present(client, done), done.slice(3));
    assert.equal((await client.get(failed.id)).status, "failed");
    assert.equal((await client.get(live.id)).status, "queued");
  });

  test("bad keepLast is refused with a plain Error naming it, and nothing is deleted", async (t) => {
    const { client } = await dialect.open(t);
    const done = await succeedInTurn(client, 2);
    for (const [input, message] of [
      [{ keepLast: -1 }, "keepLast must be a non-negative integer, got -1"],
      [{ keepLast: 1, olderThanMs: 0 }, "keepLast and olderThanMs are two rules: give one of them"],
      [{ keepLast: "5" }, 'keepLast must be a number, got "5"'],
    ]) {
      await assert.rejects(client.purge(input), (err) => err.constructor === Error && err.message === message);
    }
    assert.throws(
      () => new RetentionSweeper(client.store, { keepLast: { succeeded: 1.5 } }),
      (err) => err.message === "keepLast must be a non-negative integer, got 1.5",
    );
    assert.throws(
      () => new RetentionSweeper(client.store, { keepLast: {} }),
      (err) => err.message === "retention.keepLast must name at least one rule",
    );
    assert.deepEqual(await present(client, done), done);
  });

  test("a sweeper keeps the newest of each keepLast rule beside its age rules", async (t) => {
    const { client } = await dialect.open(t);
    const done = await succeedInTurn(client, 4);
    const mail = await succeedInTurn(client, 3, "mail");
    const failed = await submitAndFail(client, "job");
    await waitUntilPast(failed.completed_at_ms);
    const sweeper = new RetentionSweeper(client.store, {
      olderThanMs: { failed: 0 },
      keepLast: [
        { queue: "mail", keepLast: 1 },
        { status: "succeeded", queue: "default", keepLast: 2 },
      ],
      limit: 1,
    });
    assert.equal(await sweeper.sweep(), 5);
    assert.equal(await client.get(failed.id), null);
    assert.deepEqual(await present(client, mail), mail.slice(2));
    assert.deepEqual(await present(client, done), done.slice(2));
  });

  test("a client's retention option takes keepLast alone", async (t) => {
    const { client } = await dialect.open(t, { retention: { keepLast: { succeeded: 1 }, intervalMs: 50 } });
    const done = await succeedInTurn(client, 3);
    const kept = await waitFor(async () => {
      const left = await present(client, done);
      return left.length === 1 ? left : null;
    });
    assert.deepEqual(kept, done.slice(2));
  });

  test("a store that is not this package's own gets keepLast in its purge input", async (t) => {
    const { client } = await dialect.open(t);
    await succeedInTurn(client, 3);
    const inputs = [];
    const wrapped = {
      purge: (input) => {
        inputs.push(input);
        return client.store.purge(input);
      },
    };
    const sweeper = new RetentionSweeper(wrapped, { keepLast: { succeeded: 1 }, limit: 5 });
    assert.equal(await sweeper.sweep(), 2);
    assert.deepEqual(inputs, [{ keepLast: 1, status: "succeeded", limit: 5 }]);
  });
});
