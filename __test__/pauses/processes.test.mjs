// Queue pauses across processes (issue 47, "Done when": a pause seen by three
// worker processes): every worker of every process stops claiming from a
// paused queue, the task running at the pause finishes, submits are accepted,
// and a resume lets every process claim again. A worker reads the pauses
// every 250 ms; the margins below are several of those, for a loaded machine.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

import { forEachDialect, test } from "../support/dialects.mjs";
import { makeTempDir, spawnFixture, waitFor } from "../support/helpers.mjs";
import { staysFalse, waitAllTerminal, waitForStatus } from "../support/worker-helpers.mjs";

/** Past every worker's next refresh of the pauses (250 ms), with room for a slow machine. */
const PAST_A_REFRESH_MS = 1500;

forEachDialect("queue pause across processes", (dialect) => {
  test("three worker processes stop claiming from a paused queue and claim again on resume", async (t) => {
    const { client, db } = await dialect.open(t);
    const releaseFile = path.join(makeTempDir(t), "release");
    const config = { dialect: dialect.name, db, releaseFile };
    const workers = [0, 1, 2].map(() => spawnFixture(t, "pause-worker.mjs", config));
    for (const worker of workers) await worker.waitForEvent((e) => e.event === "serving", { what: "serving" });
    const started = () => workers.flatMap((worker) => worker.events().filter((e) => e.event === "started"));

    const held = await client.submit("hold", {});
    await waitFor(() => started().some((e) => e.task === held.id), {
      timeoutMs: 20_000,
      message: "hold never started",
    });
    assert.equal(await client.pauseQueue("default"), true);
    assert.equal(await client.pauseQueue("default"), false, "a second pause changes nothing");
    await sleep(PAST_A_REFRESH_MS);

    const waiting = [];
    for (let i = 0; i < 9; i += 1) waiting.push((await client.submit("job", { i })).id);
    writeFileSync(releaseFile, "");
    const finished = await waitForStatus(client, held.id, "succeeded");
    assert.equal(finished.attempt, 1, "the task running at the pause finished normally");
    const claimedWhilePaused = () => started().some((e) => waiting.includes(e.task));
    assert.equal(await staysFalse(claimedWhilePaused, PAST_A_REFRESH_MS), true, "a paused queue was claimed");
    for (const id of waiting) {
      const row = await client.get(id);
      assert.deepEqual([row.status, row.attempt], ["queued", 0]);
    }
    const [listed] = await client.queues();
    assert.deepEqual([listed.queue, listed.paused, listed.counts.queued], ["default", true, 9]);

    assert.equal(await client.resumeQueue("default"), true);
    const rows = await waitAllTerminal(client, waiting, { timeoutMs: 30_000 });
    assert.deepEqual(new Set(rows.map((row) => row.status)), new Set(["succeeded"]));
    assert.equal((await client.queues())[0].paused, false);
  });
});
