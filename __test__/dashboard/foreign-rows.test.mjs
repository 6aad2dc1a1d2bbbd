// Rows of cairnq's own tables written by another program (an older SDK, a
// migration script, a hand edit; docs/security.md, "Rows written by
// others"): the commands and pages still work. On every dialect, times no JS
// Date holds render in Chromium; on SQLite, which keeps whatever a writer
// stores, a TEXT time in cairnq_schedules or cairnq_steps is skipped, and
// reported once, by `cairnq schedules`, `cairnq get` and the dashboard.
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { runPython } from "../support/helpers.mjs";
import { DIALECTS, sqlite } from "../support/dialects.mjs";
import { cli, spawnCli, uiUrl } from "../support/cli-helpers.mjs";
import { psql } from "../support/pg-helpers.mjs";
import { SKIP, pageOf, useChromium } from "../support/chromium.mjs";

const TIMEOUT_MS = 120_000;
const UI = { timeout: 30_000 };
/** Past 8.64e15 ms, the latest time a JS Date holds. */
const NO_DATE = 9e15;

const chromium = useChromium();

/** Run `sql` on `db` as another program would. */
async function foreignSql(dialect, db, sql) {
  if (dialect === sqlite) {
    await runPython("import sqlite3, sys\nc = sqlite3.connect(sys.argv[1])\nc.executescript(sys.argv[2])\nc.close()", [
      db,
      sql,
    ]);
  } else {
    await psql(db, sql);
  }
}

for (const dialect of DIALECTS)
  describe(`rows written by others, on ${dialect.name}`, { skip: dialect.skip }, () => {
    test("times no JS Date holds leave every page working", { timeout: TIMEOUT_MS, skip: SKIP }, async (t) => {
      const { client, db } = await dialect.open(t);
      const task = await client.submit("odd-times", {});
      await client.schedule("far", { task: "report", cron: "0 2 * * *" });
      await foreignSql(
        dialect,
        db,
        `update cairnq_tasks set created_at_ms = ${NO_DATE}, updated_at_ms = ${NO_DATE}, run_at_ms = ${NO_DATE};
         update cairnq_schedules set next_run_at_ms = ${NO_DATE}, last_run_at_ms = ${-NO_DATE};`,
      );
      const ui = spawnCli(t, ["ui", db, "--port", "0"]);
      const url = await uiUrl(ui);
      const { page, errors } = await pageOf(t, chromium());

      await page.goto(`${url}#/tasks`);
      await page.waitForSelector(`tr[data-task-id="${task.id}"]`, UI);
      await page.goto(`${url}#/task/${task.id}`);
      await page.waitForSelector("#payload", UI);
      assert.match(await page.locator("main").textContent(), /9000000000000000 ms \(no date\)/);
      await page.goto(`${url}#/schedules`);
      await page.waitForSelector('tr[data-schedule="far"]', UI);
      const row = await page.locator('tr[data-schedule="far"]').textContent();
      assert.match(row, /9000000000000000 ms \(no date\)/);
      assert.deepEqual(errors, [], "script errors on the page");
    });

    if (dialect !== sqlite) return;

    test("a TEXT time in cairnq_schedules or cairnq_steps is skipped and reported; the rest shows", async (t) => {
      const { client, db } = await dialect.open(t);
      const task = await client.submit("with-steps", {});
      await client.schedule("healthy", { task: "report", cron: "0 2 * * *" });
      await client.schedule("broken", { task: "report", cron: "0 3 * * *" });
      // The steps table as the first step creates it, rows as a script wrote them.
      await foreignSql(
        dialect,
        db,
        `update cairnq_schedules set next_run_at_ms = 'soon' where name = 'broken';
         create table if not exists cairnq_steps (
           task_id text not null references cairnq_tasks(id) on delete cascade,
           step_id text not null, kind text not null check (kind in ('step', 'sleep', 'child')),
           result text, wake_at_ms integer, child_id text, created_at_ms integer not null,
           primary key (task_id, step_id));
         insert into cairnq_steps values ('${task.id}', 'fetch', 'step', '1', null, null, 5);
         insert into cairnq_steps values ('${task.id}', 'nap', 'sleep', null, 'later', null, 6);`,
      );

      const listed = await cli(["schedules", db]);
      assert.equal(listed.code, 0, listed.stderr);
      assert.match(listed.stdout, /healthy/);
      assert.doesNotMatch(listed.stdout, /broken/);
      assert.match(
        listed.stderr,
        /cairnq: a row of cairnq_schedules cannot be read: key "broken", column next_run_at_ms: holds TEXT "soon"; skipped/,
      );
      assert.equal(listed.stderr.match(/cannot be read/g).length, 1, "reported once");

      const got = await cli(["get", db, task.id]);
      assert.equal(got.code, 0, got.stderr);
      assert.match(got.stdout, /fetch/);
      assert.match(got.stderr, new RegExp(`key "${task.id}/nap", column wake_at_ms: holds TEXT "later"`));

      const ui = spawnCli(t, ["ui", db, "--port", "0"]);
      const base = new URL("./", await uiUrl(ui));
      const schedules = await fetch(new URL("api/schedules", base));
      assert.equal(schedules.status, 200);
      assert.deepEqual(
        (await schedules.json()).schedules.map((/** @type {{ name: string }} */ s) => s.name),
        ["healthy"],
      );
      const page = await fetch(new URL(`api/tasks/${task.id}`, base));
      assert.equal(page.status, 200);
      assert.deepEqual(
        (await page.json()).steps.steps.map((/** @type {{ id: string }} */ s) => s.id),
        ["fetch"],
      );
    });
  });
