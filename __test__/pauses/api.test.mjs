// Queue pauses (docs/api.md, "Queue pauses"): pauseQueue and resumeQueue are
// idempotent and take any queue name, one with no task yet included; a bad
// name is refused naming the field and writes nothing; queues() lists each
// queue's counts and pause; a worker claims only from its queues not paused,
// so call() on a paused queue waits until the resume; stats() keeps its shape.
import assert from "node:assert/strict";

import { forEachDialect, setupWorker, test } from "../support/dialects.mjs";
import { rejectionOf, settlesWithin, waitFor } from "../support/helpers.mjs";
import { waitForStatus } from "../support/worker-helpers.mjs";

/** Past a worker's next refresh of the pauses (250 ms), with room for a slow machine. */
const PAST_A_REFRESH_MS = 1000;

forEachDialect("queue pauses", (dialect) => {
  test("pause and resume are idempotent, checked, and listed by queues()", async (t) => {
    const { client } = await dialect.open(t);
    for (const bad of [7, null, undefined, ""]) {
      const err = await rejectionOf(client.pauseQueue(/** @type {any} */ (bad)));
      const shown = bad === "" ? '""' : String(bad);
      assert.equal(err.message, `queue must be a non-empty string, got ${shown}`);
    }
    assert.equal(
      (await rejectionOf(client.resumeQueue(/** @type {any} */ ({})))).message,
      "queue must be a non-empty string, got [object Object]",
    );
    assert.deepEqual(await client.queues(), [], "nothing written");
    assert.equal(await client.resumeQueue("mail"), false, "a queue never paused");

    await client.submit("send", {}, { queue: "mail" });
    assert.equal(await client.pauseQueue("not-yet-used"), true);
    assert.equal(await client.pauseQueue("not-yet-used"), false);
    const listed = await client.queues();
    assert.deepEqual(
      listed.map((q) => [q.queue, q.counts.queued, q.paused]),
      [
        ["mail", 1, false],
        ["not-yet-used", 0, true],
      ],
    );
    assert.equal(typeof listed[1].pausedAtMs, "number");
    assert.equal(listed[0].pausedAtMs, null);
    assert.deepEqual(Object.keys(await client.stats()), ["mail"], "stats() keeps the queues of tasks");
    assert.equal(await client.resumeQueue("not-yet-used"), true);
    assert.equal(await client.resumeQueue("not-yet-used"), false);
    assert.deepEqual(
      (await client.queues()).map((q) => q.queue),
      ["mail"],
    );
  });

  test("a worker claims only from its queues not paused; call() waits for the resume", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect, { queues: ["default", "other"] });
    worker.task("echo", async (ctx, payload) => payload);
    handle.start();
    assert.equal(await client.call("echo", 1), 1);

    assert.equal(await client.pauseQueue("default"), true);
    const waiting = client.call("echo", 2, { waitTimeoutMs: 60_000 });
    assert.equal(await settlesWithin(waiting, PAST_A_REFRESH_MS), false, "a paused queue was claimed");
    const other = await client.submit("echo", 3, { queue: "other" });
    assert.deepEqual((await waitForStatus(client, other.id, "succeeded")).result, 3);

    assert.equal(await client.resumeQueue("default"), true);
    assert.equal(await waiting, 2);
  });

  test("a schedule fires into a paused queue: its tasks wait until the resume", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect);
    worker.task("tick", async () => "ticked");
    assert.equal(await client.pauseQueue("default"), true);
    await client.schedule("ticker", { task: "tick", every: 100 });
    handle.start();
    const fired = await waitFor(
      async () => {
        const ticks = await client.list({ name: "tick" });
        return ticks.length >= 2 ? ticks : null;
      },
      { timeoutMs: 20_000, message: "the schedule never fired twice" },
    );
    assert.deepEqual(
      fired.map((task) => [task.status, task.attempt]),
      fired.map(() => ["queued", 0]),
    );
    await client.unschedule("ticker");
    assert.equal(await client.resumeQueue("default"), true);
    await waitForStatus(client, fired[0].id, "succeeded");
  });
});
