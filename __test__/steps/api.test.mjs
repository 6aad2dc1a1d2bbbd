// Durable steps (docs/api.md, "Durable steps"): ctx.step runs its fn once and
// replays the stored result; ctx.sleep and ctx.callChild send the task back
// to the queue without a slot or an attempt; cancel ends a suspended task;
// misuse is refused with the field named and nothing stored.
import assert from "node:assert/strict";

import { TaskCanceled, TaskFailed } from "../../index.mjs";
import { forEachDialect, setupWorker, test } from "../support/dialects.mjs";
import { waitFor } from "../support/helpers.mjs";
import { waitForStatus } from "../support/worker-helpers.mjs";

/** The task once a step has sent it back to the queue (it has steps, and is queued). */
async function suspended(client, id) {
  return waitFor(
    async () => {
      const { steps } = await client.steps(id);
      const row = await client.get(id);
      return steps.length > 0 && row.status === "queued" ? row : null;
    },
    { timeoutMs: 20_000, message: `task ${id} was never suspended` },
  );
}

forEachDialect("durable steps", (dialect) => {
  test("a step runs its fn once: the retry after a failure replays the stored result", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect, { retryBackoffMs: 10 });
    const runs = [];
    worker.task("pipeline", async (ctx) => {
      const fetched = await ctx.step("fetch", () => {
        runs.push("fetch");
        return { at: new Date(0), words: ["a", "b"], skipped: undefined };
      });
      const nothing = await ctx.step("nothing", () => {
        runs.push("nothing");
      });
      if (ctx.attempt === 1) throw new Error("after the steps");
      return { fetched, nothing };
    });
    handle.start();
    const task = await client.submit("pipeline", {});
    const done = await waitForStatus(client, task.id, "succeeded");
    assert.equal(done.attempt, 2);
    // What the step hands back is its JSON, the first time as on replay.
    assert.deepEqual(done.result, { fetched: { at: "1970-01-01T00:00:00.000Z", words: ["a", "b"] }, nothing: null });
    assert.deepEqual(runs, ["fetch", "nothing"]);
    const { steps, suspended: waiting } = await client.steps(task.id);
    assert.equal(waiting, null);
    assert.deepEqual(
      steps.map((s) => [s.id, s.kind, s.size]),
      [
        ["fetch", "step", Buffer.byteLength(JSON.stringify({ at: "1970-01-01T00:00:00.000Z", words: ["a", "b"] }))],
        ["nothing", "step", 0],
      ],
    );
    assert.ok(steps.every((s) => typeof s.storedAtMs === "number" && s.wakeAtMs === null && s.childId === null));
  });

  test("ctx.sleep frees its slot: another task runs meanwhile, and it resumes on the same attempt", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect);
    const log = [];
    worker.task("sleeper", async (ctx, { ms }) => {
      log.push(`${ctx.taskId} started`);
      await ctx.step("before", () => log.push(`${ctx.taskId} before`));
      await ctx.sleep("nap", ms);
      log.push(`${ctx.taskId} resumed`);
      return ctx.attempt;
    });
    worker.task("quick", () => "quick");
    handle.start({ concurrency: 1 });
    const long = await client.submit("sleeper", { ms: 600_000 });
    const asleep = await suspended(client, long.id);
    assert.equal(asleep.attempt, 0, "the suspension gave its attempt back");
    assert.equal(asleep.worker_id, null);
    const view = await client.steps(long.id);
    assert.deepEqual(view.suspended, { kind: "sleep", step: "nap", untilMs: asleep.run_at_ms });
    assert.equal(view.steps.find((s) => s.id === "nap").wakeAtMs, asleep.run_at_ms);
    // The only slot is free: a task submitted after the sleeper runs.
    const quick = await client.submit("quick", {});
    assert.equal((await waitForStatus(client, quick.id, "succeeded")).result, "quick");

    const short = await client.submit("sleeper", { ms: 200 });
    const woke = await waitForStatus(client, short.id, "succeeded");
    assert.equal(woke.attempt, 1);
    assert.equal(woke.result, 1);
    assert.deepEqual(
      log.filter((line) => line.startsWith(short.id)).map((line) => line.slice(short.id.length + 1)),
      ["started", "before", "started", "resumed"],
    );

    // Canceled while it sleeps: it ends at once and never runs again.
    const canceled = await client.cancel(long.id);
    assert.equal(canceled.status, "canceled");
    await handle.stopAndDrain();
    assert.deepEqual(
      log.filter((line) => line.startsWith(long.id)),
      [`${long.id} started`, `${long.id} before`],
    );
    assert.equal((await client.get(long.id)).status, "canceled");
  });

  test("ctx.sleepUntil: a time already past goes on at once; a future one suspends until then", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect);
    worker.task("until", async (ctx, { at }) => {
      await ctx.sleepUntil("past", new Date(0));
      await ctx.sleepUntil("then", at);
      return "woke";
    });
    handle.start();
    // Far enough ahead that the first run comes before it, however slow the start.
    const at = Date.now() + 2000;
    const task = await client.submit("until", { at });
    const done = await waitForStatus(client, task.id, "succeeded");
    assert.equal(done.result, "woke");
    assert.ok(done.completed_at_ms >= at - dialect.clockSlackMs);
    const { steps } = await client.steps(task.id);
    assert.deepEqual(
      steps.map((s) => [s.id, s.kind, s.wakeAtMs]),
      [["then", "sleep", at]],
    );
  });

  test("ctx.callChild waits without a slot and resumes with the child's result, TaskFailed or TaskCanceled", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect);
    const parentRuns = [];
    worker.task("parent", async (ctx, { mode }) => {
      parentRuns.push(ctx.taskId);
      try {
        const opts = { priority: 3, maxAttempts: mode === "fail" ? 1 : 3, pollMs: 120_000 };
        const got = await ctx.callChild("kid", "child", { mode }, opts);
        return { got };
      } catch (err) {
        if (err instanceof TaskFailed) return { failed: err.error };
        if (err instanceof TaskCanceled) return { canceled: err.taskId };
        throw err;
      }
    });
    worker.task("child", async (ctx, { mode }) => {
      if (mode === "fail") throw Object.assign(new Error("child broke"), { name: "Broken" });
      return { echo: mode, parent: ctx.metadata };
    });
    handle.start({ concurrency: 1 });

    const ok = await client.submit("parent", { mode: "ok" }, { correlationId: "corr-1" });
    const done = await waitForStatus(client, ok.id, "succeeded");
    assert.deepEqual(done.result, { got: { echo: "ok", parent: {} } });
    assert.equal(done.attempt, 1, "the wait used no attempt");
    const { steps } = await client.steps(ok.id);
    assert.deepEqual(
      steps.map((s) => [s.id, s.kind, s.childStatus]),
      [["kid", "child", "succeeded"]],
    );
    const child = await client.get(steps[0].childId);
    assert.equal(child.parent_id, ok.id);
    assert.equal(child.root_id, ok.id);
    assert.equal(child.correlation_id, "corr-1");
    assert.equal(child.priority, 3);
    assert.equal((await client.getByKey(`cairnq:step:${ok.id}:kid`)).id, child.id);

    const bad = await client.submit("parent", { mode: "fail" });
    const failed = await waitForStatus(client, bad.id, "succeeded");
    assert.equal(failed.result.failed.message, "child broke");
    assert.equal(failed.result.failed.type, "Broken");

    worker.task("unrun-parent", async (ctx) => ({ got: await ctx.callChild("kid", "never.run", {}) }));
    const orphaned = await client.submit("unrun-parent", {});
    const waiting = await suspended(client, orphaned.id);
    const view = await client.steps(orphaned.id);
    assert.equal(view.suspended.kind, "child");
    assert.equal(view.suspended.childStatus, "queued");
    assert.equal(view.suspended.recheckAtMs, waiting.run_at_ms);
    // The child's cancel wakes its parent, which resumes with TaskCanceled:
    // the default recheck (30 s) is not what brings it back. (A handler that
    // let it through would end the parent failed: see children.test.mjs.)
    worker.task("unrun-parent", async (ctx) => {
      try {
        return await ctx.callChild("kid", "never.run", {});
      } catch (err) {
        return { name: err.name, taskId: err.taskId };
      }
    });
    await client.cancel(view.suspended.childId);
    const resumed = await waitForStatus(client, orphaned.id, "succeeded", { timeoutMs: 20_000 });
    assert.deepEqual(resumed.result, { name: "TaskCanceled", taskId: view.suspended.childId });
    assert.equal(parentRuns.length, 4);
  });

  test("a waiting parent canceled ends canceled without running again", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect);
    let runs = 0;
    worker.task("parent", async (ctx) => {
      runs += 1;
      return ctx.callChild("kid", "nobody.runs.this", {});
    });
    handle.start();
    const task = await client.submit("parent", {});
    await suspended(client, task.id);
    const canceled = await client.cancel(task.id);
    assert.equal(canceled.status, "canceled");
    const { steps, suspended: waiting } = await client.steps(task.id);
    assert.equal(waiting, null, "a canceled task waits for nothing");
    // The child lives on as a task of its own; its end leaves the parent canceled.
    await client.cancel(steps[0].childId);
    await handle.stopAndDrain();
    assert.equal(runs, 1);
    assert.equal((await client.get(task.id)).status, "canceled");
  });

  test("misuse is refused naming the field, and nothing is stored", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect, { retryBackoffMs: 10 });
    const refusals = {};
    const refusal = async (what, fn) => {
      try {
        await fn();
        refusals[what] = "no error";
      } catch (err) {
        refusals[what] = `${err.name}: ${err.message}`;
      }
    };
    worker.task("misuse", async (ctx) => {
      await ctx.step("once", () => 1);
      await refusal("reused id", () => ctx.step("once", () => 2));
      await refusal("empty id", () => ctx.step("", () => 2));
      await refusal("id not a string", () => ctx.step(7, () => 2));
      await refusal("fn not a function", () => ctx.step("fn", 5));
      await refusal("BigInt result", () => ctx.step("big", () => ({ n: 10n })));
      await refusal("NaN result", () => ctx.step("nan", () => [NaN]));
      await refusal("negative ms", () => ctx.sleep("neg", -1));
      await refusal("NaN ms", () => ctx.sleep("nan-ms", NaN));
      await refusal("ms not a number", () => ctx.sleep("str-ms", "100"));
      await refusal("invalid date", () => ctx.sleepUntil("bad-date", new Date("nope")));
      await refusal("child with a key", () => ctx.callChild("keyed", "x", {}, { key: "k" }));
      await refusal("child pollMs", () => ctx.callChild("polled", "x", {}, { pollMs: 0 }));
      return "done";
    });
    // A later run whose handler changed the kind of a stored step.
    worker.task("changed", async (ctx) => {
      if (ctx.attempt === 1) {
        await ctx.step("x", () => 1);
        throw new Error("then the handler changes");
      }
      await refusal("kind changed", () => ctx.sleep("x", 10));
      return "done";
    });
    worker.task("batched", { batch: 2 }, async (contexts) => {
      await refusal("sleep in a batch", () => contexts[0].sleep("nap", 10));
      return null;
    });
    handle.start();
    const task = await client.submit("misuse", {});
    const batched = await client.submit("batched", {});
    const changed = await client.submit("changed", {});
    assert.equal((await waitForStatus(client, task.id, "succeeded")).result, "done");
    assert.equal((await waitForStatus(client, changed.id, "succeeded")).result, "done");
    await waitForStatus(client, batched.id, "succeeded");
    assert.deepEqual(refusals, {
      "reused id": 'Error: step id "once" is used twice in one run of the task; step ids must be unique within a task',
      "empty id": 'Error: step id must be a non-empty string, got ""',
      "id not a string": "Error: step id must be a non-empty string, got 7",
      "fn not a function": "Error: fn must be a function, got 5",
      "BigInt result":
        'SerializationError: step "big" result is not JSON-serializable: Do not know how to serialize a BigInt',
      "NaN result":
        'SerializationError: step "nan" result is not JSON-serializable: non-finite number NaN is not JSON-serializable',
      "negative ms": "Error: ms must be >= 0, got -1",
      "NaN ms": "Error: ms must be a finite number of milliseconds, at most 1e15 (about 31,700 years), got NaN",
      "ms not a number": "Error: ms must be a number of milliseconds, got 100",
      "invalid date": "Error: date must be a valid Date or epoch milliseconds, got NaN",
      "child with a key": "Error: ctx.callChild cannot take key: the child's key is its parent's and its step's",
      "child pollMs":
        "Error: pollMs must be a finite number of milliseconds >= 1, at most 1e15 (about 31,700 years), got 0",
      "kind changed": `Error: step "x" of task ${changed.id} was stored by ctx.step, not ctx.sleep; a step id keeps its kind`,
      "sleep in a batch":
        "Error: ctx.sleep cannot suspend a task of a batch call: its handler runs for the whole batch",
    });
    const { steps } = await client.steps(task.id);
    assert.deepEqual(
      steps.map((s) => s.id),
      ["once"],
    );
    assert.equal((await client.list({ name: "x" })).length, 0, "no child was submitted");
  });

  test("client.steps of a task without steps, of no task; purge takes a task's steps with it", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect);
    worker.task("stepped", async (ctx) => ctx.step("only", () => "x"));
    worker.task("plain", () => "y");
    handle.start();
    const stepped = await client.submit("stepped", {});
    const plain = await client.submit("plain", {});
    await waitForStatus(client, stepped.id, "succeeded");
    await waitForStatus(client, plain.id, "succeeded");
    assert.deepEqual(await client.steps(plain.id), { steps: [], suspended: null, signals: [] });
    assert.deepEqual(await client.steps("task_nope"), { steps: [], suspended: null, signals: [] });
    assert.deepEqual(await client.steps(42), { steps: [], suspended: null, signals: [] });
    assert.equal((await client.steps(stepped.id)).steps.length, 1);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const purged = await client.purge({ olderThanMs: 0 });
    assert.deepEqual(purged.sort(), [stepped.id, plain.id].sort());
    assert.deepEqual(await client.steps(stepped.id), { steps: [], suspended: null, signals: [] });
  });
});
