// The dashboard's schedules page in a real browser (support/chromium.mjs): `cairnq
// ui` as a process, on each dialect, shows every schedule with its next
// and last run, and pauses and resumes one; the actions follow the same CSRF,
// same-origin and read-only rules as every other action.
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { defer, waitFor } from "../support/helpers.mjs";
import { DIALECTS } from "../support/dialects.mjs";
import { spawnCli, uiUrl } from "../support/cli-helpers.mjs";
import { SKIP, useChromium } from "../support/chromium.mjs";

const TIMEOUT_MS = 120_000;
const UI = { timeout: 30_000 };

const chromium = useChromium();

for (const dialect of DIALECTS)
  describe(`dashboard schedules page in Chromium on ${dialect.name}`, { skip: SKIP || dialect.skip }, () => {
    /** A database with two schedules, `cairnq ui` on it, and a page on #/schedules. */
    async function setup(t, extra = []) {
      const { client, db } = await dialect.open(t);
      await client.schedule("nightly-report", { task: "report", cron: "0 2 * * *", tz: "Europe/Berlin" });
      await client.schedule("audit", { task: "audit", cron: "*/15 * * * *", queue: "ops" });
      await client.pauseSchedule("audit");
      const ui = spawnCli(t, ["ui", db, "--port", "0", ...extra]);
      const url = await uiUrl(ui);
      const context = await chromium().newContext({ viewport: { width: 1280, height: 860 } });
      defer(t, () => context.close());
      const page = await context.newPage();
      const errors = [];
      page.on("pageerror", (e) => errors.push(e.message));
      defer(t, () => assert.deepEqual(errors, [], "script errors on the page"));
      await page.goto(`${url}#/schedules`);
      await waitFor(async () => (await page.locator("#schedules tbody tr").count()) === 2, {
        timeoutMs: 30_000,
        message: "the schedules never showed",
      });
      return { client, page, url };
    }

    const cell = (page, name, cls) => page.locator(`tr[data-schedule="${name}"] td.${cls}`).textContent(UI);

    test(
      "lists schedules with next and last run; pause and resume from the page",
      { timeout: TIMEOUT_MS },
      async (t) => {
        const { client, page } = await setup(t);
        const [audit, nightly] = await client.schedules();
        assert.equal(await cell(page, "nightly-report", "state"), "active");
        assert.equal(await cell(page, "audit", "state"), "paused");
        assert.ok(
          (await cell(page, "nightly-report", "next-run")).startsWith(
            new Date(nightly.nextRunAtMs).toISOString().replace("T", " ").replace("Z", " UTC"),
          ),
        );
        assert.equal(await cell(page, "audit", "next-run"), "-");
        assert.equal(await cell(page, "nightly-report", "last-run"), "-");
        const row = page.locator('tr[data-schedule="nightly-report"]');
        assert.match(await row.textContent(), /report.*default.*0 2 \* \* \*.*Europe\/Berlin/);
        assert.equal(audit.paused, true);

        await row.locator("button.schedule-pause").click(UI);
        await waitFor(async () => (await cell(page, "nightly-report", "state")) === "paused", {
          timeoutMs: 30_000,
          message: "pause never showed",
        });
        assert.equal((await client.schedules())[1].paused, true);
        await page.locator('tr[data-schedule="audit"] button.schedule-resume').click(UI);
        await waitFor(async () => (await cell(page, "audit", "state")) === "active", {
          timeoutMs: 30_000,
          message: "resume never showed",
        });
        assert.equal((await client.schedules())[0].paused, false);
      },
    );

    test(
      "shows overlap, skips, window and limit; Run now makes one task and moves nothing",
      { timeout: TIMEOUT_MS },
      async (t) => {
        const { client, page, url } = await setup(t);
        const startAt = Date.UTC(2030, 0, 1);
        await client.schedule("poll", { task: "poll", every: 60_000, overlap: "skip", startAt, limit: 3 });
        await waitFor(async () => (await page.locator("#schedules tbody tr").count()) === 3, {
          timeoutMs: 30_000,
          message: "the interval schedule never showed",
        });
        const row = page.locator('tr[data-schedule="poll"]');
        assert.match(await row.textContent(), /every 60000 ms/);
        assert.equal(await cell(page, "poll", "overlap"), "skip");
        assert.equal(await cell(page, "poll", "skipped"), "0");
        assert.ok((await cell(page, "poll", "start-at")).startsWith("2030-01-01 00:00:00.000 UTC"));
        assert.equal(await cell(page, "poll", "end-at"), "-");
        assert.equal(await cell(page, "poll", "fired"), "0/3");
        assert.equal(await cell(page, "nightly-report", "overlap"), "allow");

        await row.locator("button.schedule-trigger").click(UI);
        await waitFor(async () => (await client.list({ name: "poll" })).length === 1, {
          timeoutMs: 30_000,
          message: "Run now made no task",
        });
        const [task] = await client.list({ name: "poll" });
        assert.equal(task.metadata["cairnq.schedule"].triggered, true);
        await waitFor(async () => (await page.locator("#flash").textContent()).includes(task.id), {
          timeoutMs: 30_000,
          message: "the page never said what it triggered",
        });
        const poll = (await client.schedules()).find((s) => s.name === "poll");
        assert.equal(poll.nextRunAtMs, startAt, "Run now moved the pending occurrence");

        const csrf = await page.evaluate(async () => (await (await fetch("api/config")).json()).csrf);
        const unknown = await fetch(new URL("api/schedules/trigger", url), {
          method: "POST",
          headers: { "content-type": "application/json", "x-csrf-token": csrf },
          body: JSON.stringify({ name: "nope" }),
        });
        assert.equal(unknown.status, 404);
        assert.deepEqual(await unknown.json(), { error: 'no schedule named "nope"' });
        assert.equal((await client.list({})).length, 1, "an unknown trigger wrote a task");
      },
    );

    test(
      "actions need the page's CSRF token and the same origin; read-only refuses them",
      { timeout: TIMEOUT_MS },
      async (t) => {
        const { client, page, url } = await setup(t);
        const post = (path, headers, name = "nightly-report") =>
          fetch(new URL(path, url), {
            method: "POST",
            headers: { "content-type": "application/json", ...headers },
            body: JSON.stringify({ name }),
          });
        const noToken = await post("api/schedules/pause", {});
        assert.equal(noToken.status, 403);
        const csrf = await page.evaluate(async () => (await (await fetch("api/config")).json()).csrf);
        const crossOrigin = await post("api/schedules/pause", {
          "x-csrf-token": csrf,
          origin: "http://evil.example",
        });
        assert.equal(crossOrigin.status, 403);
        assert.equal((await client.schedules())[1].paused, false, "a refused action changed the schedule");
        const unknown = await post("api/schedules/pause", { "x-csrf-token": csrf }, "nope");
        assert.equal(unknown.status, 404);
        const done = await post("api/schedules/pause", { "x-csrf-token": csrf });
        assert.equal(done.status, 200);
        assert.equal((await done.json()).schedule.paused, true);

        const readOnly = await setup(t, ["--read-only"]);
        const buttons = readOnly.page.locator('tr[data-schedule="nightly-report"] button');
        assert.equal(await buttons.count(), 2);
        for (const button of await buttons.all()) assert.equal(await button.isDisabled(), true);
        const roCsrf = await readOnly.page.evaluate(async () => (await (await fetch("api/config")).json()).csrf);
        const refused = await fetch(new URL("api/schedules/resume", readOnly.url), {
          method: "POST",
          headers: { "content-type": "application/json", "x-csrf-token": roCsrf },
          body: JSON.stringify({ name: "audit" }),
        });
        assert.equal(refused.status, 403);
        assert.equal((await readOnly.client.schedules())[0].paused, true);
        const roTrigger = await fetch(new URL("api/schedules/trigger", readOnly.url), {
          method: "POST",
          headers: { "content-type": "application/json", "x-csrf-token": roCsrf },
          body: JSON.stringify({ name: "audit" }),
        });
        assert.equal(roTrigger.status, 403);
        assert.deepEqual(await readOnly.client.list({}), [], "a refused trigger wrote a task");
      },
    );

    test(
      "schedules named . and .. are paused and resumed from the page (issue 34)",
      { timeout: TIMEOUT_MS },
      async (t) => {
        const { client, page } = await setup(t);
        for (const name of [".", ".."]) await client.schedule(name, { task: "dots", cron: "0 3 * * *" });
        await waitFor(async () => (await page.locator("#schedules tbody tr").count()) === 4, {
          timeoutMs: 30_000,
          message: "the dotted schedules never showed",
        });
        const paused = async (name) => (await client.schedules()).find((s) => s.name === name).paused;
        for (const name of [".", ".."]) {
          await page.locator(`tr[data-schedule="${name}"] button.schedule-pause`).click(UI);
          await waitFor(async () => (await cell(page, name, "state")) === "paused", {
            timeoutMs: 30_000,
            message: `pausing ${name} never showed (flash: ${await page.locator("#flash").textContent()})`,
          });
          assert.equal(await paused(name), true);
          assert.equal(await paused("nightly-report"), false, `pausing ${name} paused another schedule`);
          await page.locator(`tr[data-schedule="${name}"] button.schedule-resume`).click(UI);
          await waitFor(async () => (await cell(page, name, "state")) === "active", {
            timeoutMs: 30_000,
            message: `resuming ${name} never showed`,
          });
          assert.equal(await paused(name), false);
        }
      },
    );
  });
