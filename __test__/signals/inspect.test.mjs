// Signals where people look and act (issue 38, item 3): `cairnq signal`
// sends one by id or key; `cairnq get` and the dashboard's task page show the
// signal a task waits for and its signals not consumed yet; the dashboard
// sends one behind the same CSRF, origin and read-only rules as its other
// actions. The CLI runs as a process, the dashboard as `cairnq ui`, the page
// in Chromium.
import assert from "node:assert/strict";
import { describe, test as nodeTest } from "node:test";

import { CairnQ, Worker } from "../../index.mjs";
import { assertFailure, cli, cliJson, cliOk, spawnCli, uiUrl } from "../support/cli-helpers.mjs";
import { SKIP, pageOf, useChromium } from "../support/chromium.mjs";
import { forEachDialect, setupWorker, test } from "../support/dialects.mjs";
import { defer, makeDbPath, manageWorker, waitFor } from "../support/helpers.mjs";
import { waitForStatus } from "../support/worker-helpers.mjs";

/** Resolves once the task waits for a signal. */
function waitingForSignal(client, id) {
  return waitFor(async () => (await client.steps(id)).suspended?.kind === "signal", {
    timeoutMs: 20_000,
    message: `task ${id} never waited for a signal`,
  });
}

/** A task waiting for signal "go" (its worker stopped), and a finished one. */
async function seed(t, dialect) {
  const { client, db, handle, worker } = await setupWorker(t, dialect);
  worker.task("approve", async (ctx) => ctx.waitForSignal("approval", "go", { timeoutMs: 3_600_000 }));
  worker.task("plain", () => "done");
  handle.start();
  const waiting = await client.submit("approve", {}, { key: "order-9" });
  const plain = await client.submit("plain", {});
  await waitingForSignal(client, waiting.id);
  await waitForStatus(client, plain.id, "succeeded");
  await handle.stopAndDrain();
  return { client, db, waiting, plain };
}

/** `cairnq ui <db> --port 0 [...extra]` running: `{ origin, csrf }`. */
async function startUi(t, db, extra = []) {
  const ui = spawnCli(t, ["ui", db, "--port", "0", ...extra]);
  const { origin } = new URL(await uiUrl(ui));
  const { csrf } = await (await fetch(`${origin}/api/config`)).json();
  return { origin, csrf };
}

forEachDialect("signals in the CLI and the dashboard", (dialect) => {
  test("cairnq signal by id and by key; cairnq get shows the wait and the unconsumed signals", async (t) => {
    const { db, waiting, plain } = await seed(t, dialect);
    const before = await cliJson(["get", db, waiting.id]);
    assert.equal(before.suspended.kind, "signal");
    assert.equal(before.suspended.name, "go");
    assert.equal(before.suspended.step, "approval");
    assert.deepEqual(before.signals, []);
    assert.match(await cliOk(["get", db, waiting.id]), /^waiting for signal go \(step approval\) until \d{4}-/m);

    assert.match(await cliOk(["signal", db, waiting.id, "note", '{"by":"ops"}']), /^signal note sent to task_/m);
    assert.deepEqual(await cliJson(["signal", db, "--key", "order-9", "note"]), { sent: true });
    const after = await cliJson(["get", db, waiting.id]);
    assert.deepEqual(
      after.signals.map((s) => [s.name, s.size]),
      [
        ["note", Buffer.byteLength('{"by":"ops"}')],
        ["note", 0],
      ],
    );
    const text = await cliOk(["get", db, waiting.id]);
    assert.match(text, /^unconsumed signals$/m);
    assert.match(text, /^note\s+\d{4}-.*\s+12 B$/m);

    assertFailure(await cli(["signal", db, waiting.id, "go", "{nope"]), 2, /payload is not valid JSON/);
    assertFailure(await cli(["signal", db, waiting.id, ""]), 2, /signal name must be a non-empty string/);
    assertFailure(await cli(["signal", db, waiting.id]), 2, /give <id> <name>/);
    assertFailure(await cli(["signal", db, "task_nope", "go"]), 4, /no task task_nope/);
    assertFailure(
      await cli(["signal", db, plain.id, "go"]),
      7,
      /is succeeded: only queued or running tasks take signals/,
    );
    assert.equal((await cliJson(["get", db, waiting.id])).signals.length, 2, "refused signals wrote nothing");
  });

  test("the dashboard sends a signal behind CSRF, origin and read-only", async (t) => {
    const { client, db, waiting, plain } = await seed(t, dialect);
    const ui = await startUi(t, db);
    const post = (id, body, headers = { "x-csrf-token": ui.csrf }) =>
      fetch(`${ui.origin}/api/tasks/${id}/signal`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify(body),
      });
    assert.equal((await post(waiting.id, { name: "go" }, {})).status, 403, "no CSRF token");
    assert.equal((await post(waiting.id, { name: "go" }, { "x-csrf-token": "guess" })).status, 403);
    assert.equal(
      (await post(waiting.id, { name: "go" }, { "x-csrf-token": ui.csrf, origin: "http://evil.test" })).status,
      403,
    );
    assert.equal((await post(waiting.id, { name: "go", payload: "{nope" })).status, 400);
    assert.equal((await post(waiting.id, { name: "go", extra: 1 })).status, 400);
    assert.equal((await post(waiting.id, { payload: "1" })).status, 400);
    assert.equal((await post(plain.id, { name: "go" })).status, 409);
    assert.equal((await post("task_nope", { name: "go" })).status, 404);
    assert.deepEqual((await client.steps(waiting.id)).signals, [], "a refused action wrote nothing");

    const sent = await post(waiting.id, { name: "note", payload: '{"ok":true}' });
    assert.equal(sent.status, 200);
    assert.deepEqual(await sent.json(), { sent: true });
    const page = await (await fetch(`${ui.origin}/api/tasks/${waiting.id}`)).json();
    assert.deepEqual(
      page.steps.signals.map((s) => s.name),
      ["note"],
    );
    assert.equal(page.steps.suspended.kind, "signal");

    const readOnly = await startUi(t, db, ["--read-only"]);
    const refused = await fetch(`${readOnly.origin}/api/tasks/${waiting.id}/signal`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-csrf-token": readOnly.csrf },
      body: JSON.stringify({ name: "go" }),
    });
    assert.equal(refused.status, 403);
    assert.equal((await client.steps(waiting.id)).signals.length, 1);
  });
});

describe("the signals card in Chromium", { skip: SKIP }, () => {
  const chromium = useChromium();

  nodeTest(
    "a waiting task's page says what it waits for, and sends a signal that wakes it",
    { timeout: 120_000 },
    async (t) => {
      const db = makeDbPath(t);
      const client = CairnQ.sqlite(db);
      defer(t, () => client.close());
      const handle = manageWorker(t, Worker.sqlite(db, { pollIntervalMs: 20 }));
      handle.worker.task("approve", async (ctx) => ctx.waitForSignal("approval", "go"));
      handle.start();
      const task = await client.submit("approve", {});
      await waitingForSignal(client, task.id);

      const ui = spawnCli(t, ["ui", db, "--port", "0"]);
      const url = await uiUrl(ui);
      const { page, errors } = await pageOf(t, chromium());
      page.on("dialog", (dialog) => dialog.accept());
      await page.goto(`${url}#/task/${task.id}`);
      await page.waitForSelector("#signal-wait", { timeout: 30_000 });
      assert.match(await page.locator("#signal-wait").textContent(), /^Waiting for signal go \(step approval\) until /);
      await page.fill("#signal-name", "go");
      await page.fill("#signal-payload", '{"approved":true}');
      await page.click("#signal-send");
      const done = await waitForStatus(client, task.id, "succeeded");
      assert.deepEqual(done.result, { approved: true });
      assert.deepEqual(errors, []);
    },
  );
});
