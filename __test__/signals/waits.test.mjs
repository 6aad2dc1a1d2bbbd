// Several waits in one run (docs/api.md, "Parallel steps"): every wait the
// handler starts in the same turn is stored before the run suspends, and the
// task wakes as soon as any of them can answer (or at the earliest timeout).
// A Promise.race answers the first signal to come; a Promise.all suspends
// again until every wait has its signal, whatever the order, one sent while
// the task runs included; a SIGKILL between the two signals loses none and
// answers each wait once. Worker processes, both dialects.
import assert from "node:assert/strict";

import { forEachDialect, setupWorker, test } from "../support/dialects.mjs";
import { spawnFixture, waitFor } from "../support/helpers.mjs";
import { waitForStatus } from "../support/worker-helpers.mjs";

/** A wait no test waits for: a task that resumes sooner was signaled. */
const NEVER_MS = 600_000;

/** The task once it is queued waiting for a signal, every signal sent consumed. */
async function waiting(client, id) {
  return waitFor(
    async () => {
      const [row, { suspended, signals }] = await Promise.all([client.get(id), client.steps(id)]);
      return row.status === "queued" && suspended?.kind === "signal" && signals.length === 0 ? row : null;
    },
    { timeoutMs: 30_000, message: `task ${id} never waited with its signals consumed` },
  );
}

forEachDialect("several waits in one run", (dialect) => {
  async function serve(t) {
    const opened = await dialect.open(t);
    const proc = spawnFixture(t, "waits-worker.mjs", { dialect: dialect.name, db: opened.db, leaseMs: 1000 });
    await proc.waitForEvent((e) => e.event === "serving", { what: "serving" });
    return { ...opened, proc };
  }

  test("a race wakes with the second wait's signal, long before the timeout", async (t) => {
    const { client } = await serve(t);
    const task = await client.submit("race", { timeoutMs: NEVER_MS });
    await waiting(client, task.id);
    assert.equal(await client.signal(task.id, "reject", { why: "no" }), true);
    const done = await waitForStatus(client, task.id, "succeeded", { timeoutMs: 30_000 });
    assert.deepEqual(done.result, { winner: "b", payload: { why: "no" } });
    assert.equal(done.attempt, 1);
  });

  test("a race where no signal comes answers null at the timeout", async (t) => {
    const { client } = await serve(t);
    const task = await client.submit("race", { timeoutMs: 300 });
    const done = await waitForStatus(client, task.id, "succeeded", { timeoutMs: 30_000 });
    assert.equal(done.result, null);
  });

  for (const order of [
    ["first", "second"],
    ["second", "first"],
  ]) {
    test(`Promise.all of two waits, signals ${order.join(" then ")}: both answered`, async (t) => {
      const { client } = await serve(t);
      const task = await client.submit("all", {});
      await waiting(client, task.id);
      assert.equal(await client.signal(task.id, order[0], `${order[0]}!`), true);
      await waiting(client, task.id);
      assert.equal(await client.signal(task.id, order[1], `${order[1]}!`), true);
      const done = await waitForStatus(client, task.id, "succeeded", { timeoutMs: 30_000 });
      assert.deepEqual(done.result, { first: "first!", second: "second!" });
      assert.deepEqual((await client.steps(task.id)).signals, [], "each signal consumed once");
    });
  }

  test("SIGKILL between the two signals: nothing lost, each wait answered once", async (t) => {
    const { client, db, proc } = await serve(t);
    const task = await client.submit("all", {});
    await waiting(client, task.id);
    assert.equal(await client.signal(task.id, "first", 1), true);
    await waiting(client, task.id);
    proc.kill("SIGKILL");
    await proc.waitExit();
    assert.equal(await client.signal(task.id, "second", 2), true);
    assert.equal(await client.signal(task.id, "first", "left for no wait"), true);
    const again = spawnFixture(t, "waits-worker.mjs", { dialect: dialect.name, db, leaseMs: 1000 });
    await again.waitForEvent((e) => e.event === "run", { what: "the run after the kill" });
    const done = await waitForStatus(client, task.id, "succeeded", { timeoutMs: 30_000 });
    assert.deepEqual(done.result, { first: 1, second: 2 });
    const { signals } = await client.steps(task.id);
    assert.deepEqual(
      signals.map((s) => s.name),
      ["first"],
      "the wait that consumed one signal took no other",
    );
  });

  test("a signal sent while the run runs, between its waits, is not lost", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect);
    worker.task("all-while-running", async (ctx) => {
      const [first, sent, second] = await Promise.all([
        ctx.waitForSignal("first", "first", { timeoutMs: NEVER_MS }),
        ctx.step("send", () => client.signal(ctx.taskId, "second", "during the run")),
        ctx.waitForSignal("second", "second", { timeoutMs: NEVER_MS }),
      ]);
      return { first, sent, second };
    });
    handle.start();
    const task = await client.submit("all-while-running", {});
    await waiting(client, task.id);
    assert.equal(await client.signal(task.id, "first", "after"), true);
    const done = await waitForStatus(client, task.id, "succeeded", { timeoutMs: 30_000 });
    assert.deepEqual(done.result, { first: "after", sent: true, second: "during the run" });
  });
});
