// `cairnq schedules <db>` run as a process (README, "Command line"): the
// schedules a database holds with their next and last run, `--json`, and a
// database without schedules (none listed, nothing created).
import assert from "node:assert/strict";

import { runPython } from "../support/helpers.mjs";
import { forEachDialect, sqlite, test } from "../support/dialects.mjs";
import { psql } from "../support/pg-helpers.mjs";
import { assertFailure, cli, cliJson, cliOk } from "../support/cli-helpers.mjs";

/** Whether the schedules table exists. */
async function hasSchedulesTable(dialect, db) {
  if (dialect === sqlite) {
    const code = [
      "import sqlite3, sys",
      "c = sqlite3.connect('file:' + sys.argv[1] + '?mode=ro', uri=True)",
      "print(c.execute(\"select count(*) from sqlite_master where name = 'cairnq_schedules'\").fetchone()[0])",
    ].join("\n");
    return (await runPython(code, [db])).trim() === "1";
  }
  return (await psql(db, "select to_regclass('cairnq_schedules') is not null")).trim() === "t";
}

forEachDialect("cli schedules", (dialect) => {
  test("lists schedules with next and last run; --json as the API answers", async (t) => {
    const { client, db } = await dialect.open(t);
    await client.submit("warmup", {});
    assert.equal((await cliOk(["schedules", db])).trim(), "no schedules");
    assert.deepEqual(await cliJson(["schedules", db]), []);
    assert.equal(await hasSchedulesTable(dialect, db), false, "listing created the table");

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

  test("no database there: exits 3", async (t) => {
    const db = await dialect.createDatabase(t);
    assertFailure(await cli(["schedules", db]), 3, /^error: /);
  });
});
