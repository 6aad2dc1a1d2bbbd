// ctx.callChild's children (docs/api.md, "Durable steps"): a child goes to
// its parent's queue unless told otherwise, and a child that failed or was
// canceled ends its parent at once, failed and naming the child, unless the
// handler catches it (a replayed outcome would fail every retry the same way).
import assert from "node:assert/strict";

import { forEachDialect, setupWorker, test } from "../support/dialects.mjs";
import { waitFor } from "../support/helpers.mjs";
import { waitForStatus } from "../support/worker-helpers.mjs";

forEachDialect("callChild's children", (dialect) => {
  test("a child goes to its parent's queue, which its worker serves, unless told otherwise", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect, { queues: ["orders", "mail"] });
    worker.task("parent", async (ctx, { queue }) => ({
      got: await ctx.callChild("kid", "child", {}, { queue, pollMs: 120_000 }),
    }));
    worker.task("child", (ctx) => ctx.queue);
    handle.start();

    const onParents = await client.submit("parent", {}, { queue: "orders" });
    assert.deepEqual((await waitForStatus(client, onParents.id, ["succeeded"])).result, { got: "orders" });
    const toldOtherwise = await client.submit("parent", { queue: "mail" }, { queue: "orders" });
    assert.deepEqual((await waitForStatus(client, toldOtherwise.id, ["succeeded"])).result, { got: "mail" });
  });

  test("a child failed for good ends its parent at once, failed and naming the child", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect, { retryBackoffMs: 10, retryBackoffMaxMs: 10 });
    const parentRuns = [];
    worker.task("parent", async (ctx) => {
      parentRuns.push(ctx.attempt);
      return ctx.callChild("charge", "child", {}, { maxAttempts: 1, pollMs: 120_000 });
    });
    worker.task("child", () => {
      throw Object.assign(new Error("card declined"), { name: "Declined" });
    });
    handle.start();

    const parent = await client.submit("parent", {}, { maxAttempts: 5 });
    const failed = await waitForStatus(client, parent.id, ["failed", "succeeded"]);
    const { steps } = await client.steps(parent.id);
    const childId = steps[0].childId;
    assert.equal(failed.status, "failed");
    assert.equal(failed.attempt, 1, "no retry replays the child's failure");
    assert.deepEqual(parentRuns, [1, 1], "one run submitted the child, one read its failure");
    const { childError, ...details } = failed.error.details;
    assert.deepEqual(
      { ...failed.error, details },
      {
        type: "ChildFailed",
        code: "child_failed",
        message: `child task ${childId} of step "charge" failed: card declined`,
        retryable: false,
        details: { childId, stepId: "charge" },
      },
    );
    assert.equal(childError.type, "Declined");
    assert.equal(childError.message, "card declined");
  });

  test("a canceled child ends its parent too; a handler that catches the failure decides itself", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect, { retryBackoffMs: 10, retryBackoffMaxMs: 10 });
    worker.task("parent", async (ctx, { rethrow }) => {
      try {
        return await ctx.callChild("kid", "nobody.runs.this", {}, { pollMs: 120_000 });
      } catch (err) {
        if (rethrow) throw err;
        throw new Error(`wrapped: ${err.name}`, { cause: err });
      }
    });
    handle.start();

    /** The parent's end once its child, waited on, is canceled. */
    const endOnCanceledChild = async (payload, maxAttempts) => {
      const parent = await client.submit("parent", payload, { maxAttempts });
      const { childId } = await waitForChild(client, parent.id);
      await client.cancel(childId);
      return { childId, ended: await waitForStatus(client, parent.id, ["failed", "succeeded"]) };
    };

    const { childId, ended } = await endOnCanceledChild({ rethrow: true }, 5);
    assert.equal(ended.attempt, 1);
    assert.equal(ended.error.type, "ChildFailed");
    assert.equal(ended.error.code, "child_canceled");
    assert.equal(ended.error.message, `child task ${childId} of step "kid" was canceled`);
    assert.equal(ended.error.details.childError, null);

    // Its own error, thrown instead: an ordinary failure, retried as usual.
    const { ended: retried } = await endOnCanceledChild({ rethrow: false }, 2);
    assert.equal(retried.status, "failed");
    assert.equal(retried.attempt, 2);
    assert.equal(retried.error.message, "wrapped: TaskCanceled");
  });
});

/** What a parent waits for once it has submitted its child (`client.steps`' `suspended`). */
function waitForChild(client, parentId) {
  return waitFor(
    async () => {
      const { suspended } = await client.steps(parentId);
      return suspended?.kind === "child" ? suspended : null;
    },
    { timeoutMs: 20_000, message: `task ${parentId} never waited for a child` },
  );
}
