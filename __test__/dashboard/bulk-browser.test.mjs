// The task list's "Retry all" and "Cancel all" in a real browser
// (support/chromium.mjs): `cairnq ui` as a process, on each dialect, retries
// the failed tasks of the filtered queue after a dry run's count is
// confirmed, cancels the queued ones, and leaves other queues alone; the
// actions follow the same CSRF, same-origin and read-only rules as every
// other action, and a bad filter is a 400 that changes nothing.
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { defer, statusTotals, submitAndFail, waitFor } from "../support/helpers.mjs";
import { DIALECTS } from "../support/dialects.mjs";
import { spawnCli, uiUrl } from "../support/cli-helpers.mjs";
import { SKIP, pageOf, useChromium } from "../support/chromium.mjs";

const TIMEOUT_MS = 120_000;
const UI = { timeout: 30_000 };

const chromium = useChromium();

for (const dialect of DIALECTS)
  describe(`dashboard bulk retry and cancel in Chromium on ${dialect.name}`, { skip: SKIP || dialect.skip }, () => {
    /** Failed tasks in two queues, queued ones in mail, `cairnq ui` on it. */
    async function setup(t, extra = []) {
      const { client, db } = await dialect.open(t);
      const failed = [];
      for (let i = 0; i < 3; i++) failed.push((await submitAndFail(client, "send", { queue: "mail" })).id);
      const elsewhere = await submitAndFail(client, "report", { queue: "reports" });
      const queued = [
        await client.submit("send", {}, { queue: "mail" }),
        await client.submit("send", {}, { queue: "mail" }),
      ];
      const ui = spawnCli(t, ["ui", db, "--port", "0", ...extra]);
      const url = await uiUrl(ui);
      const { page, errors } = await pageOf(t, chromium());
      defer(t, () => assert.deepEqual(errors, [], "script errors on the page"));
      return { client, page, url, failed, elsewhere, queued };
    }

    test(
      "Retry all and Cancel all change the filtered tasks after a confirmed dry run",
      { timeout: TIMEOUT_MS },
      async (t) => {
        const { client, page, url, failed, elsewhere, queued } = await setup(t);
        const questions = [];
        let answer = false;
        page.on("dialog", (d) => {
          questions.push(d.message());
          return answer ? d.accept() : d.dismiss();
        });
        await page.goto(`${url}#/tasks?queue=mail&status=failed`);
        await page.locator("#retry-many").waitFor(UI);
        assert.equal(await page.locator("#cancel-many").count(), 0, "cancel is offered for failed tasks");

        await page.locator("#retry-many").click(UI);
        await waitFor(() => questions.length === 1, { timeoutMs: 30_000, message: "no confirmation asked" });
        assert.equal(questions[0], "Retry 3 task(s) matching these filters?");
        assert.equal((await statusTotals(client)).failed, 4, "a dismissed retry changed tasks");

        answer = true;
        await page.locator("#retry-many").click(UI);
        await page.waitForSelector("#flash:has-text('Retried 3 task(s).')", UI);
        for (const id of failed) assert.equal((await client.get(id)).status, "queued");
        assert.equal((await client.get(elsewhere.id)).status, "failed");

        await page.goto(`${url}#/tasks?queue=mail&status=queued`);
        await page.locator("#cancel-many").waitFor(UI);
        await page.locator("#cancel-many").click(UI);
        await page.waitForSelector("#flash:has-text('Canceled 5 task(s).')", UI);
        for (const task of queued) assert.equal((await client.get(task.id)).status, "canceled");
        assert.equal((await client.get(elsewhere.id)).status, "failed");
      },
    );

    test(
      "the actions need the page's CSRF token and the same origin; read-only refuses them",
      { timeout: TIMEOUT_MS },
      async (t) => {
        const { client, page, url } = await setup(t);
        await page.goto(`${url}#/tasks`);
        await page.locator("#retry-many").waitFor(UI);
        const post = (base, path, headers, body = {}) =>
          fetch(new URL(path, base), {
            method: "POST",
            headers: { "content-type": "application/json", ...headers },
            body: JSON.stringify(body),
          });
        assert.equal((await post(url, "api/tasks/retry-many", {})).status, 403);
        const csrf = await page.evaluate(async () => (await (await fetch("api/config")).json()).csrf);
        const crossOrigin = await post(url, "api/tasks/retry-many", {
          "x-csrf-token": csrf,
          origin: "http://evil.example",
        });
        assert.equal(crossOrigin.status, 403);
        const bad = await post(url, "api/tasks/cancel-many", { "x-csrf-token": csrf }, { status: "failed" });
        assert.equal(bad.status, 400);
        assert.deepEqual(await bad.json(), { error: "cancelMany.status must be queued or running, got failed" });
        const unknown = await post(url, "api/tasks/retry-many", { "x-csrf-token": csrf }, { everything: true });
        assert.equal(unknown.status, 400);
        assert.equal((await statusTotals(client)).failed, 4, "a refused action changed tasks");
        const dry = await post(
          url,
          "api/tasks/retry-many",
          { "x-csrf-token": csrf },
          { queue: "reports", dryRun: true },
        );
        assert.deepEqual((await dry.json()).count, 1);
        assert.equal((await statusTotals(client)).failed, 4);

        const readOnly = await setup(t, ["--read-only"]);
        await readOnly.page.goto(`${readOnly.url}#/tasks`);
        await readOnly.page.locator("#retry-many").waitFor(UI);
        assert.equal(await readOnly.page.locator("#retry-many").isDisabled(), true);
        assert.equal(await readOnly.page.locator("#cancel-many").isDisabled(), true);
        const roCsrf = await readOnly.page.evaluate(async () => (await (await fetch("api/config")).json()).csrf);
        const refused = await post(readOnly.url, "api/tasks/retry-many", { "x-csrf-token": roCsrf });
        assert.equal(refused.status, 403);
        assert.equal((await statusTotals(readOnly.client)).failed, 4);
      },
    );
  });
