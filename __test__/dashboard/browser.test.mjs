// The dashboard in a real browser: `cairnq ui` runs as a process on a real
// SQLite file, and Chromium (Debian's package, driven by playwright-core; no
// browser download) loads it. CAIRNQ_CHROMIUM names another executable.
// Outside CI a missing browser skips with the reason; in CI it fails.
//
// CAIRNQ_UPDATE_SCREENSHOTS=1 writes docs/dashboard-overview.png and
// docs/dashboard-task.png (the README shows them); otherwise the screenshots
// go to the test's temp dir.

import assert from "node:assert/strict";
import path from "node:path";
import { describe, test } from "node:test";

import { CairnQ, TaskError, Worker } from "../../index.mjs";
import { REPO_ROOT, defer, makeDbPath, makeTempDir, manageWorker, waitFor } from "../support/helpers.mjs";
import { makeGate } from "../support/worker-helpers.mjs";
import { spawnCli, uiUrl } from "../support/cli-helpers.mjs";
import { SKIP, useChromium } from "../support/chromium.mjs";

const SCREENSHOTS = process.env.CAIRNQ_UPDATE_SCREENSHOTS === "1";
const TIMEOUT_MS = 120_000;
const UI = { timeout: 30_000 };

describe("dashboard in Chromium", { skip: SKIP }, () => {
  const chromium = useChromium();

  /** A page that records every request it makes and fails the test on a script error. */
  async function openPage(t, url) {
    const context = await chromium().newContext({ viewport: { width: 1280, height: 860 } });
    defer(t, () => context.close());
    const page = await context.newPage();
    const requests = [];
    const errors = [];
    page.on("request", (r) => requests.push(r.url()));
    page.on("pageerror", (e) => errors.push(e.message));
    page.on("dialog", (d) => page.onDialog?.(d));
    defer(t, () => assert.deepEqual(errors, [], "script errors on the page"));
    if (url) await page.goto(url);
    return { page, requests, context };
  }

  /** `cairnq ui <db> --port 0 ...extra` running; resolves with its URL. */
  async function startUi(t, db, extra = []) {
    const ui = spawnCli(t, ["ui", db, "--port", "0", ...extra]);
    return { ui, url: await uiUrl(ui) };
  }

  /** The count the overview shows for queue/status, as a number. */
  async function shownCount(page, queue, status) {
    const text = await page.locator(`tr[data-queue="${queue}"] td[data-status="${status}"]`).textContent(UI);
    return Number(text);
  }

  function client(t, db) {
    const c = CairnQ.sqlite(db);
    defer(t, () => c.close());
    return c;
  }

  function screenshotPath(t, name) {
    return SCREENSHOTS ? path.join(REPO_ROOT, "docs", name) : path.join(makeTempDir(t), name);
  }

  test(
    "overview: counts change as a worker drains the queue; no request leaves the origin",
    { timeout: TIMEOUT_MS },
    async (t) => {
      const db = makeDbPath(t);
      const c = client(t, db);
      for (let i = 0; i < 40; i++) await c.submit("emails.send", { to: `user${i}@example.com` }, { queue: "mail" });
      for (let i = 0; i < 8; i++) await c.submit("images.resize", { width: 128 }, { queue: "media", key: `img-${i}` });
      const { url } = await startUi(t, db);
      const { page, requests } = await openPage(t, url);
      await waitFor(async () => (await page.locator('tr[data-queue="mail"]').count()) === 1, { timeoutMs: 30_000 });
      assert.equal(await shownCount(page, "mail", "queued"), 40);
      assert.equal(await shownCount(page, "mail", "succeeded"), 0);

      // A worker drains the queue; it holds after ten tasks until the page has
      // shown the partly drained queue, then finishes. No reload in between.
      const gate = makeGate();
      const worker = manageWorker(
        t,
        Worker.sqlite(db, { queues: ["mail", "media"], concurrency: 2, pollIntervalMs: 20 }),
      );
      let n = 0;
      worker.worker.task("emails.send", async () => {
        if (++n > 10) await gate.promise;
        await new Promise((resolve) => setTimeout(resolve, 20));
        if (n % 9 === 0) throw new TaskError("SMTP 550: mailbox unavailable", { code: "smtp_550", retryable: false });
        return { sent: true };
      });
      worker.worker.task("images.resize", async (ctx) => {
        await ctx.progress(0.5, "resizing");
        return { thumb: "ok" };
      });
      worker.start();
      await waitFor(
        async () =>
          (await shownCount(page, "mail", "running")) === 2 && (await shownCount(page, "mail", "queued")) === 28,
        {
          timeoutMs: 60_000,
          intervalMs: 100,
          message: "the overview never showed the partly drained queue (28 queued, 2 running)",
        },
      );
      assert.equal((await shownCount(page, "mail", "succeeded")) + (await shownCount(page, "mail", "failed")), 10);
      gate.release();
      await waitFor(async () => (await shownCount(page, "mail", "queued")) === 0, {
        timeoutMs: 60_000,
        intervalMs: 100,
        message: "the overview never showed the mail queue drained",
      });
      await waitFor(
        async () => (await shownCount(page, "mail", "succeeded")) + (await shownCount(page, "mail", "failed")) === 40,
        { timeoutMs: 30_000 },
      );
      assert.equal(await shownCount(page, "media", "succeeded"), 8);
      // The throughput sparkline has drawn a line.
      await waitFor(async () => (await page.locator('tr[data-queue="mail"] svg.spark polyline').count()) === 1, {
        timeoutMs: 10_000,
      });
      await page.screenshot({ path: screenshotPath(t, "dashboard-overview.png") });

      const origin = new URL(url).origin;
      assert.ok(requests.length > 3);
      assert.deepEqual(
        requests.filter((r) => !r.startsWith(origin)),
        [],
        "requests outside the dashboard's origin",
      );
    },
  );

  test("a failed task: open it from the list, read its error, retry it", { timeout: TIMEOUT_MS }, async (t) => {
    const db = makeDbPath(t);
    const c = client(t, db);
    const parent = await c.submit(
      "orders.charge",
      { order: 42, amount: "19.90" },
      { key: "order-42", correlationId: "checkout-7", maxAttempts: 1 },
    );
    const worker = manageWorker(t, Worker.sqlite(db, { concurrency: 1, pollIntervalMs: 20 }));
    let attempts = 0;
    worker.worker.task("orders.charge", async (ctx) => {
      attempts++;
      await ctx.submit("orders.receipt", { order: 42 });
      await ctx.progress(0.8, "card authorised");
      if (attempts === 1)
        throw new TaskError("card declined: insufficient funds", { code: "card_declined", retryable: false });
      return { charged: true };
    });
    worker.start();
    await waitFor(async () => (await c.get(parent.id)).status === "failed", { timeoutMs: 30_000 });

    const { url } = await startUi(t, db);
    const { page } = await openPage(t, `${url}#/tasks?status=failed`);
    await page.locator(`tr[data-task-id="${parent.id}"] a`).click(UI);
    await page.waitForSelector('#task-status[data-status="failed"]', UI);
    assert.match(await page.locator("#error").textContent(), /card declined: insufficient funds/);
    assert.match(await page.locator("main").textContent(), /checkout-7/);
    assert.match(await page.locator("#payload").textContent(), /"amount": "19.90"/);
    assert.match(await page.locator("#spawned").textContent(), /orders\.receipt/);
    assert.equal(await page.locator("#cancel").isDisabled(), true, "a failed task cannot be canceled");
    await page.screenshot({ path: screenshotPath(t, "dashboard-task.png"), fullPage: true });

    // Dismissing the confirmation changes nothing; accepting retries.
    const asked = [];
    page.onDialog = (d) => {
      asked.push(d.message());
      d.dismiss();
    };
    await page.locator("#retry").click();
    await waitFor(() => asked.length === 1, { timeoutMs: 30_000 });
    assert.match(asked[0], new RegExp(`^Retry task ${parent.id}\\?`));
    assert.equal((await c.get(parent.id)).status, "failed");
    page.onDialog = (d) => d.accept();
    await page.locator("#retry").click();
    await page.waitForSelector('#task-status[data-status="succeeded"]', UI);
    assert.equal((await c.get(parent.id)).status, "succeeded");
    assert.equal(attempts, 2);

    // Search by key finds it too.
    await page.fill("#search", "order-42");
    await page.press("#search", "Enter");
    await page.waitForURL(new RegExp(`#/task/${parent.id}$`), UI);
  });

  test("purge asks for confirmation, then deletes the finished tasks", { timeout: TIMEOUT_MS }, async (t) => {
    const db = makeDbPath(t);
    const c = client(t, db);
    const done = [];
    for (let i = 0; i < 3; i++) done.push(await c.submit("done"));
    const live = await c.submit("live", {}, { queue: "later", runAtDelayMs: 3_600_000 });
    for (const task of done) await c.cancel(task.id);
    const { url } = await startUi(t, db);
    const { page } = await openPage(t, url);
    await page.fill("#purge-older", "0");
    const questions = [];
    page.onDialog = (d) => {
      questions.push(d.message());
      d.dismiss();
    };
    await page.locator("#purge-button").click();
    await waitFor(() => questions.length === 1, { timeoutMs: 30_000 });
    assert.match(questions[0], /^Delete 3 finished task\(s\)/);
    assert.equal((await c.list()).length, 4, "a dismissed purge deleted tasks");
    page.onDialog = (d) => d.accept();
    await page.locator("#purge-button").click();
    await page.waitForSelector("#flash:has-text('Purged 3 task(s).')", UI);
    assert.deepEqual(
      (await c.list()).map((x) => x.id),
      [live.id],
    );
  });

  test("database values are shown as text, never run as markup", { timeout: TIMEOUT_MS }, async (t) => {
    const db = makeDbPath(t);
    const c = client(t, db);
    const evil = '<img src=x onerror="window.__pwned=1">';
    const task = await c.submit(
      evil,
      { note: "</pre><script>window.__pwned=2</script>" },
      { queue: "<b>q</b>", key: "<svg onload=alert(1)>" },
    );
    const { url } = await startUi(t, db);
    const { page } = await openPage(t, `${url}#/tasks`);
    await page.waitForSelector(`tr[data-task-id="${task.id}"]`, UI);
    assert.equal(await page.locator(`tr[data-task-id="${task.id}"] td:nth-child(2)`).textContent(), evil);
    await page.goto(`${url}#/task/${task.id}`);
    await page.waitForSelector("#payload", UI);
    assert.match(await page.locator("#payload").textContent(), /<\/pre><script>/);
    assert.equal(await page.locator("main img, main script, main b").count(), 0);
    assert.equal(await page.evaluate(() => globalThis.__pwned), undefined);
  });

  test("task list: filter by queue and name, page through older tasks", { timeout: TIMEOUT_MS }, async (t) => {
    const db = makeDbPath(t);
    const c = client(t, db);
    for (let i = 0; i < 30; i++) await c.submit(i % 3 ? "pdf.render" : "pdf.merge", { i }, { queue: "docs" });
    await c.submit("other", {}, { queue: "elsewhere" });
    const { url } = await startUi(t, db);
    const { page } = await openPage(t, `${url}#/tasks`);
    await page.waitForSelector("#filters", UI);
    await page.fill('#filters input[name="queue"]', "docs");
    await page.fill('#filters input[name="name"]', "pdf.render");
    await page.click('#filters button[type="submit"]');
    await page.waitForURL(/#\/tasks\?queue=docs&name=pdf\.render$/, UI);
    // Newest first, as the store lists them (ties within a millisecond by id).
    const rendered = (await c.list({ queue: "docs", name: "pdf.render" })).map((x) => x.id);
    assert.equal(rendered.length, 20);
    await waitFor(async () => (await page.locator("tr[data-task-id]").count()) === 20, { timeoutMs: 30_000 });
    assert.deepEqual(
      await page.locator("tr[data-task-id]").evaluateAll((rows) => rows.map((r) => r.dataset.taskId)),
      rendered,
    );
    assert.equal(await page.locator("#next").isDisabled(), true);

    await page.goto(`${url}#/tasks?queue=docs`);
    await waitFor(async () => (await page.locator("tr[data-task-id]").count()) === 25, { timeoutMs: 30_000 });
    assert.equal(await page.locator("#prev").isDisabled(), true);
    await page.click("#next");
    await waitFor(async () => (await page.locator("tr[data-task-id]").count()) === 5, { timeoutMs: 30_000 });
    const older = (await c.list({ queue: "docs", offset: 25 })).map((x) => x.id);
    assert.equal(older.length, 5);
    assert.deepEqual(
      await page.locator("tr[data-task-id]").evaluateAll((rows) => rows.map((r) => r.dataset.taskId)),
      older,
    );
  });

  test("--read-only: actions are disabled, and refused when sent anyway", { timeout: TIMEOUT_MS }, async (t) => {
    const db = makeDbPath(t);
    const c = client(t, db);
    const task = await c.submit("job");
    await c.cancel(task.id);
    const { url } = await startUi(t, db, ["--read-only"]);
    const { page } = await openPage(t, `${url}#/task/${task.id}`);
    await page.waitForSelector('#task-status[data-status="canceled"]', UI);
    assert.equal(await page.locator("#mode").textContent(), "read-only");
    assert.equal(await page.locator("#retry").isDisabled(), true);
    await page.goto(`${url}#/`);
    assert.equal(await page.locator("#purge-button").isDisabled(UI), true);
    // A POST with the page's own CSRF token is still refused.
    const answer = await page.evaluate(async () => {
      const { csrf } = await (await fetch("api/config")).json();
      const tasks = (await (await fetch("api/tasks")).json()).tasks;
      const res = await fetch(`api/tasks/${tasks[0].id}/retry`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-csrf-token": csrf },
        body: "{}",
      });
      return { status: res.status, body: await res.json() };
    });
    assert.deepEqual(answer, { status: 403, body: { error: "this dashboard is read-only" } });
    assert.equal((await c.get(task.id)).status, "canceled");
  });

  test("a non-loopback bind needs the token on every request", { timeout: TIMEOUT_MS }, async (t) => {
    const db = makeDbPath(t);
    const c = client(t, db);
    await c.submit("job");
    const { ui, url } = await startUi(t, db, ["--host", "0.0.0.0"]);
    // The token line follows the URL line, maybe in a later chunk: wait for it.
    const shown = await ui.until((out) => /token \(generated\): \S+/.test(out), "the generated token");
    const token = /token \(generated\): (\S+)/.exec(shown)?.[1];
    assert.ok(token && token.length >= 20, ui.output());
    const bare = url.replace(/\?token=.*$/, "").replace("0.0.0.0", "127.0.0.1");
    for (const route of ["", "api/overview", "api/config", "assets/app.js"]) {
      const res = await fetch(bare + route);
      assert.equal(res.status, 401, `${route} answered without the token`);
    }
    const wrong = await fetch(`${bare}api/overview`, { headers: { authorization: "Bearer nope" } });
    assert.equal(wrong.status, 401);
    const right = await fetch(`${bare}api/overview`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(right.status, 200);

    // In the browser: refused without it; with ?token= the page loads (the
    // token becomes a cookie and leaves the address bar).
    const { page } = await openPage(t);
    const refused = await page.goto(bare);
    assert.equal(refused.status(), 401);
    await page.goto(`${bare}?token=${encodeURIComponent(token)}`);
    await page.waitForSelector('tr[data-queue="default"]', UI);
    assert.equal(page.url(), bare);
  });
});
