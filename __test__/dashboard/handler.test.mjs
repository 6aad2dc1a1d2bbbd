// The dashboard handler embedded in an application, on every dialect: the
// fetch shape (Request → Response) called directly, and Node's http server
// through toNodeHandler, both under a base path. Safety checks that need no
// browser: CSRF, same-origin, host allow-list, token, security headers.

import assert from "node:assert/strict";
import http from "node:http";

import { createDashboard, toNodeHandler } from "../../index.mjs";
import { defer, submitAndFail } from "../support/helpers.mjs";
import { forEachDialect, test } from "../support/dialects.mjs";

/** A Node http server on 127.0.0.1 serving `handler`; resolves with its origin. */
async function listen(t, handler) {
  const server = http.createServer(toNodeHandler(handler));
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  defer(t, () => new Promise((resolve) => server.close(resolve)));
  return `http://127.0.0.1:${server.address().port}`;
}

forEachDialect("dashboard handler", (dialect) => {
  test("fetch shape under a base path: page, assets, overview, list, task, search", async (t) => {
    const { client } = await dialect.open(t);
    const failed = await submitAndFail(client, "charge", { key: "order-1" });
    await client.submit("mail", {}, { queue: "mail" });
    const dash = createDashboard({ client, basePath: "/admin/queue", allowedHosts: ["app.test"] });
    defer(t, () => dash.close());
    const get = (path) => dash(new Request(`http://app.test/admin/queue/${path}`));

    const page = await get("");
    assert.equal(page.status, 200);
    assert.match(page.headers.get("content-type"), /^text\/html/);
    assert.match(page.headers.get("content-security-policy"), /default-src 'none'; script-src 'self'/);
    assert.equal(page.headers.get("x-content-type-options"), "nosniff");
    const html = await page.text();
    assert.match(html, /src="assets\/app\.js"/);
    assert.doesNotMatch(html, /https?:\/\//, "the page names no other origin");
    for (const asset of ["assets/app.js", "assets/app.css", "assets/favicon.svg"])
      assert.equal((await get(asset)).status, 200, asset);
    assert.equal((await get("assets/../handler.js")).status, 404);
    const bare = await dash(new Request("http://app.test/admin/queue"));
    assert.equal(bare.status, 303);
    assert.equal(bare.headers.get("location"), "/admin/queue/");
    assert.equal((await dash(new Request("http://app.test/elsewhere/"))).status, 404);

    const overview = await (await get("api/overview")).json();
    assert.deepEqual(
      overview.queues.map((q) => [q.queue, q.counts]),
      [
        ["default", { queued: 0, running: 0, succeeded: 0, failed: 1, canceled: 0 }],
        ["mail", { queued: 1, running: 0, succeeded: 0, failed: 0, canceled: 0 }],
      ],
    );
    const list = await (await get("api/tasks?status=failed&limit=10")).json();
    assert.deepEqual(
      list.tasks.map((x) => x.id),
      [failed.id],
    );
    assert.equal(list.hasMore, false);
    const paged = await (await get("api/tasks?limit=1")).json();
    assert.equal(paged.tasks.length, 1);
    assert.equal(paged.hasMore, true);
    assert.equal((await get("api/tasks?status=done")).status, 400);
    const one = await (await get(`api/tasks/${failed.id}`)).json();
    assert.equal(one.task.error.code, "boom");
    assert.deepEqual(one.spawned, []);
    assert.equal((await get("api/tasks/task_nope")).status, 404);
    assert.equal((await (await get("api/search?q=order-1")).json()).task.id, failed.id);
    assert.equal((await (await get(`api/search?q=${failed.id}`)).json()).by, "id");
    assert.equal((await (await get("api/search?q=nothing")).json()).task, null);
    assert.equal((await (await get("api/purge-preview?olderThan=0")).json()).count, 1);
    assert.equal((await get("api/purge-preview?olderThan=7x")).status, 400);
  });

  test("Node http adapter: actions need POST, the CSRF token, the same origin and JSON", async (t) => {
    const { client } = await dialect.open(t);
    const failed = await submitAndFail(client, "charge");
    const dash = createDashboard({ client, basePath: "/q" });
    const origin = await listen(t, dash);
    const { csrf, readOnly } = await (await fetch(`${origin}/q/api/config`)).json();
    assert.equal(readOnly, false);
    const post = (path, headers, body = "{}") => fetch(`${origin}/q/${path}`, { method: "POST", headers, body });
    const json = { "content-type": "application/json" };

    assert.equal((await fetch(`${origin}/q/api/tasks/${failed.id}/retry`)).status, 404, "GET does not act");
    assert.equal((await post(`api/tasks/${failed.id}/retry`, json)).status, 403, "no CSRF token");
    assert.equal((await post(`api/tasks/${failed.id}/retry`, { ...json, "x-csrf-token": "guess" })).status, 403);
    assert.equal(
      (await post(`api/tasks/${failed.id}/retry`, { ...json, "x-csrf-token": csrf, origin: "http://evil.test" }))
        .status,
      403,
    );
    assert.equal(
      (await post(`api/tasks/${failed.id}/retry`, { "content-type": "text/plain", "x-csrf-token": csrf })).status,
      415,
    );
    assert.equal((await client.get(failed.id)).status, "failed", "a refused action changed the task");

    const retried = await post(`api/tasks/${failed.id}/retry`, { ...json, "x-csrf-token": csrf, origin });
    assert.equal(retried.status, 200);
    assert.equal((await retried.json()).task.status, "queued");
    const again = await post(`api/tasks/${failed.id}/retry`, { ...json, "x-csrf-token": csrf });
    assert.equal(again.status, 409);
    assert.match((await again.json()).error, /is queued: only failed or canceled tasks can be retried/);
    const canceled = await post(`api/tasks/${failed.id}/cancel`, { ...json, "x-csrf-token": csrf });
    assert.equal((await canceled.json()).task.status, "canceled");
    const purged = await post("api/purge", { ...json, "x-csrf-token": csrf }, JSON.stringify({ olderThan: "1h" }));
    assert.deepEqual(await purged.json(), { count: 0 });
    assert.equal((await post("api/purge", { ...json, "x-csrf-token": csrf }, "[1]")).status, 400);
  });

  test("token, host allow-list and read-only, through the fetch shape", async (t) => {
    const { client } = await dialect.open(t);
    const task = await client.submit("job");
    const dash = createDashboard({ client, token: "s3cret-token-0123", allowedHosts: ["dash.test"], readOnly: true });
    const call = (url, init) => dash(new Request(url, init));
    assert.equal((await call("http://other.test/api/overview")).status, 421);
    assert.equal((await call("http://dash.test/api/overview")).status, 401);
    assert.equal(
      (await call("http://dash.test/api/overview", { headers: { authorization: "Bearer wrong" } })).status,
      401,
    );
    assert.equal(
      (await call("http://dash.test/api/overview", { headers: { authorization: "Bearer s3cret-token-0123" } })).status,
      200,
    );
    const traded = await call("http://dash.test/?token=s3cret-token-0123");
    assert.equal(traded.status, 303);
    assert.equal(traded.headers.get("location"), "/");
    const cookie = traded.headers.get("set-cookie");
    assert.match(cookie, /HttpOnly; SameSite=Strict/);
    const withCookie = await call("http://dash.test/api/config", { headers: { cookie: cookie.split(";")[0] } });
    const config = await withCookie.json();
    assert.equal(config.readOnly, true);
    const refused = await call(`http://dash.test/api/tasks/${task.id}/cancel`, {
      method: "POST",
      headers: { cookie: cookie.split(";")[0], "x-csrf-token": config.csrf, "content-type": "application/json" },
      body: "{}",
    });
    assert.equal(refused.status, 403);
    assert.equal((await client.get(task.id)).status, "queued");
  });

  test("from a database path: refuses one that is not there, opens one that is", async (t) => {
    const missing = await dialect.createDatabase(t);
    const none = createDashboard({ db: missing });
    defer(t, () => none.close());
    const answer = await none(new Request("http://localhost/api/overview"));
    assert.equal(answer.status, 503);
    assert.match((await answer.json()).error, /not a cairnq database|no cairnq database/);

    const { db, client } = await dialect.open(t);
    await client.submit("job", {}, { queue: "mine" });
    const owned = createDashboard({ db });
    defer(t, () => owned.close());
    const overview = await (await owned(new Request("http://localhost/api/overview"))).json();
    assert.deepEqual(
      overview.queues.map((q) => q.queue),
      ["mine"],
    );
  });
});
