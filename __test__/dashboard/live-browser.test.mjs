// The dashboard's live updates in a real browser (support/chromium.mjs):
// `cairnq ui` as a process on each dialect; the page reads its views again
// when the server's stream of task events (api/live) says they changed, and
// never on a timer while that stream is up. Tasks submitted and run by
// another process (this one) show on the open page without a reload,
// read-only dashboards included.
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, test } from "node:test";

import { defer, waitFor } from "../support/helpers.mjs";
import { DIALECTS } from "../support/dialects.mjs";
import { spawnCli, uiUrl } from "../support/cli-helpers.mjs";
import { SKIP, pageOf, useChromium } from "../support/chromium.mjs";

const TIMEOUT_MS = 120_000;
/** `cairnq ui`'s refresh period: a polling page reads this often. */
const REFRESH_MS = 2000;

const chromium = useChromium();

for (const dialect of DIALECTS)
  describe(`dashboard live updates in Chromium on ${dialect.name}`, { skip: SKIP || dialect.skip }, () => {
    /** `cairnq ui` on a database with one task, a page on `hash`, and the reads of `api/<path>` it makes. */
    async function setup(t, hash, extra = [], mode = "events") {
      const { client, db } = await dialect.open(t);
      await client.submit("send", {}, { queue: "mail" });
      const ui = spawnCli(t, ["ui", db, "--port", "0", ...extra]);
      const url = await uiUrl(ui);
      const { page, errors } = await pageOf(t, chromium());
      defer(t, () => assert.deepEqual(errors, [], "script errors on the page"));
      /** @type {string[]} */
      const reads = [];
      page.on("request", (request) => reads.push(new URL(request.url()).pathname.replace(/^.*\/api\//, "")));
      await page.goto(`${url}${hash}`);
      await waitFor(async () => (await page.locator("#live").getAttribute("data-mode")) === mode, {
        timeoutMs: 30_000,
        message: `the page's updates never became ${mode}`,
      });
      return { client, db, page, reads: (path) => reads.filter((r) => r === path).length };
    }

    /** Past any read the page's start may have left due (two refresh periods), and as long again: no read. */
    async function assertNoPolling(reads, path) {
      await sleep(2 * REFRESH_MS + 500);
      const before = reads(path);
      await sleep(2 * REFRESH_MS + 500);
      assert.equal(reads(path), before, `the page read ${path} on a timer`);
    }

    test("the overview shows another process's tasks as they come and finish", { timeout: TIMEOUT_MS }, async (t) => {
      const { client, db, page, reads } = await setup(t, "#/");
      assert.equal(reads("live"), 1, "one event stream");
      await assertNoPolling(reads, "overview");

      await client.submit("report", {}, { queue: "fresh" });
      const queued = page.locator('tr[data-queue="fresh"] td[data-status="queued"]');
      await waitFor(async () => (await queued.count()) === 1 && (await queued.textContent()) === "1", {
        timeoutMs: 30_000,
        message: "the new queue never showed",
      });
      const worker = dialect.makeWorker(t, db, { queues: ["fresh"] });
      worker.worker.task("report", () => "done");
      worker.start();
      const succeeded = page.locator('tr[data-queue="fresh"] td[data-status="succeeded"]');
      await waitFor(async () => (await succeeded.textContent()) === "1", {
        timeoutMs: 30_000,
        message: "the finished task never showed",
      });
      assert.equal(reads("live"), 1, "the stream stayed up");
    });

    test("the task list and a task's page follow their tasks", { timeout: TIMEOUT_MS }, async (t) => {
      const { client, page, reads } = await setup(t, "#/tasks?queue=mail");
      await assertNoPolling(reads, "tasks");
      const added = await client.submit("send", { n: 2 }, { queue: "mail" });
      await waitFor(async () => (await page.locator(`tr[data-task-id="${added.id}"]`).count()) === 1, {
        timeoutMs: 30_000,
        message: "the new task never showed in the list",
      });

      await page.goto(page.url().replace(/#.*$/, `#/task/${encodeURIComponent(added.id)}`));
      await waitFor(async () => (await page.locator("#task-status").getAttribute("data-status")) === "queued", {
        timeoutMs: 30_000,
        message: "the task page never showed",
      });
      await client.cancel(added.id);
      await waitFor(async () => (await page.locator("#task-status").getAttribute("data-status")) === "canceled", {
        timeoutMs: 30_000,
        message: "the cancel never showed on the task page",
      });
    });

    test("a read-only dashboard is live too", { timeout: TIMEOUT_MS }, async (t) => {
      const { client, page, reads } = await setup(t, "#/", ["--read-only"]);
      await assertNoPolling(reads, "overview");
      await client.submit("report", {}, { queue: "fresh" });
      await waitFor(async () => (await page.locator('tr[data-queue="fresh"]').count()) === 1, {
        timeoutMs: 30_000,
        message: "the new queue never showed",
      });
    });

    test("with --no-live pages read on a timer", { timeout: TIMEOUT_MS }, async (t) => {
      const { client, page, reads } = await setup(t, "#/", ["--no-live"], "polling");
      await waitFor(() => reads("overview") >= 3, { timeoutMs: 30_000, message: "the page never polled" });
      await client.submit("report", {}, { queue: "fresh" });
      await waitFor(async () => (await page.locator('tr[data-queue="fresh"]').count()) === 1, {
        timeoutMs: 30_000,
        message: "the new queue never showed",
      });
    });
  });
