// A cancel reaches a parent's children (issue 38, item 4): canceling a task
// cancels its unfinished ctx.callChild children at any depth, queued ones at
// once and running ones by a cancel request; ctx.submit's children are left
// alone, and cancel(id, {children: false}) leaves every child alone.
import assert from "node:assert/strict";

import { forEachDialect, setupWorker, test } from "../support/dialects.mjs";
import { waitFor } from "../support/helpers.mjs";
import { waitForStatus } from "../support/worker-helpers.mjs";

/** The child task step `step` of `parentId` submitted, once stored. */
async function childOf(client, parentId, step) {
  return waitFor(async () => (await client.steps(parentId)).steps.find((s) => s.id === step)?.childId, {
    timeoutMs: 20_000,
    message: `task ${parentId} never stored child step ${step}`,
  });
}

/** A parent whose child waits on a running grandchild, and a loose ctx.submit task. */
async function family(t, dialect) {
  const { client, handle, worker } = await setupWorker(t, dialect);
  worker.task("parent", async (ctx) => {
    await ctx.step("loose", () => ctx.submit("loose", {}).then((task) => task.id));
    return ctx.callChild("kid", "child", {});
  });
  worker.task("child", async (ctx) => ctx.callChild("grand", "grandchild", {}));
  worker.task("grandchild", async (ctx) => {
    while (!(await ctx.canceled())) await new Promise((resolve) => setTimeout(resolve, 20));
    return "saw the cancel";
  });
  worker.task("loose", async (ctx) => ctx.waitForSignal("w", "go"));
  handle.start({ concurrency: 2 });
  const parent = await client.submit("parent", {});
  const child = await childOf(client, parent.id, "kid");
  const grandchild = await childOf(client, child, "grand");
  await waitForStatus(client, grandchild, "running");
  await waitForStatus(client, child, "queued");
  await waitForStatus(client, parent.id, "queued");
  // Steps recorded in the same millisecond list by id, so look "loose" up.
  const { steps } = await client.steps(parent.id);
  assert.ok(
    steps.some((s) => s.id === "loose"),
    JSON.stringify(steps),
  );
  const loose = (await client.list({ name: "loose" }))[0].id;
  await waitFor(async () => (await client.steps(loose)).suspended?.kind === "signal", { timeoutMs: 20_000 });
  return { client, parent: parent.id, child, grandchild, loose };
}

forEachDialect("a cancel reaches callChild children", (dialect) => {
  test("two levels deep: the queued child at once, the running grandchild by request", async (t) => {
    const { client, parent, child, grandchild, loose } = await family(t, dialect);
    const canceled = await client.cancel(parent);
    assert.equal(canceled.status, "canceled");
    assert.equal((await client.get(child)).status, "canceled");
    const requested = await client.get(grandchild);
    assert.ok(requested.cancel_requested_at_ms != null, JSON.stringify(requested));
    await waitForStatus(client, grandchild, "canceled");
    const left = await client.get(loose);
    assert.equal(left.status, "queued", "a ctx.submit child is left alone");
    assert.equal(left.cancel_requested_at_ms, null);
  });

  test("cancel(id, {children: false}) leaves the children alone", async (t) => {
    const { client, parent, child, grandchild } = await family(t, dialect);
    assert.equal((await client.cancel(parent, { children: false })).status, "canceled");
    assert.equal((await client.get(child)).status, "queued");
    const running = await client.get(grandchild);
    assert.equal(running.status, "running");
    assert.equal(running.cancel_requested_at_ms, null);
    await assert.rejects(client.cancel(child, { children: "no" }), /children/);
    assert.equal((await client.get(child)).status, "queued", "a refused cancel changes nothing");
    // The grandchild's handler runs until it sees a cancel: end it.
    await client.cancel(grandchild);
    await waitForStatus(client, grandchild, "canceled");
  });
});
