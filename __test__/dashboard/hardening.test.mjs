// The dashboard under hostile and careless clients (issue: hardening), over
// real HTTP: `cairnq ui` run as a process and an application embedding
// toNodeHandler in this process, on every dialect where the store is touched.
// Malformed requests are written byte for byte on a socket (support/raw-http.mjs).
// What needs a browser (DNS rebinding, bidi text) is in
// hardening-browser.test.mjs.

import assert from "node:assert/strict";
import fs from "node:fs";
import http from "node:http";
import { describe, test as nodeTest } from "node:test";

import { createDashboard, toNodeHandler } from "../../index.mjs";
import { defer, submitAndFail, waitFor } from "../support/helpers.mjs";
import { forEachDialect, sqlite, test } from "../support/dialects.mjs";
import { assertFailure, cli, spawnCli, uiUrl } from "../support/cli-helpers.mjs";
import { rawRequest, requestText } from "../support/raw-http.mjs";

const TOKEN = "hardening-token-0123456789";
const AUTH = { authorization: `Bearer ${TOKEN}` };

/** `cairnq ui <db> --port 0 ...extra` running: `{ ui, url, origin, port, host }`. */
async function startUi(t, db, extra = [], opts = {}) {
  const ui = spawnCli(t, ["ui", db, "--port", "0", ...extra], opts);
  const url = await uiUrl(ui);
  const parsed = new URL(url);
  return { ui, url, origin: parsed.origin, port: Number(parsed.port), host: parsed.host };
}

/** An application's own http server on 127.0.0.1 around `handler`: `{ port, host, origin }`. */
async function embed(t, handler) {
  const server = http.createServer(toNodeHandler(handler));
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  defer(t, () => new Promise((resolve) => server.close(resolve)));
  const { port } = server.address();
  return { port, host: `127.0.0.1:${port}`, origin: `http://127.0.0.1:${port}` };
}

/** Requests no server may die of, each with the 4xx it gets. */
function malformed(host) {
  return [
    ["TRACE", requestText("TRACE", "/", { host }), 405],
    ["DELETE", requestText("DELETE", "/api/tasks", { host }), 405],
    ["a request-target in absolute form", requestText("GET", "http://x/", { host }), 400],
    ["an absolute form naming the dashboard itself", requestText("GET", `http://${host}/api/overview`, { host }), 400],
    ["the asterisk form", requestText("OPTIONS", "*", { host }), 400],
    ["Host: a b", requestText("GET", "/", { host: "a b" }), 400],
    ["Host: a@b", requestText("GET", "/api/config", { host: "a@b" }), 400],
    ["Host: x/y", requestText("GET", "/", { host: "x/y" }), 400],
    ["no Host (HTTP/1.0)", "GET / HTTP/1.0\r\n\r\n", 400],
    [
      "a body over 16 KiB",
      requestText("POST", "/api/purge", {
        host,
        headers: { "content-type": "application/json" },
        body: "x".repeat(20_000),
      }),
      413,
    ],
  ];
}

/** Send each malformed request; each must get its 4xx. */
async function assertRefused(port, requests) {
  for (const [what, raw, status] of requests) {
    const answer = await rawRequest(port, raw);
    assert.equal(answer.status, status, `${what}: answered ${JSON.stringify(answer.raw.slice(0, 200))}`);
  }
}

/** Cancel `n` fresh tasks: finished just now, so a purge of those older than 1h finds none. */
async function canceledTasks(client, n) {
  for (let i = 0; i < n; i++) await client.cancel((await client.submit("done", { i })).id);
}

forEachDialect("dashboard hardening", (dialect) => {
  test("cairnq ui, plain and with --token --read-only: every malformed request gets a 4xx and the server keeps serving", async (t) => {
    const { client, db } = await dialect.open(t);
    await client.submit("job", {}, { queue: "kept" });
    for (const extra of [[], ["--token", TOKEN, "--read-only"]]) {
      const { ui, port, host, origin } = await startUi(t, db, extra);
      await assertRefused(port, [
        ...malformed(host),
        ["CONNECT", `CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: ${host}\r\n\r\n`, 405],
      ]);
      const overview = await fetch(`${origin}/api/overview`, { headers: AUTH });
      assert.equal(overview.status, 200, `cairnq ui ${extra.join(" ")} stopped serving; stderr: ${ui.errors()}`);
      assert.deepEqual(
        (await overview.json()).queues.map((q) => q.queue),
        ["kept"],
      );
      assert.equal(ui.child.exitCode, null);
      assert.equal(ui.errors(), "");
    }
  });

  test("an application embedding toNodeHandler: malformed requests get a 4xx and its server keeps serving", async (t) => {
    const { client } = await dialect.open(t);
    await client.submit("job", {}, { queue: "kept" });
    const dash = createDashboard({ client, basePath: "/admin" });
    const { port, host, origin } = await embed(t, dash);
    await assertRefused(port, malformed(host));
    const overview = await fetch(`${origin}/admin/api/overview`);
    assert.equal(overview.status, 200);
    assert.deepEqual(
      (await overview.json()).queues.map((q) => q.queue),
      ["kept"],
    );
  });

  test("an action body over 16 KiB is 413, one the action does not take is 400: nothing is purged, canceled or retried", async (t) => {
    const { client, db } = await dialect.open(t);
    await canceledTasks(client, 4);
    const live = await client.submit("live", {}, { queue: "later", runAtDelayMs: 3_600_000 });
    const failed = await submitAndFail(client, "charge");
    const { port, host, origin } = await startUi(t, db);
    const { csrf } = await (await fetch(`${origin}/api/config`)).json();
    const action = { "content-type": "application/json", "x-csrf-token": csrf };
    const post = (path, body) => fetch(`${origin}/${path}`, { method: "POST", headers: action, body });
    assert.deepEqual(await (await fetch(`${origin}/api/purge-preview?olderThan=1h`)).json(), { count: 0 });

    // Over the limit: with a Content-Length, and chunked (no length known up front).
    const padded = JSON.stringify({ olderThan: "1h", queue: "q".repeat(17 * 1024) });
    const declared = await rawRequest(port, requestText("POST", "/api/purge", { host, headers: action, body: padded }));
    assert.equal(declared.status, 413, declared.raw);
    const chunk = "x".repeat(4096);
    const chunked = await rawRequest(
      port,
      requestText("POST", "/api/purge", { host, headers: { ...action, "transfer-encoding": "chunked" } }) +
        `${`${chunk.length.toString(16)}\r\n${chunk}\r\n`.repeat(5)}0\r\n\r\n`,
    );
    assert.equal(chunked.status, 413, chunked.raw);

    for (const [body, error] of [
      [JSON.stringify({ olderthan: "1h" }), /unknown field in the request body: "olderthan"/],
      [JSON.stringify({ olderThan: 3600 }), /olderThan must be a string/],
      [JSON.stringify({ olderThan: "1h", limit: true }), /limit must be a string or number/],
      ["", /not JSON/],
      ['{"olderThan": "1h"', /not JSON/],
      ["[1]", /must be a JSON object/],
      ["null", /must be a JSON object/],
    ]) {
      const answer = await post("api/purge", body);
      assert.equal(answer.status, 400, `purge with ${body}`);
      assert.match((await answer.json()).error, error);
    }
    const cancel = await post(`api/tasks/${live.id}/cancel`, JSON.stringify({ force: true }));
    assert.equal(cancel.status, 400);
    assert.match((await cancel.json()).error, /unknown field in the request body: "force" \(this action takes none\)/);
    const retry = await post(`api/tasks/${failed.id}/retry`, JSON.stringify({ resetAttempt: "yes" }));
    assert.equal(retry.status, 400);
    assert.match((await retry.json()).error, /resetAttempt must be a boolean/);

    assert.equal((await client.list({ limit: 100 })).length, 6, "a refused action deleted tasks");
    assert.equal((await client.get(live.id)).status, "queued");
    assert.equal((await client.get(failed.id)).status, "failed");
    // The same actions, well formed, do what they say.
    assert.deepEqual(await (await post("api/purge", JSON.stringify({ olderThan: "1h" }))).json(), { count: 0 });
    assert.equal((await (await post(`api/tasks/${live.id}/cancel`, "{}")).json()).task.status, "canceled");
    assert.equal(
      (await (await post(`api/tasks/${failed.id}/retry`, JSON.stringify({ resetAttempt: true }))).json()).task.attempt,
      0,
    );
    assert.deepEqual(await (await post("api/purge", JSON.stringify({ olderThan: "0", status: "canceled" }))).json(), {
      count: 5,
    });
  });

  test("the fetch shape refuses an oversized body with 413 and a malformed task id with 400", async (t) => {
    const { client } = await dialect.open(t);
    await canceledTasks(client, 2);
    const dash = createDashboard({ client });
    defer(t, () => dash.close());
    const { csrf } = await (await dash(new Request("http://localhost/api/config"))).json();
    const headers = { "content-type": "application/json", "x-csrf-token": csrf };
    const big = JSON.stringify({ olderThan: "0", name: "n".repeat(17 * 1024) });
    const stream = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(big));
        controller.close();
      },
    });
    for (const body of [big, stream]) {
      const answer = await dash(
        new Request("http://localhost/api/purge", { method: "POST", headers, body, duplex: "half" }),
      );
      assert.equal(answer.status, 413);
      assert.match((await answer.json()).error, /request body too large \(at most 16384 bytes\)/);
    }
    assert.equal((await client.list()).length, 2);
    const bad = await dash(new Request("http://localhost/api/tasks/%E0%A4%A"));
    assert.equal(bad.status, 400);
    assert.match((await bad.json()).error, /malformed percent-escape in the task id/);
  });
});

describe("dashboard hardening: cairnq ui's options and answers", () => {
  /** A SQLite database holding one queued task. */
  async function database(t) {
    const { client, db } = await sqlite.open(t);
    const task = await client.submit("job", {}, { queue: "kept" });
    return { client, db, task };
  }

  test("an empty or short token is refused at start: --token, CAIRNQ_UI_TOKEN, createDashboard", async (t) => {
    const { client, db } = await database(t);
    for (const [args, env, pattern] of [
      [["--host", "0.0.0.0", "--token", ""], {}, /^error: --token must be at least 16 characters \(got 0\)$/],
      [["--token", "short"], {}, /^error: --token must be at least 16 characters \(got 5\)$/],
      [
        ["--host", "0.0.0.0"],
        { CAIRNQ_UI_TOKEN: "" },
        /^error: CAIRNQ_UI_TOKEN must be at least 16 characters \(got 0\)$/,
      ],
    ]) {
      // The server never starts: the command ends at once with a usage error.
      assertFailure(await cli(["ui", db, "--port", "0", ...args], { env, timeoutMs: 20_000 }), 2, pattern);
    }
    for (const token of ["", "fifteen-chars-x"]) {
      assert.throws(() => createDashboard({ client, token }), {
        name: "TypeError",
        message: /^createDashboard: token must be at least 16 characters/,
      });
    }
  });

  test("CAIRNQ_UI_TOKEN guards the dashboard without the token on the command line", async (t) => {
    const { db } = await database(t);
    const { ui, origin } = await startUi(t, db, [], { env: { CAIRNQ_UI_TOKEN: TOKEN } });
    const cmdline = fs.readFileSync(`/proc/${ui.child.pid}/cmdline`, "utf8");
    assert.doesNotMatch(cmdline, new RegExp(TOKEN), "the token is visible in the process list");
    assert.equal((await fetch(`${origin}/api/overview`)).status, 401);
    assert.equal(
      (await fetch(`${origin}/api/overview`, { headers: { authorization: "Bearer wrong-token-0123456789" } })).status,
      401,
    );
    assert.equal((await fetch(`${origin}/api/overview`, { headers: AUTH })).status, 200);
    // --token wins over the environment.
    const other = await startUi(t, db, ["--token", `${TOKEN}-flag`], { env: { CAIRNQ_UI_TOKEN: TOKEN } });
    assert.equal((await fetch(`${other.origin}/api/overview`, { headers: AUTH })).status, 401);
    assert.equal(
      (await fetch(`${other.origin}/api/overview`, { headers: { authorization: `Bearer ${TOKEN}-flag` } })).status,
      200,
    );
  });

  test("the token exchange redirects on-site, whatever path it came on", async (t) => {
    const { db } = await database(t);
    const { port, host } = await startUi(t, db, ["--token", TOKEN]);
    for (const target of ["//evil.example/", "/\\evil.example/", "///evil.example/x", "/\\/evil.example/"]) {
      const answer = await rawRequest(port, requestText("GET", `${target}?token=${TOKEN}&keep=1`, { host }));
      assert.equal(answer.status, 303, `${target}: ${answer.raw}`);
      const location = answer.headers.location;
      assert.match(location, /^\/[^/\\]/, `${target} redirected to ${location}`);
      assert.equal(new URL(location, `http://${host}`).host, host, `${target} redirected off-site to ${location}`);
      assert.match(location, /\?keep=1$/);
    }
  });

  test("a malformed percent-escape in a task id is 400, in a read and in an action", async (t) => {
    const { db, task } = await database(t);
    const { origin } = await startUi(t, db);
    const { csrf } = await (await fetch(`${origin}/api/config`)).json();
    const read = await fetch(`${origin}/api/tasks/%E0%A4%A`);
    assert.equal(read.status, 400);
    assert.match((await read.json()).error, /malformed percent-escape in the task id: %E0%A4%A/);
    const act = await fetch(`${origin}/api/tasks/%zz${task.id}/cancel`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-csrf-token": csrf },
      body: "{}",
    });
    assert.equal(act.status, 400);
    assert.equal((await fetch(`${origin}/api/tasks/${encodeURIComponent(task.id)}`)).status, 200);
  });

  test("a schedule action takes a JSON object holding the schedule's name, or does nothing", async (t) => {
    const { client, db } = await database(t);
    await client.schedule("nightly", { task: "report", cron: "0 2 * * *" });
    const { origin } = await startUi(t, db);
    const { csrf } = await (await fetch(`${origin}/api/config`)).json();
    const pause = (body) =>
      fetch(`${origin}/api/schedules/pause`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-csrf-token": csrf },
        body,
      });
    for (const body of ["", "[]", "{}", '{"name":1}', '{"name":"nightly","paused":true}']) {
      assert.equal((await pause(body)).status, 400, `body ${JSON.stringify(body)}`);
    }
    assert.equal((await client.schedules())[0].paused, false, "a refused action paused the schedule");
    assert.equal((await pause('{"name":"nightly"}')).status, 200);
    assert.equal((await client.schedules())[0].paused, true);
  });

  test("a base path with a space is served", async (t) => {
    const { db, task } = await database(t);
    const spaced = await startUi(t, db, ["--base-path", "/my queue"]);
    assert.match(spaced.url, /^http:\/\/127\.0\.0\.1:\d+\/my%20queue\/$/);
    const page = await fetch(spaced.url);
    assert.equal(page.status, 200);
    assert.match(page.headers.get("content-type"), /^text\/html/);
    assert.equal((await (await fetch(`${spaced.url}api/tasks/${task.id}`)).json()).task.id, task.id);
    const bare = await fetch(spaced.url.slice(0, -1), { redirect: "manual" });
    assert.equal(bare.status, 303);
    assert.equal(bare.headers.get("location"), "/my%20queue/");
  });

  test("--host 127.0.0.2 (loopback, not 127.0.0.1) is served", async (t) => {
    const { db } = await database(t);
    const other = await startUi(t, db, ["--host", "127.0.0.2"]);
    assert.match(other.url, /^http:\/\/127\.0\.0\.2:\d+\/$/);
    assert.equal((await fetch(other.url)).status, 200);
    assert.equal((await fetch(`${other.url}api/overview`)).status, 200);
  });

  nodeTest("requests whose headers or body arrive too slowly are cut off", { timeout: 120_000 }, async (t) => {
    const { db } = await database(t);
    const { port, host } = await startUi(t, db);
    const started = Date.now();
    // Headers never finished; a body that stops after its first byte.
    const slowHeaders = rawRequest(port, `GET /api/overview HTTP/1.1\r\nHost: ${host}\r\n`, { timeoutMs: 60_000 });
    const slowBody = rawRequest(
      port,
      `POST /api/purge HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`,
      { timeoutMs: 60_000 },
    );
    for (const [what, pending] of [
      ["headers", slowHeaders],
      ["body", slowBody],
    ]) {
      const answer = await pending;
      assert.ok(answer.closed, `a request whose ${what} never finished was held for ${Date.now() - started} ms`);
      assert.equal(answer.status, 408, `${what}: ${answer.raw}`);
    }
    // Still serving.
    await waitFor(async () => (await fetch(`http://${host}/api/overview`)).status === 200, { timeoutMs: 10_000 });
  });
});
