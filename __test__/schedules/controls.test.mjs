// Schedules under control (docs/api.md, "Schedules"), through the client and
// a real worker on both dialects: `overlap: "skip"`, `triggerSchedule`,
// `startAt` / `endAt` / `limit`, and `every` interval schedules.
import assert from "node:assert/strict";

import { forEachDialect, setupWorker, test } from "../support/dialects.mjs";
import { waitFor } from "../support/helpers.mjs";

/** The tasks a schedule made (fired or triggered), oldest first. */
async function tasksOf(client, name) {
  const tasks = await client.list({ limit: 1000 });
  return tasks
    .filter((task) => task.metadata["cairnq.schedule"]?.name === name)
    .sort((a, b) => a.created_at_ms - b.created_at_ms);
}

const scheduleNamed = async (client, name) => (await client.schedules()).find((s) => s.name === name);

forEachDialect("schedules under control", (dialect) => {
  test('overlap "skip": no occurrence fires while its task runs; the skips are counted', async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect);
    let release;
    const released = new Promise((resolve) => (release = resolve));
    const started = [];
    worker.task("slow", async (ctx) => {
      started.push(ctx.schedule);
      if (started.length === 1) await released;
    });
    const stored = await client.schedule("slow-every-200ms", { task: "slow", every: 200, overlap: "skip" });
    assert.equal(stored.overlap, "skip");
    assert.equal(stored.skippedCount, 0);
    handle.start();
    await waitFor(async () => (await scheduleNamed(client, "slow-every-200ms")).skippedCount >= 3, {
      timeoutMs: 20_000,
      message: "three occurrences skipped while the first ran",
    });
    assert.equal(started.length, 1, "nothing else started while the first ran");
    assert.equal((await tasksOf(client, "slow-every-200ms")).length, 1, "a skipped occurrence makes no task");
    const skipping = await scheduleNamed(client, "slow-every-200ms");
    assert.equal(skipping.firedCount, 1);
    assert.ok(skipping.lastSkippedAtMs >= skipping.lastRunAtMs);
    release();
    await waitFor(() => started.length >= 2, { timeoutMs: 20_000, message: "it fires again once the first ended" });
    await client.pauseSchedule("slow-every-200ms");
  });

  test('overlap "allow" (the default) fires over a running task', async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect, { concurrency: 4 });
    let release;
    const released = new Promise((resolve) => (release = resolve));
    let started = 0;
    worker.task("slow", async () => {
      started += 1;
      await released;
    });
    const stored = await client.schedule("overlapping", { task: "slow", every: 200 });
    assert.equal(stored.overlap, "allow");
    handle.start();
    await waitFor(() => started >= 2, { timeoutMs: 20_000, message: "a second run overlapped the first" });
    await client.pauseSchedule("overlapping");
    assert.equal((await scheduleNamed(client, "overlapping")).skippedCount, 0);
    release();
  });

  test("triggerSchedule runs one task now, says so on ctx.schedule, and moves nothing", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect);
    const seen = [];
    worker.task("report", async (ctx) => {
      seen.push(ctx.schedule);
    });
    const stored = await client.schedule("nightly", { task: "report", cron: "0 2 * * *", overlap: "skip", limit: 1 });
    const before = Date.now();
    const task = await client.triggerSchedule("nightly");
    assert.equal(task.name, "report");
    assert.equal(task.status, "queued");
    handle.start();
    await waitFor(() => seen.length === 1, { timeoutMs: 20_000, message: "the triggered task ran" });
    assert.equal(seen[0].name, "nightly");
    assert.equal(seen[0].triggered, true);
    assert.ok(seen[0].occurrenceAtMs >= before && seen[0].occurrenceAtMs <= Date.now());
    const after = await scheduleNamed(client, "nightly");
    assert.equal(after.nextRunAtMs, stored.nextRunAtMs, "the pending occurrence stays");
    assert.equal(after.firedCount, 0, "a trigger counts toward no limit");
    assert.equal(after.lastRunAtMs, null);
    // Paused, a schedule can still be triggered.
    await client.pauseSchedule("nightly");
    await client.triggerSchedule("nightly");
    await waitFor(() => seen.length === 2, { timeoutMs: 20_000, message: "the paused schedule's trigger ran" });
  });

  test("triggerSchedule of an unknown name is refused naming it, and writes nothing", async (t) => {
    const { client } = await dialect.open(t);
    const refused = (name) => (err) => {
      assert.ok(err instanceof Error);
      assert.equal(err.code, "CAIRNQ_NO_SCHEDULE");
      assert.equal(err.message, `no schedule named "${name}"`);
      return true;
    };
    await assert.rejects(client.triggerSchedule("nope"), refused("nope"));
    await client.schedule("real", { task: "t", cron: "0 2 * * *" });
    await assert.rejects(client.triggerSchedule("Real"), refused("Real"));
    assert.deepEqual(await client.list({}), []);
  });

  test("startAt, endAt and limit bound the firing; schedules() shows them and the count fired", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect);
    const ran = [];
    worker.task("beat", async (ctx) => {
      ran.push(ctx.schedule);
    });
    const startAt = new Date(Date.now() + 600);
    const limited = await client.schedule("three", { task: "beat", every: 150, startAt, limit: 3, catchUp: "all" });
    assert.equal(limited.startAtMs, startAt.getTime());
    assert.equal(limited.nextRunAtMs, startAt.getTime(), "the first occurrence is the start");
    assert.equal(limited.limit, 3);
    assert.equal(limited.every, 150);
    assert.equal(limited.cron, null);
    const endAtMs = Date.now() + 1_000;
    const ending = await client.schedule("ending", { task: "beat", every: 200, endAt: endAtMs });
    assert.equal(ending.endAtMs, endAtMs);
    assert.equal(ending.finished, false);
    handle.start();
    await waitFor(
      async () => {
        const listed = await client.schedules();
        return listed.every((s) => s.finished);
      },
      { timeoutMs: 20_000, message: "both schedules finished" },
    );
    const three = ran.filter((origin) => origin.name === "three");
    await waitFor(() => ran.filter((origin) => origin.name === "three").length === 3, { timeoutMs: 20_000 });
    assert.ok(three.every((origin) => origin.occurrenceAtMs >= startAt.getTime()));
    assert.equal((await scheduleNamed(client, "three")).firedCount, 3);
    const endingRuns = await tasksOf(client, "ending");
    assert.ok(endingRuns.length >= 1);
    assert.ok(endingRuns.every((task) => task.metadata["cairnq.schedule"].occurrenceAtMs <= endAtMs));
    assert.equal((await scheduleNamed(client, "ending")).firedCount, endingRuns.length);
    // Finished schedules fire no more.
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal((await tasksOf(client, "three")).length, 3);
    assert.equal((await tasksOf(client, "ending")).length, endingRuns.length);
  });
});
