// Submit order (docs/api.md, "Tasks and statuses"): task ids are ULIDs made
// monotonic within a process, and claims take equal tasks by id, so one
// submitter's tasks of equal priority and due time start in the order it
// submitted them, on a plain queue and in a group — on every dialect.

import assert from "node:assert/strict";

import { waitFor } from "../support/helpers.mjs";
import { forEachDialect, sqlite, test } from "../support/dialects.mjs";

const COUNT = 40;

forEachDialect("submit order", (dialect) => {
  /**
   * Submit COUNT tasks (`submitAll` does it), then start one worker at
   * concurrency 1 and answer the order in which the handler saw them.
   */
  async function startOrder(t, grouped, submitAll) {
    const { client, db } = await dialect.open(t);
    await submitAll(client, (i) => client.submit("ordered", { i }, grouped ? { group: "g" } : {}));
    const started = [];
    const { worker, start } = dialect.makeWorker(t, db, { concurrency: 1 });
    worker.task("ordered", grouped ? { groupConcurrency: 1 } : {}, async (_ctx, payload) => {
      started.push(payload.i);
    });
    start();
    await waitFor(() => started.length === COUNT, { timeoutMs: 30_000 });
    return started;
  }

  const inOrder = Array.from({ length: COUNT }, (_, i) => i);
  for (const grouped of [false, true]) {
    test(`${COUNT} tasks submitted one after another start in that order${grouped ? " (one group)" : ""}`, async (t) => {
      const started = await startOrder(t, grouped, async (_client, submit) => {
        for (let i = 0; i < COUNT; i += 1) await submit(i);
      });
      assert.deepEqual(started, inOrder);
    });
  }

  // One tick's submits share one commit on SQLite, stamped in order; on
  // Postgres they run concurrently, each stamped by the database's clock.
  if (dialect === sqlite) {
    test(`${COUNT} tasks submitted in one tick start in that order`, async (t) => {
      const started = await startOrder(t, false, async (_client, submit) => {
        await Promise.all(inOrder.map((i) => submit(i)));
      });
      assert.deepEqual(started, inOrder);
    });
  }
});
