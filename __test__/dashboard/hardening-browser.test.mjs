// The dashboard's defences that only a browser can show (issue: hardening),
// in Chromium (Debian's package, driven by playwright-core, as in
// browser.test.mjs), on every dialect:
//
// - DNS rebinding: Chromium resolves rebind.test to 127.0.0.1, as it would
//   once an attacker's domain rebinds to the loopback address. A page of
//   that origin is same-origin with a dashboard that answers any Host, and
//   could read its CSRF token and purge. An application embeds the
//   dashboard with default options; it must answer rebind.test with 421.
// - Bidi controls in database values (U+202E…) must not reorder the page.

import assert from "node:assert/strict";
import http from "node:http";
import { describe } from "node:test";

import { createDashboard, toNodeHandler } from "../../index.mjs";
import { defer } from "../support/helpers.mjs";
import { DIALECTS, test } from "../support/dialects.mjs";
import { spawnCli, uiUrl } from "../support/cli-helpers.mjs";
import { SKIP, useChromium } from "../support/chromium.mjs";

const UI = { timeout: 30_000 };
const BIDI = /[\u202A-\u202E\u2066-\u2069]/;

const browser = useChromium(["--host-resolver-rules=MAP rebind.test 127.0.0.1"]);

/** A page in a context of its own (closed when the test ends) that fails the test on a script error. */
async function newPage(t) {
  const context = await browser().newContext();
  defer(t, () => context.close());
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  defer(t, () => assert.deepEqual(errors, [], "script errors on the page"));
  return page;
}

/** An application's http server on 127.0.0.1 with the dashboard under /admin: its port. */
async function embed(t, options) {
  const dash = createDashboard({ ...options, basePath: "/admin" });
  const server = http.createServer(toNodeHandler(dash));
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  defer(t, () => new Promise((resolve) => server.close(resolve)));
  return server.address().port;
}

/**
 * What a script of the page's origin can do: read the CSRF token and purge
 * every finished task. The statuses it got.
 */
function attack(page) {
  return page.evaluate(async () => {
    const config = await fetch("/admin/api/config");
    const csrf = config.ok ? (await config.json()).csrf : "";
    const purge = await fetch("/admin/api/purge", {
      method: "POST",
      headers: { "content-type": "application/json", "x-csrf-token": csrf },
      body: JSON.stringify({ olderThan: "0" }),
    });
    return { config: config.status, purge: purge.status };
  });
}

for (const dialect of DIALECTS) {
  describe(`dashboard hardening in Chromium on ${dialect.name}`, { skip: SKIP || dialect.skip }, () => {
    test("an embedded dashboard with default options answers a rebinding domain with 421, and nothing is purged", async (t) => {
      const { client } = await dialect.open(t);
      for (let i = 0; i < 4; i++) await client.cancel((await client.submit("done", { i })).id);
      const port = await embed(t, { client });

      const page = await newPage(t);
      const refused = await page.goto(`http://rebind.test:${port}/admin/`);
      assert.equal(refused.status(), 421);
      assert.deepEqual(await attack(page), { config: 421, purge: 421 });
      assert.equal((await client.list()).length, 4, "the rebinding page purged tasks");

      // Loopback names are served, on this port as on any.
      for (const origin of [`http://localhost:${port}`, `http://127.0.0.1:${port}`]) {
        const own = await newPage(t);
        assert.equal((await own.goto(`${origin}/admin/`)).status(), 200);
        await own.waitForSelector('tr[data-queue="default"]', UI);
      }
    });

    test("allowedHosts names the hosts an embedded dashboard answers", async (t) => {
      const { client } = await dialect.open(t);
      await client.cancel((await client.submit("done")).id);
      const port = await embed(t, { client, allowedHosts: ["rebind.test"] });
      const page = await newPage(t);
      assert.equal((await page.goto(`http://rebind.test:${port}/admin/`)).status(), 200);
      await page.waitForSelector('tr[data-queue="default"]', UI);
      const local = await newPage(t);
      assert.equal(
        (await local.goto(`http://127.0.0.1:${port}/admin/`)).status(),
        421,
        "a list replaces the loopback default",
      );
      assert.deepEqual(await attack(local), { config: 421, purge: 421 });
      assert.equal((await client.list()).length, 1);
    });

    test("bidi controls in database values are shown, never applied", async (t) => {
      const { client, db } = await dialect.open(t);
      const name = "invoice\u202Efdp.exe";
      const task = await client.submit(
        name,
        { file: "report\u2066txt.exe\u2069", note: "a\u202Db\u202Cc" },
        { queue: "mail\u202Eliam" },
      );
      const ui = spawnCli(t, ["ui", db, "--port", "0"]);
      const url = await uiUrl(ui);
      const page = await newPage(t);

      await page.goto(url);
      await page.waitForSelector("tr[data-queue]", UI);
      assert.equal(await page.locator("tr[data-queue] td:first-child").textContent(), "mail<U+202E>liam");

      await page.goto(`${url}#/tasks`);
      await page.waitForSelector(`tr[data-task-id="${task.id}"]`, UI);
      assert.equal(
        await page.locator(`tr[data-task-id="${task.id}"] td:nth-child(2)`).textContent(),
        "invoice<U+202E>fdp.exe",
      );

      await page.goto(`${url}#/task/${task.id}`);
      await page.waitForSelector("#payload", UI);
      const payload = await page.locator("#payload").textContent();
      assert.match(payload, /report<U\+2066>txt\.exe<U\+2069>/);
      assert.match(payload, /a<U\+202D>b<U\+202C>c/);
      assert.doesNotMatch(await page.locator("main").textContent(), BIDI, "a bidi control reached the page");
      // The database keeps the value as written.
      assert.equal((await client.get(task.id)).name, name);
    });
  });
}
