// The dashboard's queue pause buttons in a real browser (support/chromium.mjs):
// `cairnq ui` as a process, on each dialect, shows each queue's state on the
// overview and pauses and resumes it; the actions follow the same CSRF,
// same-origin and read-only rules as every other action.
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { defer, waitFor } from "../support/helpers.mjs";
import { DIALECTS } from "../support/dialects.mjs";
import { spawnCli, uiUrl } from "../support/cli-helpers.mjs";
import { SKIP, pageOf, useChromium } from "../support/chromium.mjs";

const TIMEOUT_MS = 120_000;
const UI = { timeout: 30_000 };

const chromium = useChromium();

for (const dialect of DIALECTS)
  describe(`dashboard queue pauses in Chromium on ${dialect.name}`, { skip: SKIP || dialect.skip }, () => {
    /** A database with two queues, one paused, `cairnq ui` on it, the overview open. */
    async function setup(t, extra = []) {
      const { client, db } = await dialect.open(t);
      await client.submit("send", {}, { queue: "mail" });
      await client.submit("report", {}, { queue: "reports" });
      await client.pauseQueue("reports");
      const ui = spawnCli(t, ["ui", db, "--port", "0", ...extra]);
      const url = await uiUrl(ui);
      const { page, errors } = await pageOf(t, chromium());
      defer(t, () => assert.deepEqual(errors, [], "script errors on the page"));
      await page.goto(`${url}#/`);
      await waitFor(async () => (await page.locator("#queues tbody tr[data-queue]").count()) === 2, {
        timeoutMs: 30_000,
        message: "the queues never showed",
      });
      return { client, page, url };
    }

    const state = (page, queue) => page.locator(`tr[data-queue="${queue}"] td.queue-state`).textContent(UI);
    const paused = async (client, queue) => (await client.queues()).find((q) => q.queue === queue).paused;

    test("shows each queue's state; pause and resume from the overview", { timeout: TIMEOUT_MS }, async (t) => {
      const { client, page } = await setup(t);
      assert.match(await state(page, "mail"), /^active/);
      assert.match(await state(page, "reports"), /^paused/);

      await page.locator('tr[data-queue="mail"] button.queue-pause').click(UI);
      await waitFor(async () => /^paused/.test(await state(page, "mail")), {
        timeoutMs: 30_000,
        message: "pause never showed",
      });
      assert.equal(await paused(client, "mail"), true);
      await page.locator('tr[data-queue="reports"] button.queue-resume').click(UI);
      await waitFor(async () => /^active/.test(await state(page, "reports")), {
        timeoutMs: 30_000,
        message: "resume never showed",
      });
      assert.equal(await paused(client, "reports"), false);
    });

    test(
      "actions need the page's CSRF token and the same origin; read-only refuses them",
      { timeout: TIMEOUT_MS },
      async (t) => {
        const { client, page, url } = await setup(t);
        const post = (base, path, headers, body = { queue: "mail" }) =>
          fetch(new URL(path, base), {
            method: "POST",
            headers: { "content-type": "application/json", ...headers },
            body: JSON.stringify(body),
          });
        assert.equal((await post(url, "api/queues/pause", {})).status, 403);
        const csrf = await page.evaluate(async () => (await (await fetch("api/config")).json()).csrf);
        const crossOrigin = await post(url, "api/queues/pause", {
          "x-csrf-token": csrf,
          origin: "http://evil.example",
        });
        assert.equal(crossOrigin.status, 403);
        assert.equal(await paused(client, "mail"), false, "a refused action paused the queue");
        const bad = await post(url, "api/queues/pause", { "x-csrf-token": csrf }, { queue: 7 });
        assert.equal(bad.status, 400);
        const empty = await post(url, "api/queues/pause", { "x-csrf-token": csrf }, { queue: "" });
        assert.equal(empty.status, 400);
        assert.deepEqual(await empty.json(), { error: 'queue must be a non-empty string, got ""' });
        const done = await post(url, "api/queues/pause", { "x-csrf-token": csrf });
        assert.equal(done.status, 200);
        assert.deepEqual(await done.json(), { queue: "mail", paused: true, changed: true });

        const readOnly = await setup(t, ["--read-only"]);
        const buttons = readOnly.page.locator("#queues button");
        assert.equal(await buttons.count(), 2);
        for (const button of await buttons.all()) assert.equal(await button.isDisabled(), true);
        const roCsrf = await readOnly.page.evaluate(async () => (await (await fetch("api/config")).json()).csrf);
        const refused = await post(readOnly.url, "api/queues/resume", { "x-csrf-token": roCsrf }, { queue: "reports" });
        assert.equal(refused.status, 403);
        assert.equal(await paused(readOnly.client, "reports"), true);
      },
    );
  });
