// Signals (docs/api.md, "Signals"): ctx.waitForSignal consumes the oldest
// signal of its name (one sent before the wait counts), suspends the task
// without a slot or an attempt until one comes, resolves null once its
// timeout passes, and every later run replays what it resolved with.
// client.signal / signalByKey answer true, false or null as cancel answers;
// bad input is refused naming the field, and nothing is written.
import assert from "node:assert/strict";

import { SerializationError } from "../../index.mjs";
import { forEachDialect, setupWorker, test } from "../support/dialects.mjs";
import { waitFor } from "../support/helpers.mjs";
import { waitForStatus } from "../support/worker-helpers.mjs";

/** The task once it waits for a signal (queued, its wait shown). */
async function waiting(client, id) {
  return waitFor(
    async () => {
      const { suspended } = await client.steps(id);
      const row = await client.get(id);
      return suspended?.kind === "signal" && row.status === "queued" ? { row, suspended } : null;
    },
    { timeoutMs: 20_000, message: `task ${id} never waited for a signal` },
  );
}

forEachDialect("signals", (dialect) => {
  test("signals sent before the waits are consumed in the order sent, one per wait", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect);
    worker.task("approve", async (ctx) => {
      const got = [];
      for (let i = 0; i < 3; i += 1) got.push(await ctx.waitForSignal(`w${i}`, "go"));
      return got;
    });
    const task = await client.submit("approve", {});
    assert.equal(await client.signal(task.id, "go", { n: 1 }), true);
    assert.equal(await client.signal(task.id, "other", "left alone"), true);
    assert.equal(await client.signal(task.id, "go"), true);
    assert.equal(await client.signal(task.id, "go", [3]), true);
    handle.start();
    const done = await waitForStatus(client, task.id, "succeeded");
    assert.deepEqual(done.result, [{ n: 1 }, null, [3]]);
    assert.equal(done.attempt, 1);
    const { signals } = await client.steps(task.id);
    assert.deepEqual(
      signals.map((s) => [s.name, s.size]),
      [["other", 12]],
    );
    assert.equal(await client.signal(task.id, "go"), false, "a finished task takes no signal");
    assert.equal(await client.signal("task_nope", "go"), null);
    assert.equal(await client.signal(42, "go"), null);
  });

  test("a waiting task holds no slot and a signal wakes it at once, by id or by key", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect);
    const runs = [];
    worker.task("approve", async (ctx) => {
      runs.push(ctx.attempt);
      const first = await ctx.waitForSignal("first", "go", { timeoutMs: 600_000 });
      const second = await ctx.waitForSignal("second", "go", { timeoutMs: 600_000 });
      return { first, second };
    });
    worker.task("quick", async () => "quick");
    handle.start({ concurrency: 1 });
    const task = await client.submit("approve", {}, { key: "order-7" });
    const { suspended } = await waiting(client, task.id);
    assert.equal(suspended.step, "first");
    assert.equal(suspended.name, "go");
    const other = await client.submit("quick", {});
    await waitForStatus(client, other.id, "succeeded");

    assert.equal(await client.signal(task.id, "go", "a"), true);
    await waitFor(async () => (await client.steps(task.id)).suspended?.step === "second", {
      timeoutMs: 20_000,
      message: "the signal never woke the task",
    });
    assert.equal(await client.signalByKey("order-7", "go", "b"), true);
    const done = await waitForStatus(client, task.id, "succeeded");
    assert.deepEqual(done.result, { first: "a", second: "b" });
    assert.equal(done.attempt, 1, "waits use no attempt");
    assert.deepEqual(runs, [1, 1, 1]);
    assert.equal(await client.signalByKey("order-7", "go"), false);
    assert.equal(await client.signalByKey("no-such-key", "go"), null);
  });

  test("a wait whose timeout passes resolves null, and a later run replays the null", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect, { retryBackoffMs: 10 });
    worker.task("flaky", async (ctx) => {
      const got = await ctx.waitForSignal("w", "go", { timeoutMs: 100 });
      if (ctx.attempt === 1) {
        assert.equal(await client.signal(ctx.taskId, "go", "late"), true);
        throw new Error("after the wait");
      }
      return { got };
    });
    handle.start();
    const task = await client.submit("flaky", {});
    const done = await waitForStatus(client, task.id, "succeeded");
    assert.deepEqual(done.result, { got: null });
    assert.equal(done.attempt, 2);
    const { signals } = await client.steps(task.id);
    assert.deepEqual(
      signals.map((s) => s.name),
      ["go"],
      "the late signal is not consumed by the replayed wait",
    );
  });

  test("bad input is refused naming the field, and nothing is written", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect);
    const task = await client.submit("idle", {});
    await assert.rejects(client.signal(task.id, "", 1), { message: 'signal name must be a non-empty string, got ""' });
    await assert.rejects(client.signal(task.id, 5, 1), { message: "signal name must be a non-empty string, got 5" });
    await assert.rejects(client.signal(task.id, "go", 10n), SerializationError);
    const cyclic = {};
    cyclic.self = cyclic;
    await assert.rejects(client.signal(task.id, "go", cyclic), SerializationError);
    assert.deepEqual((await client.steps(task.id)).signals, []);

    const thrown = [];
    worker.task("misuse", async (ctx) => {
      for (const [id, opts] of [
        ["negative", { timeoutMs: -1 }],
        ["text", { timeoutMs: "5" }],
        ["nan", { timeoutMs: NaN }],
        ["unknown", { timeout: 5 }],
      ]) {
        try {
          await ctx.waitForSignal(id, "go", opts);
        } catch (err) {
          thrown.push(err.message);
        }
      }
      return "done";
    });
    handle.start();
    const misuse = await client.submit("misuse", {});
    await waitForStatus(client, misuse.id, "succeeded");
    assert.deepEqual(thrown, [
      "timeoutMs must be >= 0, got -1",
      'timeoutMs must be a number, got "5"',
      "timeoutMs must be a finite number of milliseconds, at most 1e15 (about 31,700 years), got NaN",
      'unknown key "timeout" in waitForSignal options (known: timeoutMs)',
    ]);
  });
});
