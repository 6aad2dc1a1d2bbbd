// Uniqueness windows (docs/api.md, "Uniqueness window"): a task submitted
// with `unique: {forMs}` holds its key after a worker finished it, for reject
// and reuse submits alike, then frees it; bad input is refused naming the
// field, writing nothing.

import assert from "node:assert/strict";

import { AlreadyExists } from "../../index.mjs";
import { statusTotals } from "../support/helpers.mjs";
import { waitForStatus } from "../support/worker-helpers.mjs";
import { forEachDialect, setupWorker, test } from "../support/dialects.mjs";

forEachDialect("uniqueness window", (dialect) => {
  test("a finished task holds its key for its window", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect);
    worker.task("report", (_ctx, payload) => payload.n);
    const first = await client.submit(
      "report",
      { n: 1 },
      { key: "daily", conflict: "reject", unique: { forMs: 3_600_000 } },
    );
    assert.deepEqual(first.metadata, { "cairnq.unique": { forMs: 3_600_000 } });
    handle.start();
    await waitForStatus(client, first.id, "succeeded");
    await assert.rejects(client.submit("report", { n: 2 }, { key: "daily", conflict: "reject" }), AlreadyExists);
    const reused = await client.submit("report", { n: 3 }, { key: "daily" });
    assert.equal(reused.id, first.id, "reuse (the default) hands back the finished task");
    assert.equal(reused.result, 1);

    // A 1 ms window has ended by the next submit's turn.
    const brief = await client.submit("report", { n: 4 }, { key: "brief", conflict: "reject", unique: { forMs: 1 } });
    await waitForStatus(client, brief.id, "succeeded");
    await new Promise((resolve) => setTimeout(resolve, 50));
    const next = await client.submit("report", { n: 5 }, { key: "brief", conflict: "reject" });
    assert.notEqual(next.id, brief.id, "the key is free once the window ended");
  });

  test("bad windows are refused naming the field, and nothing is written", async (t) => {
    const { client } = await setupWorker(t, dialect);
    for (const [opts, message] of [
      [{ unique: { forMs: 5 } }, "unique.forMs needs a key: the window holds the key"],
      [{ key: "k", unique: { forMs: 0 } }, "unique.forMs must be > 0, got 0"],
      [{ key: "k", unique: {} }, "unique.forMs must be a number, got undefined"],
      [{ key: "k", unique: 5 }, "unique must be an object, got 5"],
      [
        { key: "k", conflict: "replace", unique: { forMs: 5 } },
        'unique.forMs needs conflict "reject", "reuse" or "reuse-succeeded", got "replace"',
      ],
      [{ key: "k", debounceMs: 10, unique: { forMs: 5 } }, "unique.forMs cannot be combined with debounceMs"],
    ]) {
      await assert.rejects(client.submit("job", {}, opts), { message });
    }
    await assert.rejects(client.submitMany([{ task: "job", options: { unique: { forMs: 5 } } }]), {
      message: "items[0].options.unique.forMs needs a key: the window holds the key",
    });
    assert.deepEqual(Object.values(await statusTotals(client)), [0, 0, 0, 0, 0], "nothing written");
  });
});
