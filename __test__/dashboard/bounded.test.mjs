// The dashboard's reads are bounded in bytes as in rows, on every dialect:
// task lists carry no bodies, a task page gets each body truncated past
// inspect.BODY_PREVIEW_CHARS, and the purge preview is one bounded count in
// the store (README, "Dashboard").

import assert from "node:assert/strict";

import { createDashboard } from "../../index.mjs";
import inspect from "../../lib/admin/inspect.js";
import { defer, submitAndSucceed, waitUntilPast } from "../support/helpers.mjs";
import { forEachDialect, test } from "../support/dialects.mjs";

forEachDialect("dashboard bounded reads", (dialect) => {
  test("lists carry no bodies; a task page truncates a body past the documented size", async (t) => {
    const { client } = await dialect.open(t);
    const huge = { blob: "x".repeat(inspect.BODY_PREVIEW_CHARS + 1000) };
    const small = await client.submit("small", { a: 1 });
    const big = await client.submit("big", huge);
    const dash = createDashboard({ client });
    defer(t, () => dash.close());
    const get = (path) => dash(new Request(`http://127.0.0.1/${path}`));

    const body = await (await get("api/tasks?limit=10")).text();
    assert.ok(body.length < 4_000, `the list shipped ${body.length} bytes`);
    const list = JSON.parse(body);
    assert.deepEqual(
      list.tasks.map((x) => x.id),
      [big.id, small.id],
    );
    for (const task of list.tasks)
      for (const key of ["payload", "result", "error", "metadata"]) assert.ok(!(key in task), key);

    const page = await (await get(`api/tasks/${big.id}`)).json();
    const text = JSON.stringify(huge);
    assert.deepEqual(page.task.payload, {
      truncated: true,
      chars: text.length,
      preview: text.slice(0, inspect.BODY_PREVIEW_CHARS),
    });
    assert.deepEqual(
      (await (await get(`api/tasks/${small.id}`)).json()).task.payload,
      { a: 1 },
      "a small body is whole",
    );
    assert.equal((await (await get(`api/search?q=${big.id}`)).json()).task.payload.truncated, true);
  });

  test("the purge preview is the store's bounded count, its limit included", async (t) => {
    const { client } = await dialect.open(t);
    const done = [];
    for (let i = 0; i < 3; i++) done.push(await submitAndSucceed(client, "ok"));
    await waitUntilPast(Math.max(...done.map((d) => d.completed_at_ms)) + dialect.clockSlackMs);
    const dash = createDashboard({ client });
    defer(t, () => dash.close());
    const preview = async (query) =>
      (await (await dash(new Request(`http://127.0.0.1/api/purge-preview?${query}`))).json()).count;
    assert.equal(await preview("olderThan=0"), 3);
    assert.equal(await preview("olderThan=0&limit=2"), 2);
    assert.equal(await preview("olderThan=1h"), 0);
    assert.equal((await client.list()).length, 3, "a preview deleted something");
  });
});
