// Events across processes (issue 47, point 1): listeners run as processes of
// their own, are killed and resumed from their last position, consume
// slowly; every event of every task arrives once, in the task's own order,
// progress updates included. On both dialects.
import assert from "node:assert/strict";

import { forEachDialect, test } from "../support/dialects.mjs";
import { CairnQError, createMetrics } from "../../index.mjs";
import { spawnFixture, waitFor } from "../support/helpers.mjs";
import { waitAllTerminal } from "../support/worker-helpers.mjs";

const PROGRESS_STEPS = 5;
/** What a task of `step` goes through, in order. */
const STEP_HISTORY = ["queued", "started", ...Array(PROGRESS_STEPS).fill("progress"), "succeeded"];

/** `fn` throws a plain Error (not a CairnQError) whose message matches `pattern`. */
function assertRefused(fn, pattern) {
  assert.throws(fn, (err) => {
    assert.equal(err.constructor, Error, `expected a plain Error, got ${err?.name}`);
    assert.ok(!(err instanceof CairnQError));
    assert.match(err.message, pattern);
    return true;
  });
}

/** The task events of listener processes, in the order each printed them. */
function taskEvents(...procs) {
  return procs.flatMap((proc) => proc.events().filter((e) => e.event === "task"));
}

/** Each task's kinds in arrival order. */
function historyByTask(events) {
  const byTask = new Map();
  for (const e of events) {
    if (!byTask.has(e.taskId)) byTask.set(e.taskId, []);
    byTask.get(e.taskId).push(e.kind);
  }
  return byTask;
}

forEachDialect("events across processes", (dialect) => {
  /** A worker running `step`: PROGRESS_STEPS progress updates, the last one just before it returns. */
  async function startStepWorker(t, db) {
    const handle = dialect.makeWorker(t, db, { concurrency: 8 });
    handle.worker.task("step", async (ctx, payload) => {
      for (let i = 1; i <= PROGRESS_STEPS; i += 1) await ctx.progress(i / PROGRESS_STEPS, `step ${i}`);
      return { n: payload.n };
    });
    handle.start();
    return handle;
  }

  function listen(t, db, config) {
    return spawnFixture(t, "events-listener.mjs", { dialect: dialect.name, db, ...config });
  }

  test("a killed listener resumes from its position: nothing lost, nothing twice, each task in order", async (t) => {
    const { client, db } = await dialect.open(t);
    const first = listen(t, db, {});
    await first.waitForEvent((e) => e.event === "ready", { what: "ready" });
    await startStepWorker(t, db);
    const N = 30;
    const tasks = await client.submitMany(Array.from({ length: N }, (_, n) => ({ task: "step", payload: { n } })));

    await waitFor(() => taskEvents(first).length >= 40, { timeoutMs: 30_000, message: "first listener" });
    first.kill("SIGKILL");
    await first.waitExit();
    const before = taskEvents(first);
    const second = listen(t, db, { options: { after: before.at(-1).position } });
    await waitAllTerminal(
      client,
      tasks.map((task) => task.id),
    );
    const total = N * STEP_HISTORY.length;
    await waitFor(() => before.length + taskEvents(second).length >= total, {
      timeoutMs: 30_000,
      message: "second listener",
    });

    const events = [...before, ...taskEvents(second)];
    assert.equal(events.length, total);
    const positions = new Set(events.map((e) => e.position));
    assert.equal(positions.size, total, "no event twice");
    const histories = historyByTask(events);
    assert.equal(histories.size, N);
    for (const task of tasks) assert.deepEqual(histories.get(task.id), STEP_HISTORY, task.id);
    const progress = events.filter((e) => e.kind === "progress" && e.taskId === tasks[0].id);
    assert.deepEqual(
      progress.map((e) => [e.progress, e.message]),
      Array.from({ length: PROGRESS_STEPS }, (_, i) => [(i + 1) / PROGRESS_STEPS, `step ${i + 1}`]),
    );
    const done = events.find((e) => e.kind === "succeeded" && e.taskId === tasks[3].id);
    assert.deepEqual(done.result, { n: 3 });
  });

  test("a slow listener still gets every event, filters applied", async (t) => {
    const { client, db } = await dialect.open(t);
    const slow = listen(t, db, { options: { name: "kept" }, delayMs: 2 });
    await slow.waitForEvent((e) => e.event === "ready", { what: "ready" });
    const N = 300;
    const kept = await client.submitMany(Array.from({ length: N }, () => ({ task: "kept", payload: {} })));
    await client.submitMany(Array.from({ length: N }, () => ({ task: "other", payload: {} })));
    for (const task of kept) await client.cancel(task.id);
    await waitFor(() => taskEvents(slow).length >= 2 * N, { timeoutMs: 45_000, message: "slow listener" });
    const events = taskEvents(slow);
    assert.equal(events.length, 2 * N);
    assert.ok(events.every((e) => e.name === "kept"));
    for (const [id, kinds] of historyByTask(events)) assert.deepEqual(kinds, ["queued", "canceled"], id);
  });

  test("a subscription keeps its process alive until close() ends the iteration", async (t) => {
    const { client, db } = await dialect.open(t);
    const listener = listen(t, db, { closeAfter: 2 });
    await listener.waitForEvent((e) => e.event === "ready", { what: "ready" });
    // Nothing else keeps the listener up: it is still there to see these.
    const task = await client.submit("x", {});
    await client.cancel(task.id);
    const closed = await listener.waitForEvent((e) => e.event === "closed", { what: "closed" });
    assert.equal(closed.seen, 2);
    assert.deepEqual(await listener.waitExit(), { code: 0, signal: null });
  });

  test("the emitter form delivers the same events; close() ends it", async (t) => {
    const { client } = await dialect.open(t);
    const subscription = client.events();
    await subscription.ready();
    const seen = [];
    subscription.on("event", (e) => seen.push(e.kind));
    const closed = new Promise((resolve) => subscription.once("close", resolve));
    const task = await client.submit("x", {}, { runAtDelayMs: 60_000 });
    await client.cancel(task.id);
    await waitFor(() => seen.length === 2, { message: "emitted events" });
    assert.deepEqual(seen, ["queued", "canceled"]);
    subscription.close();
    await closed;
    assert.equal(subscription.closed, true);
  });

  test("a wait for a signal is suspended, the signal's wake resumed", async (t) => {
    const { client, db } = await dialect.open(t);
    const subscription = client.events();
    await subscription.ready();
    const handle = dialect.makeWorker(t, db);
    handle.worker.task("approve", async (ctx) => ({ got: await ctx.waitForSignal("w", "go") }));
    handle.start();
    const task = await client.submit("approve", {});
    const seen = [];
    for await (const e of subscription) {
      if (e.kind === "gap" || e.taskId !== task.id) continue;
      seen.push(e);
      if (e.kind === "suspended") await client.signal(task.id, "go", 7);
      if (e.kind === "succeeded" || seen.length === 8) break;
    }
    assert.deepEqual(
      seen.map((e) => [e.kind, e.attempt]),
      [
        ["queued", 0],
        ["started", 1],
        ["suspended", 0],
        ["resumed", 0],
        ["started", 1],
        ["succeeded", 1],
      ],
    );
    assert.ok(seen[2].runAt > seen[2].at, "a suspension carries its wake");
    assert.deepEqual(seen[5].result, { got: 7 });
  });

  test("the metrics count open subscriptions and the events they delivered", async (t) => {
    const { client } = await dialect.open(t);
    const metrics = createMetrics({ client });
    const read = async (name) => Number(new RegExp(`^${name} (\\d+)$`, "m").exec(await metrics.render())[1]);
    assert.equal(await read("cairnq_event_listeners"), 0);
    const subscription = client.events();
    await subscription.ready();
    assert.equal(await read("cairnq_event_listeners"), 1);
    const task = await client.submit("x", {});
    await client.cancel(task.id);
    assert.equal((await subscription.next()).value.kind, "queued");
    assert.equal((await subscription.next()).value.kind, "canceled");
    assert.equal(await read("cairnq_events_delivered_total"), 2);
    subscription.close();
    assert.equal(await read("cairnq_event_listeners"), 0);
  });

  test("bad options are refused naming the field; an unknown queue is fine", async (t) => {
    const { client } = await dialect.open(t);
    assertRefused(() => client.events({ queue: 5 }), /^queue must be a string, got 5$/);
    assertRefused(() => client.events({ name: "" }), /^name must be a non-empty string/);
    assertRefused(() => client.events({ after: 12 }), /^after must be a string, got 12$/);
    assertRefused(() => client.events({ after: "soon" }), /^after must be an event position/);
    assertRefused(() => client.events({ pollMs: 0 }), /^pollMs must be >= 1, got 0$/);
    assertRefused(() => client.events({ queues: ["a"] }), /^unknown key "queues" in events options/);
    const subscription = client.events({ queue: "nobody-uses-this" });
    await subscription.ready();
    subscription.close();
    assert.deepEqual(await subscription.next(), { done: true, value: undefined });
  });
});
