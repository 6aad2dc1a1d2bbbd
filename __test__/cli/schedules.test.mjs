// `cairnq schedules <db>` run as a process (README, "Command line"): the
// schedules a database holds with their next and last run, `--json`, and a
// database without schedules (none listed, nothing created).
import assert from "node:assert/strict";

import { forEachDialect, tableExists, test } from "../support/dialects.mjs";
import { assertFailure, cli, cliJson, cliOk } from "../support/cli-helpers.mjs";

forEachDialect("cli schedules", (dialect) => {
  test("lists schedules with next and last run; --json as the API answers", async (t) => {
    const { client, db } = await dialect.open(t);
    await client.submit("warmup", {});
    assert.equal((await cliOk(["schedules", db])).trim(), "no schedules");
    assert.deepEqual(await cliJson(["schedules", db]), []);
    assert.equal(await tableExists(dialect, db, "cairnq_schedules"), false, "listing created the table");

    await client.schedule("nightly-report", {
      task: "report",
      cron: "0 2 * * *",
      tz: "Europe/Berlin",
      queue: "reports",
    });
    await client.schedule("audit", { task: "audit", cron: "*/15 * * * *" });
    await client.pauseSchedule("audit");
    const listed = await cliJson(["schedules", db]);
    assert.deepEqual(listed, await client.schedules());
    assert.deepEqual(
      listed.map((s) => [s.name, s.paused]),
      [
        ["audit", true],
        ["nightly-report", false],
      ],
    );

    const human = await cliOk(["schedules", db]);
    const lines = human.split("\n");
    assert.match(
      lines.find((l) => l.includes("NAME")),
      /NAME.*TASK.*QUEUE.*CRON.*TZ.*NEXT RUN.*LAST RUN.*STATE/,
    );
    const nightly = lines.find((l) => l.includes("nightly-report"));
    assert.match(nightly, /report.*reports.*0 2 \* \* \*.*Europe\/Berlin/);
    assert.ok(nightly.includes(new Date(listed[1].nextRunAtMs).toISOString()), nightly);
    assert.match(nightly, /active/);
    assert.match(
      lines.find((l) => l.includes("audit")),
      /paused/,
    );
  });

  test("shows overlap, skips, window, limit and fired count; trigger runs one now", async (t) => {
    const { client, db } = await dialect.open(t);
    const startAt = Date.UTC(2030, 0, 1);
    const endAt = Date.UTC(2030, 6, 1);
    await client.schedule("poll", { task: "poll", every: 90_000, overlap: "skip", startAt, endAt, limit: 5 });
    const human = await cliOk(["schedules", db]);
    const lines = human.split("\n");
    assert.match(
      lines.find((l) => l.includes("NAME")),
      /NAME.*TASK.*QUEUE.*CRON.*TZ.*NEXT RUN.*LAST RUN.*STATE.*OVERLAP.*SKIPPED.*START.*END.*FIRED/,
    );
    const poll = lines.find((l) => l.includes("poll"));
    assert.match(poll, /every 1m 30s/);
    assert.match(poll, /active.*skip.*0.*2030-01-01T00:00:00\.000Z.*2030-07-01T00:00:00\.000Z.*0\/5/);

    const triggered = await cliOk(["trigger", db, "poll"]);
    const tasks = await client.list({ name: "poll" });
    assert.equal(tasks.length, 1);
    assert.equal(triggered.trim(), `triggered poll: ${tasks[0].id} on queue default`);
    assert.deepEqual(tasks[0].metadata["cairnq.schedule"].triggered, true);
    const asJson = await cliJson(["trigger", db, "poll"]);
    assert.equal(asJson.name, "poll");
    assert.equal(asJson.metadata["cairnq.schedule"].triggered, true);
    const [listed] = await cliJson(["schedules", db]);
    assert.equal(listed.nextRunAtMs, startAt, "a trigger leaves the pending occurrence");
    assert.equal(listed.firedCount, 0);

    assertFailure(await cli(["trigger", db, "nope"]), 4, /^error: no schedule named "nope"/);
    assert.equal((await client.list({ name: "poll" })).length, 2, "a refused trigger writes nothing");
  });

  test("no database there: exits 3", async (t) => {
    const db = await dialect.createDatabase(t);
    assertFailure(await cli(["schedules", db]), 3, /^error: /);
  });
});
