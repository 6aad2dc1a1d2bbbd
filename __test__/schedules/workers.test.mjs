// Schedules fired by real worker processes (docs/api.md, "Schedules"): three
// workers, no leader, a schedule due every second for ten seconds: exactly
// one task per occurrence, each started within a second of its time.
import assert from "node:assert/strict";

import { forEachDialect, test } from "../support/dialects.mjs";
import { spawnFixture, waitFor } from "../support/helpers.mjs";

const WINDOW_MS = 10_000;

forEachDialect("schedules fired by three worker processes", (dialect) => {
  test("every second for ten seconds: one task per occurrence, each started within 1 s", async (t) => {
    const { client, db } = await dialect.open(t);
    await client.schedule("tick", { task: "tick", cron: "* * * * * *" });
    const workers = [0, 1, 2].map(() => spawnFixture(t, "schedule-worker.mjs", { dialect: dialect.name, db }));
    for (const worker of workers) await worker.waitForEvent((e) => e.event === "serving", { what: "serving" });
    // The window starts at a whole second once all three run.
    const start = Math.ceil((Date.now() + 1000) / 1000) * 1000;
    const end = start + WINDOW_MS;
    await new Promise((resolve) => setTimeout(resolve, end - Date.now() + 200));
    await client.pauseSchedule("tick");
    const expected = [];
    for (let at = start; at < end; at += 1000) expected.push(at);
    const runs = () => workers.flatMap((w) => w.events()).filter((e) => e.event === "ran");
    await waitFor(() => expected.every((at) => runs().some((r) => r.schedule.occurrenceAtMs === at)), {
      timeoutMs: 15_000,
      message: "not every occurrence of the window ran",
    });

    const tasks = (await client.list({ name: "tick", limit: 1000 })).map((task) => task.metadata["cairnq.schedule"]);
    const perOccurrence = new Map();
    for (const origin of tasks) {
      assert.equal(origin.name, "tick");
      perOccurrence.set(origin.occurrenceAtMs, (perOccurrence.get(origin.occurrenceAtMs) ?? 0) + 1);
    }
    for (const [at, count] of perOccurrence) assert.equal(count, 1, `occurrence ${at} made ${count} tasks`);
    const lateness = [];
    for (const at of expected) {
      assert.equal(perOccurrence.get(at), 1, `occurrence ${at} made no task`);
      const ran = runs().filter((r) => r.schedule.occurrenceAtMs === at);
      assert.equal(ran.length, 1, `occurrence ${at} ran ${ran.length} times`);
      const late = ran[0].startedAt - at;
      assert.ok(late >= 0 && late < 1000, `occurrence ${at} started ${late} ms after its time`);
      lateness.push(late);
    }
    t.diagnostic(`started after their time (ms): ${lateness.join(", ")}`);
    for (const worker of workers) worker.kill("SIGTERM");
  });
});
