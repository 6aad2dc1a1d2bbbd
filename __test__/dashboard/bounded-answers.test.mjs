// Every answer of `cairnq ui` is bounded in bytes (issue 34), on each
// dialect, over real HTTP: long texts written by another program are cut,
// lists are paged or capped and say how much there is, and the action
// answers carry bodies as the task page does. Also the headers of
// `/metrics` and the token's spaces. README, "Dashboard"; docs/security.md.

import assert from "node:assert/strict";

import { createDashboard } from "../../index.mjs";
import inspect from "../../lib/admin/inspect.js";
import { defer } from "../support/helpers.mjs";
import { forEachDialect, sqlite, test } from "../support/dialects.mjs";
import { assertFailure, cli, spawnCli, uiUrl } from "../support/cli-helpers.mjs";
import { repeatedText, runForeignSql } from "../support/foreign-sql.mjs";
import { decodedBody, rawRequest, requestText } from "../support/raw-http.mjs";

/** A text another program stored: long, yet within a Postgres index entry once compressed. */
const LONG = 50_000;
/** A body past what a task page shows whole. */
const BIG_BODY = "p".repeat(inspect.BODY_PREVIEW_CHARS * 3);

/** `cairnq ui <db> --port 0` running: `{ origin, port, host, csrf }`. */
async function startUi(t, db) {
  const ui = spawnCli(t, ["ui", db, "--port", "0"]);
  const { origin, port, host } = new URL(await uiUrl(ui));
  const { csrf } = await (await fetch(`${origin}/api/config`)).json();
  return { origin, port: Number(port), host, csrf };
}

/** GET `path` on a raw socket: the status, headers, body and the body's size in bytes. */
async function rawGet(ui, path) {
  const answer = await rawRequest(ui.port, requestText("GET", path, { host: ui.host }), { timeoutMs: 60_000 });
  const body = decodedBody(answer);
  return { ...answer, body, bytes: Buffer.byteLength(body) };
}

/** POST an action as the page does. */
function act(ui, path, body = {}) {
  return fetch(`${ui.origin}/${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-csrf-token": ui.csrf },
    body: JSON.stringify(body),
  });
}

const cut = (length) => new RegExp(`… \\(${length - inspect.TEXT_PREVIEW_CHARS} more characters\\)$`);

forEachDialect("dashboard answers bounded in bytes", (dialect) => {
  test("the task list, task page and search cut names, queues and correlation ids another program made huge", async (t) => {
    const { client, db } = await dialect.open(t);
    const parent = await client.submit("parent");
    for (let i = 0; i < 5; i++)
      await client.submit("job", { i }, { correlationId: `c${i}`, parentId: parent.id, rootId: parent.id });
    const huge = (ch) => repeatedText(db, ch, LONG);
    await runForeignSql(
      db,
      `update cairnq_tasks set name = ${huge("n")}, correlation_id = ${huge("c")}, queue = ${huge("q")}, message = ${huge("m")} where name = 'job'`,
    );
    const ui = await startUi(t, db);
    const list = await rawGet(ui, "/api/tasks?limit=100");
    assert.equal(list.status, 200);
    assert.ok(list.bytes < 100_000, `the task list is ${list.bytes} bytes`);
    const tasks = JSON.parse(list.body).tasks.filter((row) => row.id !== parent.id);
    assert.equal(tasks.length, 5);
    for (const row of tasks) {
      for (const key of ["name", "correlation_id", "queue", "message"]) {
        assert.match(row[key], cut(LONG), key);
        assert.equal(
          row[key].length,
          inspect.TEXT_PREVIEW_CHARS + ` (${LONG - inspect.TEXT_PREVIEW_CHARS} more characters)`.length + 1,
        );
      }
    }
    const page = await rawGet(ui, `/api/tasks/${tasks[0].id}`);
    assert.ok(page.bytes < 100_000, `the task page is ${page.bytes} bytes`);
    assert.match(JSON.parse(page.body).task.name, cut(LONG));
    const parentPage = await rawGet(ui, `/api/tasks/${parent.id}`);
    const spawned = JSON.parse(parentPage.body).spawned;
    assert.equal(spawned.length, 5);
    assert.ok(parentPage.bytes < 100_000, `the parent's page (its spawned list) is ${parentPage.bytes} bytes`);
    const found = await rawGet(ui, `/api/search?q=${tasks[0].id}`);
    assert.ok(found.bytes < 100_000, `the search answer is ${found.bytes} bytes`);
  });

  test("retry and cancel answer with bodies truncated as the task page shows them", async (t) => {
    const { client, db } = await dialect.open(t);
    const payload = { blob: BIG_BODY };
    const queued = await client.submit("big", payload);
    const failed = await client.submit("big", payload);
    await client.cancel(failed.id);
    const ui = await startUi(t, db);
    for (const [path, status] of [
      [`api/tasks/${queued.id}/cancel`, "canceled"],
      [`api/tasks/${failed.id}/retry`, "queued"],
    ]) {
      const answer = await act(ui, path);
      const text = await answer.text();
      assert.equal(answer.status, 200, text);
      assert.ok(text.length < inspect.BODY_PREVIEW_CHARS + 10_000, `${path} answered ${text.length} bytes`);
      const { task } = JSON.parse(text);
      assert.equal(task.status, status);
      assert.equal(task.payload.truncated, true);
      assert.equal(task.payload.chars, JSON.stringify(payload).length);
    }
  });

  test("api/schedules carries no payload or metadata, which the page never shows", async (t) => {
    const { client, db } = await dialect.open(t);
    for (let i = 0; i < 3; i++) {
      await client.schedule(`s${i}`, {
        task: "report",
        cron: "0 2 * * *",
        payload: { blob: BIG_BODY },
        metadata: { note: BIG_BODY },
      });
    }
    const ui = await startUi(t, db);
    const answer = await rawGet(ui, "/api/schedules");
    assert.equal(answer.status, 200);
    assert.ok(answer.bytes < 10_000, `api/schedules is ${answer.bytes} bytes`);
    const { schedules } = JSON.parse(answer.body);
    assert.deepEqual(
      schedules.map((s) => s.name),
      ["s0", "s1", "s2"],
    );
    for (const s of schedules) assert.ok(!("payload" in s) && !("metadata" in s), JSON.stringify(Object.keys(s)));
    const paused = await act(ui, "api/schedules/pause", { name: "s1" });
    const text = await paused.text();
    assert.equal(paused.status, 200, text);
    assert.ok(text.length < 2_000, `the pause answered ${text.length} bytes`);
  });

  test("the steps card is paged: 100 steps an answer, with the total; step ids cut", async (t) => {
    const { client, db } = await dialect.open(t);
    const handle = dialect.makeWorker(t, db);
    handle.worker.task("many", async (ctx) => {
      for (let i = 0; i < 250; i++) await ctx.step(`step-${String(i).padStart(3, "0")}`, () => i);
      return "done";
    });
    handle.start();
    const submitted = await client.submit("many");
    const task = await client.wait(submitted.id, { timeoutMs: 60_000 });
    assert.equal(task.result, "done");
    await runForeignSql(
      db,
      `update cairnq_steps set step_id = ${repeatedText(db, "s", LONG)} where task_id = '${task.id}' and step_id = 'step-000'`,
    );
    const ui = await startUi(t, db);
    const first = await rawGet(ui, `/api/tasks/${task.id}`);
    assert.ok(first.bytes < 40_000, `the task page is ${first.bytes} bytes`);
    const { steps } = JSON.parse(first.body);
    assert.equal(steps.total, 250);
    assert.equal(steps.offset, 0);
    assert.equal(steps.steps.length, 100);
    assert.ok(
      steps.steps.some((s) => cut(LONG).test(s.id)),
      "the long step id arrived whole",
    );
    const last = JSON.parse((await rawGet(ui, `/api/tasks/${task.id}?steps=200`)).body).steps;
    assert.equal(last.total, 250);
    assert.deepEqual(
      last.steps.map((s) => s.id),
      Array.from({ length: 50 }, (_, i) => `step-${200 + i}`),
    );
    assert.equal((await rawGet(ui, `/api/tasks/${task.id}?steps=-1`)).status, 400);
  });

  test("/metrics and the overview stay bounded with many queues; /metrics carries every security header", async (t) => {
    const { client, db } = await dialect.open(t);
    const QUEUES = 1_205;
    await Promise.all(
      Array.from({ length: QUEUES }, (_, i) => client.submit("job", {}, { queue: `q${String(i).padStart(5, "0")}` })),
    );
    const ui = await startUi(t, db);
    const metrics = await rawGet(ui, "/metrics");
    assert.equal(metrics.status, 200);
    for (const [header, value] of Object.entries({
      "content-security-policy": /frame-ancestors 'none'/,
      "x-frame-options": /^DENY$/,
      "referrer-policy": /^no-referrer$/,
      "x-content-type-options": /^nosniff$/,
      "cache-control": /^no-store$/,
      "content-type": /^text\/plain; version=0\.0\.4/,
    })) {
      assert.match(metrics.headers[header] ?? "", value, header);
    }
    const shown = new Set([...metrics.body.matchAll(/^cairnq_tasks\{queue="([^"]+)"/gm)].map((m) => m[1]));
    assert.equal(shown.size, 1_000);
    assert.ok(shown.has("q00999") && !shown.has("q01000"), "not the first queues by name");
    assert.match(metrics.body, /^cairnq_queues_not_shown 205$/m);

    const overview = await rawGet(ui, "/api/overview");
    assert.ok(overview.bytes < 200_000, `the overview is ${overview.bytes} bytes`);
    const body = JSON.parse(overview.body);
    assert.equal(body.queueCount, QUEUES);
    assert.equal(body.queues.length, 200);
    assert.equal(body.queues[0].queue, "q00000");
  });
});

test("a token of spaces is refused at start: --token, CAIRNQ_UI_TOKEN, createDashboard", async (t) => {
  const { client, db } = await sqlite.open(t);
  const spaces = " ".repeat(16);
  const refusal = /must be at least 16 characters besides the spaces around it \(got 0\)$/;
  assertFailure(await cli(["ui", db, "--port", "0", "--token", spaces], { timeoutMs: 20_000 }), 2, refusal);
  assertFailure(
    await cli(["ui", db, "--port", "0", "--host", "0.0.0.0"], {
      env: { CAIRNQ_UI_TOKEN: `\t${spaces}` },
      timeoutMs: 20_000,
    }),
    2,
    refusal,
  );
  assert.throws(() => createDashboard({ client, token: ` ${"x".repeat(15)} ` }), {
    name: "TypeError",
    message: /^createDashboard: token must be at least 16 characters besides the spaces around it \(got 15\)$/,
  });
  const dash = createDashboard({ client, token: ` ${"x".repeat(16)} ` });
  defer(t, () => dash.close());
});
