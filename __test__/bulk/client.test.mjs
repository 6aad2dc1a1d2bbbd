// retryMany and cancelMany through the client (docs/api.md, "Bulk retry and
// cancel") on every dialect: pages, filters, the dry run, a running task's
// cancel reaching its handler in a real worker, and refusals that write nothing.
import assert from "node:assert/strict";

import { forEachDialect, setupWorker, test } from "../support/dialects.mjs";
import { statusTotals, submitAndFail, waitFor, waitUntilPast } from "../support/helpers.mjs";

function assertPlainError(err, message) {
  assert.ok(err instanceof Error);
  assert.equal(err.name, "Error", `${err.name} should be a plain Error`);
  assert.ok(err.message.startsWith(message), err.message);
}

forEachDialect("retryMany and cancelMany", (dialect) => {
  test("retryMany retries a page at a time; its dry run lists that page and writes nothing", async (t) => {
    const { client } = await dialect.open(t);
    const failed = [];
    for (let i = 0; i < 5; i++) failed.push((await submitAndFail(client, "send", { queue: "mail" })).id);
    const otherName = await submitAndFail(client, "other", { queue: "mail" });
    const dry = await client.retryMany({ queue: "mail", name: "send", limit: 3, dryRun: true });
    assert.deepEqual({ count: dry.count, more: dry.more, dryRun: dry.dryRun }, { count: 3, more: true, dryRun: true });
    assert.equal((await statusTotals(client)).failed, 6, "a dry run writes nothing");

    const first = await client.retryMany({ queue: "mail", name: "send", limit: 3 });
    assert.deepEqual([...first.ids].sort(), [...dry.ids].sort());
    assert.deepEqual(
      { count: first.count, more: first.more, dryRun: first.dryRun },
      { count: 3, more: true, dryRun: false },
    );
    const second = await client.retryMany({ queue: "mail", name: "send", limit: 3 });
    assert.deepEqual({ count: second.count, more: second.more }, { count: 2, more: false });
    assert.deepEqual([...first.ids, ...second.ids].sort(), [...failed].sort());
    for (const id of failed) {
      const task = await client.get(id);
      assert.deepEqual([task.status, task.error, task.attempt], ["queued", null, 1]);
    }
    assert.equal((await client.get(otherName.id)).status, "failed");
  });

  test("retryMany picks failures by completion time, a Date or epoch milliseconds", async (t) => {
    const { client } = await dialect.open(t);
    const early = await submitAndFail(client, "job");
    await waitUntilPast(early.completed_at_ms + 1);
    const late = await submitAndFail(client, "job");
    const cut = new Date(early.completed_at_ms + 1);
    assert.deepEqual((await client.retryMany({ finishedBefore: cut, dryRun: true })).ids, [early.id]);
    assert.deepEqual((await client.retryMany({ finishedAfter: cut.getTime(), dryRun: true })).ids, [late.id]);
    const reset = await client.retryMany({ finishedAfter: cut, resetAttempt: true });
    assert.deepEqual(reset.ids, [late.id]);
    assert.equal((await client.get(late.id)).attempt, 0);
  });

  test("cancelMany cancels queued tasks and aborts a running handler's signal", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect);
    let aborted = null;
    worker.task("hold", async (ctx) => {
      await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve, { once: true }));
      aborted = ctx.signal.reason;
      throw ctx.signal.reason;
    });
    handle.start();
    const running = await client.submit("hold", {}, { queue: "default" });
    await waitFor(async () => (await client.get(running.id)).status === "running", { message: "the task runs" });
    const queued = [];
    for (let i = 0; i < 3; i++) queued.push((await client.submit("later", {}, { queue: "default" })).id);
    const elsewhere = await client.submit("later", {}, { queue: "other" });

    const page = await client.cancelMany({ queue: "default" });
    assert.equal(page.count, 4);
    assert.deepEqual([...page.ids].sort(), [...queued, running.id].sort());
    for (const id of queued) assert.equal((await client.get(id)).status, "canceled");
    await waitFor(async () => (await client.get(running.id)).status === "canceled", {
      message: "the running task ends canceled",
    });
    assert.ok(aborted !== null, "the handler's signal aborted");
    assert.equal((await client.get(elsewhere.id)).status, "queued");
    assert.deepEqual((await client.cancelMany({ queue: "default" })).count, 0);
  });

  test("bad filters are refused naming the field, and nothing is written", async (t) => {
    const { client } = await dialect.open(t);
    const failed = await submitAndFail(client, "job");
    const queued = await client.submit("job");
    const refusals = [
      ["retryMany", { status: "queued" }, "retryMany.status must be failed or canceled, got queued"],
      ["cancelMany", { status: "succeeded" }, "cancelMany.status must be queued or running, got succeeded"],
      ["retryMany", { limit: 0 }, "retryMany.limit must be an integer from 1 to 10000, got 0"],
      ["cancelMany", { limit: NaN }, "cancelMany.limit must be an integer from 1 to 10000, got NaN"],
      ["retryMany", { finishedBefore: new Date(NaN) }, "retryMany.finishedBefore must be a valid Date"],
      ["retryMany", { queue: 7 }, "retryMany.queue must be a string, got 7"],
      ["cancelMany", { finishedAfter: 1 }, 'unknown key "finishedAfter" in cancelMany filter'],
      ["cancelMany", null, "cancelMany filter must be an object, got null"],
    ];
    for (const [op, filter, message] of refusals) {
      const err = await client[op](filter).then(
        () => null,
        (e) => e,
      );
      assert.ok(err, `${op}(${JSON.stringify(filter)}) was accepted`);
      assertPlainError(err, message);
    }
    assert.equal((await client.get(failed.id)).status, "failed");
    assert.equal((await client.get(queued.id)).status, "queued");
  });
});
