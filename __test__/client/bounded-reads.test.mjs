// Reads bounded in bytes as well as rows (docs/api.md, "Values and JSON",
// "Stores"): `list({bodies: false})` carries no payloads, results, errors or
// metadata, and `purgeCount` counts what `purge` would delete, at most its
// limit, without reading the rows — on every dialect.

import assert from "node:assert/strict";

import {
  TASK_COLUMNS,
  assertPlainError,
  rejectionOf,
  submitAndFail,
  submitAndSucceed,
  waitUntilPast,
} from "../support/helpers.mjs";
import { forEachDialect, test } from "../support/dialects.mjs";

const BODIES = ["payload", "result", "error", "metadata"];

forEachDialect("bounded reads", (dialect) => {
  test("list({bodies: false}) returns every column but the bodies; the default keeps them", async (t) => {
    const { client } = await dialect.open(t);
    const big = { blob: "x".repeat(200_000) };
    const done = await submitAndSucceed(client, "big", { out: "y".repeat(50_000) }, { metadata: { by: "test" } });
    await client.submit("big", big, { metadata: { n: 1 } });
    const whole = await client.list();
    const summaries = await client.list({ bodies: false });
    assert.equal(summaries.length, 2);
    for (const [i, row] of summaries.entries()) {
      assert.deepEqual(
        Object.keys(row),
        TASK_COLUMNS.filter((c) => !BODIES.includes(c)),
      );
      const { payload, result, error, metadata, ...rest } = whole[i];
      assert.deepEqual(row, rest);
      assert.ok(payload !== undefined && metadata !== undefined && result !== undefined && error !== undefined);
    }
    assert.ok(JSON.stringify(summaries).length < 2_000, "summaries carried bodies");
    assert.deepEqual(whole[1].result, { out: "y".repeat(50_000) });
    assert.equal(whole[1].id, done.id);
    // Filters and paging apply as to whole rows.
    assert.deepEqual(
      (await client.list({ bodies: false, status: "succeeded", limit: 1 })).map((x) => x.id),
      [done.id],
    );
  });

  test("purgeCount counts what purge deletes, filter for filter, up to its limit, and checks its input alike", async (t) => {
    const { client } = await dialect.open(t);
    const done = [
      await submitAndSucceed(client, "a", {}, { queue: "q1" }),
      await submitAndSucceed(client, "a", {}, { queue: "q2" }),
      await submitAndFail(client, "b", { queue: "q1" }),
    ];
    await client.submit("a", {}, { queue: "q1" });
    await waitUntilPast(Math.max(...done.map((d) => d.completed_at_ms)) + dialect.clockSlackMs);
    const store = client.store;
    for (const [input, expected] of [
      [{}, 3],
      [{ limit: 2 }, 2],
      [{ queue: "q1" }, 2],
      [{ status: "failed" }, 1],
      [{ name: "a", queue: "q1" }, 1],
      [{ olderThanMs: 3_600_000 }, 0],
    ]) {
      assert.equal(await store.purgeCount(input), expected, JSON.stringify(input));
    }
    assertPlainError(await rejectionOf(store.purgeCount({ limit: 0 })), "limit must be >= 1, got 0");
    assertPlainError(await rejectionOf(store.purgeCount({ status: "queued" })), "status must be terminal, got queued");
    assert.equal((await client.purge({ queue: "q1" })).length, 2);
    assert.equal(await store.purgeCount({}), 1);
  });
});
