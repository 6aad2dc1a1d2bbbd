// Sleeps overlap (issue 27, "Done when"): 500 tasks that each ctx.sleep for
// 2 s, on one worker with concurrency 1, all finish within 10 s, because a
// sleeping task holds no slot; each resumes on the attempt it slept on.
import assert from "node:assert/strict";

import { forEachDialect, setupWorker, test } from "../support/dialects.mjs";
import { waitFor } from "../support/helpers.mjs";

const TASKS = 500;
const SLEEP_MS = 2000;
const WITHIN_MS = 10_000;

forEachDialect("500 sleeping tasks on one slot", (dialect) => {
  test(`each sleeps ${SLEEP_MS} ms: all finish within ${WITHIN_MS} ms`, async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect);
    let runs = 0;
    worker.task("napper", async (ctx) => {
      runs += 1;
      await ctx.sleep("nap", SLEEP_MS);
      return ctx.attempt;
    });
    const ids = (await Promise.all(Array.from({ length: TASKS }, (_, i) => client.submit("napper", { i })))).map(
      (task) => task.id,
    );
    const started = Date.now();
    handle.start({ concurrency: 1 });
    let succeeded = 0;
    await waitFor(
      async () => {
        succeeded = (await client.stats("default")).default.succeeded;
        return succeeded === TASKS;
      },
      { timeoutMs: 120_000, intervalMs: 50, message: `only ${succeeded} of ${TASKS} tasks finished` },
    );
    const tookMs = Date.now() - started;
    t.diagnostic(`${TASKS} tasks sleeping ${SLEEP_MS} ms each on one slot finished in ${tookMs} ms`);
    assert.ok(tookMs <= WITHIN_MS, `took ${tookMs} ms`);
    // Every task ran twice (it slept, then resumed) and used one attempt.
    assert.equal(runs, 2 * TASKS);
    const rows = await client.list({ name: "napper", limit: TASKS, bodies: false });
    assert.equal(rows.length, TASKS);
    assert.deepEqual(new Set(rows.map((row) => row.id)), new Set(ids));
    for (const row of rows) {
      assert.equal(row.status, "succeeded");
      assert.equal(row.attempt, 1);
    }
  });
});
