// The schedule API (docs/api.md, "Schedules") through the client, on both
// dialects: what `schedule()` stores and answers, upsert in place, pause,
// resume, unschedule, refusals that name the field and write nothing, and
// what a fired task's handler sees on `ctx.schedule`.
import assert from "node:assert/strict";
import { describe } from "node:test";

import { CairnQ, PostgresStore, Worker, createPoolExecutor, defineTask } from "../../index.mjs";
import { forEachDialect, setupWorker, test } from "../support/dialects.mjs";
import { defer, manageWorker, waitFor } from "../support/helpers.mjs";
import { PG_SKIP, createDatabase } from "../support/pg-helpers.mjs";

forEachDialect("schedules API", (dialect) => {
  test("schedule() stores the schedule and answers it; a second call updates it in place", async (t) => {
    const { client } = await dialect.open(t);
    assert.deepEqual(await client.schedules(), []);
    const before = Date.now();
    const report = defineTask("report");
    const nightly = await client.schedule("nightly-report", {
      task: report,
      cron: "0 2 * * *",
      tz: "Europe/Berlin",
      payload: { kind: "daily" },
      metadata: { team: "ops" },
      priority: 2,
      maxAttempts: 4,
    });
    assert.deepEqual(Object.keys(nightly).sort(), [
      "catchUp",
      "createdAtMs",
      "cron",
      "endAtMs",
      "every",
      "finished",
      "firedCount",
      "lastRunAtMs",
      "lastSkippedAtMs",
      "limit",
      "maxAttempts",
      "metadata",
      "name",
      "nextRunAtMs",
      "overlap",
      "paused",
      "payload",
      "priority",
      "queue",
      "skippedCount",
      "startAtMs",
      "task",
      "tz",
      "updatedAtMs",
    ]);
    assert.equal(nightly.task, "report");
    assert.deepEqual(nightly.payload, { kind: "daily" });
    assert.deepEqual(nightly.metadata, { team: "ops" });
    assert.equal(nightly.queue, "default");
    assert.equal(nightly.catchUp, "latest");
    assert.equal(nightly.paused, false);
    assert.equal(nightly.lastRunAtMs, null);
    assert.ok(nightly.nextRunAtMs > before && nightly.nextRunAtMs <= before + 24 * 3600_000);
    // 02:00 in Berlin is 00:00 or 01:00 UTC.
    assert.ok([0, 1].includes(new Date(nightly.nextRunAtMs).getUTCHours()));

    const updated = await client.schedule("nightly-report", {
      task: "report",
      cron: "0 2 * * *",
      tz: "Europe/Berlin",
      queue: "reports",
    });
    assert.equal(updated.nextRunAtMs, nightly.nextRunAtMs, "same cron and zone: the pending occurrence stays");
    assert.equal(updated.createdAtMs, nightly.createdAtMs);
    assert.equal(updated.queue, "reports");
    assert.deepEqual(updated.payload, {});
    const hourly = await client.schedule("nightly-report", { task: "report", cron: "@hourly" });
    assert.equal(hourly.nextRunAtMs % 3600_000, 0);
    assert.deepEqual(
      (await client.schedules()).map((s) => s.name),
      ["nightly-report"],
    );
  });

  test("pause, resume and unschedule answer the schedule, or null for an unknown name", async (t) => {
    const { client } = await dialect.open(t);
    assert.equal(await client.pauseSchedule("nope"), null);
    await client.schedule("b", { task: "t", cron: "* * * * *" });
    await client.schedule("a", { task: "t", cron: "*/5 * * * *", catchUp: "all" });
    assert.deepEqual(
      (await client.schedules()).map((s) => s.name),
      ["a", "b"],
    );
    const paused = await client.pauseSchedule("a");
    assert.equal(paused.paused, true);
    assert.equal((await client.schedules())[0].paused, true);
    const resumed = await client.resumeSchedule("a");
    assert.equal(resumed.paused, false);
    assert.ok(resumed.nextRunAtMs > Date.now() - 1000);
    assert.equal(resumed.nextRunAtMs % 300_000, 0);
    assert.equal(await client.resumeSchedule("nope"), null);
    const removed = await client.unschedule("a");
    assert.equal(removed.name, "a");
    assert.equal(await client.unschedule("a"), null);
    assert.deepEqual(
      (await client.schedules()).map((s) => s.name),
      ["b"],
    );
  });

  test("bad input is refused with the field named, and nothing is written", async (t) => {
    const { client } = await dialect.open(t);
    const cases = [
      [["", { task: "t", cron: "* * * * *" }], /^name must be a non-empty string, got ""$/],
      [["n", { task: 42, cron: "* * * * *" }], /^task must be a string, got 42$/],
      [["n", { task: "t", cron: "every day" }], /^cron "every day" is not valid/],
      [["n", { task: "t", cron: "0 0 31 2 *" }], /^cron "0 0 31 2 \*" is not valid: it never matches$/],
      [
        ["n", { task: "t", cron: "* * * * *", tz: "Europe/Atlantis" }],
        /^tz must be an IANA time zone name, got "Europe\/Atlantis"$/,
      ],
      [["n", { task: "t", cron: "* * * * *", catchUp: "some" }], /^catchUp must be "none", "latest" or "all"/],
      [["n", { task: "t", cron: "* * * * *", maxAttempts: 0 }], /^maxAttempts must be >= 1, got 0$/],
      [["n", { task: "t", cron: "* * * * *", metadata: [1] }], /^metadata must be a plain object$/],
      [["n", undefined], /^task must be/],
      // Numbers JSON cannot carry are refused as submit refuses them, never defaulted.
      [
        ["n", { task: "t", cron: "* * * * *", priority: NaN }],
        /^priority must be a number from -2147483648 to 2147483647, got NaN$/,
      ],
      [
        ["n", { task: "t", cron: "* * * * *", priority: Infinity }],
        /^priority must be a number from -2147483648 to 2147483647, got Infinity$/,
      ],
      [["n", { task: "t", cron: "* * * * *", maxAttempts: NaN }], /^maxAttempts must be >= 1, got NaN$/],
      [["n", { task: "t", cron: "* * * * *", maxAttempts: Infinity }], /^maxAttempts must be >= 1, got Infinity$/],
      [["n", { task: "t", cron: "* * * * *", group: NaN }], /^group must be a string, got NaN$/],
      [["n", { task: "t", cron: "* * * * *", group: "" }], /^group must be a non-empty string, got ""$/],
      [
        ["n", { task: "t", cron: "* * * * *", catchup: "none" }],
        /^unknown key "catchup" in schedule options \(known: name, task, cron, every, tz, payload, queue, priority, maxAttempts, metadata, catchUp, group, overlap, startAt, endAt, limit\)$/,
      ],
      [["n", { task: "t", every: 1000, repeat: 3 }], /^unknown key "repeat" in schedule options/],
      [["n", { task: "t" }], /^cron or every must be given, exactly one, got neither$/],
      [["n", { task: "t", cron: "* * * * *", every: 1000 }], /^cron or every must be given, exactly one, got both$/],
      [["n", { task: "t", every: 0 }], /^every must be an integer >= 1, got 0$/],
      [["n", { task: "t", every: -1000 }], /^every must be an integer >= 1, got -1000$/],
      [["n", { task: "t", every: 1.5 }], /^every must be an integer >= 1, got 1.5$/],
      [["n", { task: "t", every: NaN }], /^every must be an integer >= 1, got NaN$/],
      [["n", { task: "t", every: "1m" }], /^every must be a number, got "1m"$/],
      [["n", { task: "t", cron: "* * * * *", overlap: "queue" }], /^overlap must be "allow" or "skip", got "queue"$/],
      [["n", { task: "t", cron: "* * * * *", overlap: false }], /^overlap must be a string, got false$/],
      [
        ["n", { task: "t", cron: "* * * * *", startAt: new Date(2_000_000), endAt: 1_000_000 }],
        /^endAt must be after startAt, got endAt 1000000 and startAt 2000000$/,
      ],
      [
        ["n", { task: "t", cron: "* * * * *", startAt: new Date("not a date") }],
        /^startAt must be a valid Date or epoch milliseconds \(an integer >= 0\), got NaN$/,
      ],
      [["n", { task: "t", cron: "* * * * *", endAt: "tomorrow" }], /^endAt must be a number, got "tomorrow"$/],
      [["n", { task: "t", cron: "* * * * *", limit: 0 }], /^limit must be an integer >= 1, got 0$/],
      [["n", { task: "t", cron: "* * * * *", limit: 2.5 }], /^limit must be an integer >= 1, got 2.5$/],
      [["n", { task: "t", cron: "* * * * *", limit: -3 }], /^limit must be an integer >= 1, got -3$/],
      [
        ["n", { task: "t", cron: "@midnight" }],
        /^cron "@midnight" is not valid: the nickname @midnight is not supported/,
      ],
      [["n", { task: "t", cron: "@every 5m" }], /^cron "@every 5m" is not valid: the nickname @every is not supported/],
    ];
    for (const [args, message] of cases) {
      await assert.rejects(client.schedule(...args), (err) => {
        assert.ok(err instanceof Error);
        assert.match(err.message, message);
        return true;
      });
    }
    assert.deepEqual(await client.schedules(), []);
  });

  test("a group goes into the schedule's metadata, so each fired task has it", async (t) => {
    const { client } = await dialect.open(t);
    const stored = await client.schedule("grouped", {
      task: "t",
      cron: "* * * * *",
      group: "customer:7",
      metadata: { team: "ops" },
    });
    assert.deepEqual(stored.metadata, { team: "ops", "cairnq.group": "customer:7" });
  });

  test("a fired task is an ordinary task; its handler sees the schedule on ctx.schedule", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect);
    const seen = [];
    worker.task("beat", async (ctx, payload) => {
      seen.push({ schedule: ctx.schedule, payload, metadata: ctx.metadata });
    });
    await client.schedule("every-second", {
      task: "beat",
      cron: "* * * * * *",
      payload: { n: 1 },
      metadata: { team: "ops" },
    });
    handle.start();
    await waitFor(() => seen.length >= 2, { timeoutMs: 15_000, message: "two occurrences ran" });
    await client.pauseSchedule("every-second");
    const [first] = seen;
    assert.equal(first.schedule.name, "every-second");
    assert.equal(first.schedule.occurrenceAtMs % 1000, 0);
    assert.deepEqual(first.payload, { n: 1 });
    assert.equal(first.metadata.team, "ops");
    assert.deepEqual(first.metadata["cairnq.schedule"], first.schedule);
    const schedule = (await client.schedules())[0];
    assert.ok(schedule.lastRunAtMs >= first.schedule.occurrenceAtMs);
    // A task submitted by hand has no schedule.
    const plain = await client.submit("beat", {});
    await waitFor(async () => (await client.get(plain.id)).status === "succeeded", { timeoutMs: 15_000 });
    assert.equal(seen.at(-1).schedule, null);
  });
});

describe("schedules through the application's executor (Postgres)", { skip: PG_SKIP }, () => {
  test("schedule, list, pause, resume, fire and unschedule run through a PgExecutor", async (t) => {
    const { dsn } = await createDatabase(t);
    const executor = await createPoolExecutor(dsn);
    defer(t, () => executor.close());
    const client = new CairnQ(new PostgresStore(executor));
    defer(t, () => client.close());
    const stored = await client.schedule("tick", { task: "beat", cron: "* * * * * *", payload: { n: 2 } });
    assert.deepEqual(await client.schedules(), [stored]);
    assert.equal((await client.pauseSchedule("tick")).paused, true);
    assert.equal((await client.resumeSchedule("tick")).paused, false);
    const handle = manageWorker(t, new Worker(new PostgresStore(executor), ["default"], { pollIntervalMs: 20 }));
    const seen = [];
    handle.worker.task("beat", async (ctx, payload) => {
      seen.push({ schedule: ctx.schedule, payload });
    });
    handle.start();
    await waitFor(() => seen.length >= 2, { timeoutMs: 15_000, message: "two occurrences ran through the executor" });
    assert.deepEqual(seen[0].payload, { n: 2 });
    assert.equal(seen[0].schedule.name, "tick");
    assert.ok((await client.schedules())[0].lastRunAtMs >= seen[0].schedule.occurrenceAtMs);
    assert.equal((await client.unschedule("tick")).name, "tick");
    assert.deepEqual(await client.schedules(), []);
  });
});
