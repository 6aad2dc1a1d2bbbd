// Signals under SIGKILL (issue 38, "Done when"): the sending process is
// killed right after its signal committed, and the worker process that
// consumed it is killed before the task finished. The signal and its wake
// commit together, so the waiting task still resumes; the run after the
// crash replays the payload the dead run consumed.
import assert from "node:assert/strict";

import { forEachDialect, test } from "../support/dialects.mjs";
import { spawnFixture, waitFor } from "../support/helpers.mjs";
import { waitForStatus } from "../support/worker-helpers.mjs";

forEachDialect("signals under SIGKILL", (dialect) => {
  test("killed sender, killed worker: the waiting task still resumes with the signal", async (t) => {
    const { client, db } = await dialect.open(t);
    const task = await client.submit("approve", {});
    const config = { dialect: dialect.name, db, leaseMs: 1000 };

    const first = spawnFixture(t, "signal-worker.mjs", { ...config, hang: true });
    await first.waitForEvent((e) => e.event === "serving", { what: "serving" });
    await waitFor(async () => (await client.steps(task.id)).suspended?.kind === "signal", {
      timeoutMs: 20_000,
      message: "the task never waited for its signal",
    });

    const sender = spawnFixture(t, "signal-sender.mjs", {
      dialect: dialect.name,
      db,
      taskId: task.id,
      payload: { ok: 1 },
    });
    const sent = await sender.waitForEvent((e) => e.event === "sent", { what: "sent" });
    sender.kill("SIGKILL");
    assert.equal(sent.answer, true);

    const received = await first.waitForEvent((e) => e.event === "received", { what: "received" });
    assert.deepEqual(received.payload, { ok: 1 });
    first.kill("SIGKILL");
    await first.waitExit();

    const second = spawnFixture(t, "signal-worker.mjs", { ...config, hang: false });
    const replayed = await second.waitForEvent((e) => e.event === "received", { what: "the replay" });
    assert.deepEqual(replayed.payload, { ok: 1 });
    const done = await waitForStatus(client, task.id, "succeeded", { timeoutMs: 30_000 });
    assert.deepEqual(done.result, { ok: 1 });
    assert.deepEqual((await client.steps(task.id)).signals, [], "the signal was consumed once");
  });
});
