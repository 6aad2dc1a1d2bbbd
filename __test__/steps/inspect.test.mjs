// A task's steps where people look (issue 27): `cairnq get` and the
// dashboard's task page show each stored step (id, stored at, size) and
// what a queued task is sleeping or waiting for; a task without steps shows
// none. Both read through `client.steps`, on both dialects; the page itself
// in Chromium.
import assert from "node:assert/strict";
import { describe, test as nodeTest } from "node:test";

import { CairnQ, Worker, createDashboard } from "../../index.mjs";
import { defer, makeDbPath, manageWorker, waitFor } from "../support/helpers.mjs";
import { forEachDialect, setupWorker, test } from "../support/dialects.mjs";
import { waitForStatus } from "../support/worker-helpers.mjs";
import { cliJson, cliOk, spawnCli, uiUrl } from "../support/cli-helpers.mjs";
import { SKIP, pageOf, useChromium } from "../support/chromium.mjs";

/** Resolves once the task waits in the queue with the suspension `kind`. */
function suspendedAs(client, id, kind) {
  return waitFor(async () => (await client.steps(id)).suspended?.kind === kind, {
    timeoutMs: 20_000,
    message: `task ${id} never waited for a ${kind}`,
  });
}

/** Tasks in every state a steps view has: sleeping, waiting on a child, stepless. */
async function seed(t, dialect) {
  const { client, db, handle, worker } = await setupWorker(t, dialect);
  worker.task("sleeper", async (ctx) => {
    await ctx.step("fetch", () => ({ text: "grüße" }));
    await ctx.sleep("cool-down", 3_600_000);
  });
  worker.task("parent", async (ctx) => ctx.callChild("index", "nobody.runs.this", {}));
  worker.task("plain", () => "done");
  handle.start();
  const sleeper = await client.submit("sleeper", {});
  const parent = await client.submit("parent", {});
  const plain = await client.submit("plain", {});
  await suspendedAs(client, sleeper.id, "sleep");
  await suspendedAs(client, parent.id, "child");
  await waitForStatus(client, plain.id, "succeeded");
  await handle.stopAndDrain();
  return { client, db, sleeper, parent, plain };
}

forEachDialect("steps in cairnq get and the dashboard", (dialect) => {
  test("cairnq get: the steps table and what the task waits for; --json carries the view", async (t) => {
    const { db, sleeper, parent, plain } = await seed(t, dialect);
    const asleep = await cliJson(["get", db, sleeper.id]);
    // Stored in the same millisecond, steps list by id.
    assert.deepEqual(asleep.steps.map((s) => [s.id, s.kind, s.size]).sort(), [
      ["cool-down", "sleep", 0],
      ["fetch", "step", Buffer.byteLength(JSON.stringify({ text: "grüße" }))],
    ]);
    assert.deepEqual(asleep.suspended, { kind: "sleep", step: "cool-down", untilMs: asleep.run_at_ms });
    const text = await cliOk(["get", db, sleeper.id]);
    assert.match(text, /^STEP\s+KIND\s+STORED\s+SIZE\s+DETAIL$/m);
    const bytes = Buffer.byteLength(JSON.stringify({ text: "grüße" }));
    assert.match(text, new RegExp(`^fetch\\s+step\\s+\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z \\(.*\\)\\s+${bytes} B`, "m"));
    assert.match(text, /^cool-down\s+sleep\s+.*until \d{4}-\d\d-\d\dT[\d:.]+Z \(in 5\dm/m);
    assert.match(text, /^sleeping until \d{4}-.* \(step cool-down\)$/m);

    const waiting = await cliJson(["get", db, parent.id]);
    assert.equal(waiting.suspended.kind, "child");
    assert.equal(waiting.suspended.childStatus, "queued");
    const childText = await cliOk(["get", db, parent.id]);
    assert.match(
      childText,
      new RegExp(`^waiting for child ${waiting.suspended.childId} \\(queued\\), step index; looks again`, "m"),
    );

    const stepless = await cliJson(["get", db, plain.id]);
    assert.deepEqual([stepless.steps, stepless.suspended], [[], null]);
    assert.doesNotMatch(await cliOk(["get", db, plain.id]), /STEP/);
  });

  test("dashboard: the task answer carries the steps view; steps.js is served", async (t) => {
    const { client, sleeper, plain } = await seed(t, dialect);
    const dash = createDashboard({ client, allowedHosts: ["app.test"] });
    defer(t, () => dash.close());
    const get = (path) => dash(new Request(`http://app.test/${path}`));
    const one = await (await get(`api/tasks/${sleeper.id}`)).json();
    const view = await client.steps(sleeper.id);
    // One page of the view (100 steps from ?steps=, 0 by default) and its total.
    assert.deepEqual(one.steps, { ...view, signalsTotal: 0, total: view.steps.length, offset: 0, limit: 100 });
    assert.equal(one.steps.suspended.kind, "sleep");
    assert.deepEqual((await (await get(`api/tasks/${plain.id}`)).json()).steps, {
      steps: [],
      suspended: null,
      signals: [],
      signalsTotal: 0,
      total: 0,
      offset: 0,
      limit: 100,
    });
    const script = await get("assets/steps.js");
    assert.equal(script.status, 200);
    assert.match(script.headers.get("content-type"), /^text\/javascript/);
    assert.match(await (await get("")).text(), /src="assets\/steps\.js"/);
  });
});

describe("the steps card in Chromium", { skip: SKIP }, () => {
  const chromium = useChromium();

  nodeTest("a sleeping task's page lists its steps and says until when it sleeps", { timeout: 120_000 }, async (t) => {
    const db = makeDbPath(t);
    const client = CairnQ.sqlite(db);
    defer(t, () => client.close());
    const handle = manageWorker(t, Worker.sqlite(db, { pollIntervalMs: 20 }));
    handle.worker.task("sleeper", async (ctx) => {
      await ctx.step("fetch", () => "<b>not markup</b>");
      await ctx.sleep("cool-down", 3_600_000);
    });
    handle.start();
    const task = await client.submit("sleeper", {});
    await suspendedAs(client, task.id, "sleep");
    await handle.stopAndDrain();

    const ui = spawnCli(t, ["ui", db, "--port", "0"]);
    const url = await uiUrl(ui);
    const { page, errors } = await pageOf(t, chromium());
    await page.goto(`${url}#/task/${task.id}`);
    await page.waitForSelector("#steps", { timeout: 30_000 });
    const rows = (await page.locator("#steps tbody tr").allTextContents()).sort();
    assert.equal(rows.length, 2);
    assert.match(rows[0], /^cool-down\s*sleep.*until/);
    assert.match(rows[1], /^fetch\s*step.*19 B/);
    assert.equal(await page.locator("#suspended").getAttribute("data-kind"), "sleep");
    assert.match(await page.locator("#suspended").textContent(), /^Sleeping until .* \(step cool-down\)\.$/);
    assert.deepEqual(errors, []);
  });
});
