// cairnq/testing (docs/api.md, "Testing"): a test store whose clock the test
// moves, drain() running the registered handlers until nothing is due now, and
// submitted() reading what was submitted. Every wait in these tests is the
// drain's own condition: none waits out real time.
import assert from "node:assert/strict";
import { test } from "node:test";

import { Worker } from "cairnq";
import { createTestKit, DrainLimitError } from "cairnq/testing";

const START = Date.parse("2026-01-01T00:00:00Z");
const DAY = 86_400_000;

/** A kit closed when the test ends. */
function kit(t, opts = {}) {
  const made = createTestKit({ now: START, ...opts });
  t.after(() => made.close());
  return made;
}

test("the clock stands where it started until advanced, and rows take its time", async (t) => {
  const k = kit(t);
  assert.equal(k.clock.now(), START);
  const task = await k.client.submit("a", {});
  assert.equal(task.created_at_ms, START);
  assert.equal(k.clock.advance(1500), START + 1500);
  assert.equal(k.clock.date().toISOString(), "2026-01-01T00:00:01.500Z");
});

test("drain runs what is due now and returns the tasks it ran, as they are now", async (t) => {
  const k = kit(t);
  k.task("double", async (_ctx, payload) => payload.n * 2);
  const first = await k.client.submit("double", { n: 1 });
  const second = await k.client.submit("double", { n: 2 });
  const later = await k.client.submit("double", { n: 3 }, { runAtDelayMs: 60_000 });
  const drained = await k.drain();
  assert.equal(drained.ran, 2);
  assert.deepEqual(
    drained.tasks.map((task) => [task.id, task.status, task.result]).sort(),
    [
      [first.id, "succeeded", 2],
      [second.id, "succeeded", 4],
    ].sort(),
  );
  assert.equal((await k.client.get(later.id)).status, "queued", "not due on the test clock");
  k.clock.advance(60_000);
  const next = await k.drain();
  assert.deepEqual(
    next.tasks.map((task) => [task.id, task.result]),
    [[later.id, 6]],
  );
  assert.deepEqual(await k.drain(), { ran: 0, tasks: [] }, "nothing left");
});

test("a retry backoff runs out by advance, not in real time", async (t) => {
  const k = kit(t, { worker: { retryBackoffMs: 60_000, retryBackoffMaxMs: 60_000 } });
  let calls = 0;
  k.task("flaky", async () => {
    calls += 1;
    if (calls === 1) throw new Error("first try fails");
    return "ok";
  });
  const task = await k.client.submit("flaky", {}, { maxAttempts: 2 });
  const [failedOnce] = (await k.drain()).tasks;
  assert.equal(failedOnce.status, "queued");
  const backoff = failedOnce.run_at_ms - START;
  assert.ok(backoff >= 30_000 && backoff <= 60_000, `backed off on the test clock (equal jitter): ${backoff}`);
  k.clock.advance(backoff - 1);
  assert.equal((await k.drain()).ran, 0, "still backing off 1 ms before");
  k.clock.advance(1);
  const [retried] = (await k.drain()).tasks;
  assert.deepEqual([retried.id, retried.status, retried.attempt, retried.result], [task.id, "succeeded", 2, "ok"]);
});

test("a ctx.sleep of a day resumes after advance(86_400_000)", async (t) => {
  const k = kit(t);
  const seen = [];
  k.task("reminder", async (ctx) => {
    seen.push("before");
    await ctx.sleep("wait", DAY);
    seen.push("after");
    return "sent";
  });
  const task = await k.client.submit("reminder", {});
  await k.drain();
  assert.deepEqual(seen, ["before"]);
  const slept = await k.client.get(task.id);
  assert.equal(slept.status, "queued");
  assert.equal(slept.run_at_ms, START + DAY);
  k.clock.advance(DAY - 1);
  assert.equal((await k.drain()).ran, 0, "1 ms early");
  k.clock.advance(1);
  await k.drain();
  assert.deepEqual(seen, ["before", "before", "after"], "the handler replays past its finished sleep");
  assert.equal((await k.client.get(task.id)).result, "sent");
});

test("a schedule fires on the moved clock", async (t) => {
  const k = kit(t);
  const fired = [];
  k.task("report", async (ctx) => {
    fired.push(ctx.schedule?.occurrenceAtMs);
  });
  await k.client.schedule("hourly-report", { task: "report", every: 3_600_000 });
  assert.equal((await k.drain()).ran, 0, "the first occurrence is an hour away");
  k.clock.advance(3_600_000);
  assert.equal((await k.drain()).ran, 1);
  k.clock.advance(3_600_000);
  assert.equal((await k.drain()).ran, 1);
  assert.deepEqual(fired, [START + 3_600_000, START + 7_200_000]);
  assert.equal((await k.submitted({ name: "report" })).length, 2);
});

test("a debounced submit is held until its window runs out on the test clock", async (t) => {
  const k = kit(t);
  const payloads = [];
  k.task("index", async (_ctx, payload) => {
    payloads.push(payload.v);
  });
  for (const v of [1, 2, 3]) {
    await k.client.submit("index", { v }, { key: "doc:1", debounceMs: 30_000 });
    k.clock.advance(10_000);
  }
  assert.equal((await k.drain()).ran, 0, "10 s after the last submit of a 30 s window");
  k.clock.advance(19_999);
  assert.equal((await k.drain()).ran, 0, "1 ms early");
  k.clock.advance(1);
  assert.equal((await k.drain()).ran, 1);
  assert.deepEqual(payloads, [3], "only the last of the burst");
});

test("a debounce follow-up is released by the drain once its task ended", async (t) => {
  const k = kit(t);
  const payloads = [];
  /** @type {() => void} */
  let submitWhileRunning = () => {};
  k.task("sync", async (_ctx, payload) => {
    payloads.push(payload.v);
    await submitWhileRunning();
  });
  submitWhileRunning = async () => {
    submitWhileRunning = () => {};
    await k.client.submit("sync", { v: 2 }, { key: "acct", debounceMs: 5_000 });
  };
  await k.client.submit("sync", { v: 1 }, { key: "acct", debounceMs: 5_000 });
  k.clock.advance(5_000);
  await k.drain();
  assert.deepEqual(payloads, [1], "the follow-up waits out its window");
  k.clock.advance(5_000);
  await k.drain();
  assert.deepEqual(payloads, [1, 2]);
});

test("a lease runs out on the test clock: the task is recovered and run again", async (t) => {
  const k = kit(t);
  k.task("job", async () => "done");
  const task = await k.client.submit("job", {}, { maxAttempts: 3 });
  // A process that took the task and died: no heartbeat, no settlement.
  const [held] = await k.client.fetch({ leaseMs: 30_000 });
  assert.equal(held.id, task.id);
  assert.equal((await k.drain()).ran, 0, "the lease still holds");
  k.clock.advance(30_000);
  const [recovered] = (await k.drain()).tasks;
  assert.deepEqual([recovered.id, recovered.status, recovered.attempt], [task.id, "succeeded", 2]);
});

test("children submitted by a handler run in the same drain", async (t) => {
  const k = kit(t);
  k.task("parent", async (ctx) => {
    await ctx.submit("child", { n: 1 });
    await ctx.submit("child", { n: 2 });
  });
  k.task("child", async (_ctx, payload) => payload.n);
  await k.client.submit("parent", {});
  const drained = await k.drain();
  assert.equal(drained.ran, 3);
  assert.deepEqual(
    (await k.submitted({ name: "child", status: "succeeded" })).map((task) => task.result),
    [1, 2],
  );
});

test("advance wakes a worker running on the kit's store: what it made due runs without a poll", async (t) => {
  const k = createTestKit({ now: START });
  // A poll every 10 minutes: only the wake of advance can start the task within the test.
  const worker = new Worker(k.store, ["default"], { pollIntervalMs: 600_000 });
  const ran = [];
  worker.task("later", async (ctx) => void ran.push(ctx.taskId));
  const running = worker.run();
  t.after(async () => {
    worker.stop();
    await running;
    await k.close();
  });
  const task = await k.client.submit("later", {}, { runAtDelayMs: 60_000 });
  const first = await k.client.submit("later", {});
  assert.equal((await k.client.wait(first.id, { timeoutMs: 60_000 })).status, "succeeded");
  // A turn that found nothing due (the drain's own wait): the worker now sleeps its 10 minutes.
  await worker._native.untilQuiet(1_000);
  k.clock.advance(60_000);
  const done = await k.client.wait(task.id, { timeoutMs: 60_000 });
  assert.equal(done.status, "succeeded");
  assert.deepEqual(ran, [first.id, task.id]);
});

test("a handler awaiting a child in process runs it on a second slot", async (t) => {
  const k = kit(t, { worker: { concurrency: 2 } });
  k.task("total", async (ctx, payload) => (await ctx.call("square", { n: payload.n })) + 1);
  k.task("square", async (_ctx, payload) => payload.n * payload.n);
  const task = await k.client.submit("total", { n: 3 });
  const drained = await k.drain();
  assert.equal(drained.ran, 2);
  assert.equal((await k.client.get(task.id)).result, 10);
});

test("submitted reads the store by name, queue and status; assertSubmitted says what it found", async (t) => {
  const k = kit(t);
  await k.client.submit("email.send", { to: "a" });
  await k.client.submit("email.send", { to: "b" }, { queue: "mail" });
  await k.client.submit("sms.send", { to: "c" });
  assert.deepEqual(
    (await k.submitted({ name: "email.send" })).map((task) => task.payload.to),
    ["a", "b"],
  );
  assert.deepEqual(
    (await k.submitted({ name: { name: "email.send" }, queue: "mail" })).map((task) => task.payload.to),
    ["b"],
  );
  assert.equal((await k.submitted({ status: "succeeded" })).length, 0);
  assert.equal((await k.submitted()).length, 3);
  assert.equal((await k.assertSubmitted({ name: "email.send" }, { count: 2 })).length, 2);
  await assert.rejects(k.assertSubmitted({ name: "push.send" }), (err) => {
    assert.equal(err.name, "AssertionError");
    assert.match(err.message, /expected some submitted tasks matching \{"name":"push.send"\}, found 0/);
    assert.match(err.message, /submitted: email\.send \(default, queued\), email\.send \(mail, queued\)/);
    return true;
  });
  await assert.rejects(k.assertSubmitted({ name: "email.send" }, { count: 1 }), /expected 1 submitted tasks/);
});

test("a drain that never runs out stops past max with DrainLimitError", async (t) => {
  const k = kit(t);
  k.task("again", async (ctx) => {
    await ctx.submit("again", {});
  });
  await k.client.submit("again", {});
  await assert.rejects(k.drain({ max: 5 }), (err) => {
    assert.ok(err instanceof DrainLimitError);
    assert.equal(err.max, 5);
    assert.ok(err.tasks > 5);
    assert.match(err.message, /^drain ran \d+ tasks, more than max \(5\)/);
    return true;
  });
  const exactly = kit(t);
  exactly.task("once", async () => {});
  for (let i = 0; i < 3; i++) await exactly.client.submit("once", {});
  assert.equal((await exactly.drain({ max: 3 })).ran, 3, "max runs are allowed");
});

test("bad input is refused by name and changes nothing", async (t) => {
  const k = kit(t);
  k.task("a", async () => {});
  await k.client.submit("a", {});
  assert.throws(() => k.clock.advance(-1), { message: "ms must be a non-negative integer, got -1" });
  assert.throws(() => k.clock.advance(1.5), { message: "ms must be a non-negative integer, got 1.5" });
  assert.throws(() => k.clock.advance(NaN), { message: "ms must be a non-negative integer, got NaN" });
  assert.throws(() => k.clock.advance(/** @type {any} */ ("x")), /ms must be a number, got "x"/);
  assert.equal(k.clock.now(), START);
  await assert.rejects(k.drain({ max: 0 }), { message: "max must be an integer >= 1, got 0" });
  await assert.rejects(k.drain(/** @type {any} */ ({ max: "x" })), /max must be a number, got "x"/);
  await assert.rejects(k.drain(/** @type {any} */ ({ limit: 3 })), /unknown key "limit"/);
  assert.equal((await k.submitted({ status: "queued" })).length, 1, "no drain ran");
  assert.throws(() => createTestKit({ now: -5 }), /testClockMs must be a valid Date or epoch milliseconds/);
  assert.throws(() => k.task(async () => {}), /the handler is anonymous/, "refused as registered");
  assert.throws(() => k.task("b", { batch: 0 }, async () => {}), { message: "batch must be an integer >= 1, got 0" });
  assert.throws(() => createTestKit({ worker: { maxRunMs: 0 } }), { message: "maxRunMs must be > 0, got 0" });
});

test("two kits keep their own clocks", async (t) => {
  const a = kit(t);
  const b = kit(t);
  a.clock.advance(DAY);
  assert.equal(a.clock.now(), START + DAY);
  assert.equal(b.clock.now(), START);
  const task = await b.client.submit("x", {}, { runAtDelayMs: 1_000 });
  assert.equal(task.run_at_ms, START + 1_000);
});
