// SQLite has no push channel, so cairnq watches the database's WAL file: a
// commit by another process ends an idle worker's sleep and a waiting call's
// poll early. These tests use sleeps far longer than their deadlines, so only
// a wake can make them pass.
import assert from "node:assert/strict";
import { test } from "node:test";
import { openClient, spawnFixture } from "./support/helpers.mjs";

test("a worker in another process with a 10 s poll picks up a call at once", async (t) => {
  const { client, dbPath } = openClient(t);
  await client.connect();
  const worker = spawnFixture(t, "serve-worker.mjs", { db: dbPath, handler: "ok", pollIntervalMs: 10_000 });
  await worker.waitForEvent((e) => e.event === "serving", { what: "serving" });
  const started = Date.now();
  for (let i = 0; i < 3; i++) {
    await client.call("job", { i }, { pollMs: 10_000, waitTimeoutMs: 30_000 });
  }
  const elapsed = Date.now() - started;
  // The worker sleeps 10 s after each empty poll: without wakes the second
  // and third calls alone would take 20 s.
  assert.ok(elapsed < 9_000, `three calls took ${elapsed} ms`);
  worker.kill("SIGTERM");
  await worker.waitExit();
});

test("a wait on a task another connection finishes ends before its poll interval", async (t) => {
  const { client, dbPath } = openClient(t);
  const other = openClient(t, {}, dbPath).client;
  const task = await client.submit("job", {});
  const waiting = client.wait(task.id, { pollMs: 20_000, timeoutMs: 60_000 });
  const [claimed] = await other.store.claim({ queues: ["default"], workerId: "w" });
  await other.store.complete({ taskId: claimed.id, workerId: "w", result: 7 });
  const started = Date.now();
  const done = await waiting;
  assert.equal(done.result, 7);
  assert.ok(Date.now() - started < 15_000, "the wait sat out its 20 s poll");
});
