// call (docs/api.md, "Waits and call"): submit and wait for the result,
// TaskFailed, TaskCanceled, TaskTimeout — on every dialect. The worker side is
// driven by hand.

import assert from "node:assert/strict";

import { CairnQError, TaskCanceled, TaskFailed, TaskTimeout, defineTask } from "../../index.mjs";
import { ENVELOPE, assertPlainError, claimTask, rejectionOf, waitFor } from "../support/helpers.mjs";
import { forEachDialect, sqlite, test } from "../support/dialects.mjs";

// ---------------------------------------------------------------------------
forEachDialect("call", (dialect) => {
  /** Complete the first task named `name` as soon as it appears. */
  async function actAsWorker(client, name, finish) {
    const task = await waitFor(async () => (await client.list({ name, status: "queued" }))[0], {
      timeoutMs: 10_000,
    });
    await claimTask(client.store, task);
    return finish(task);
  }

  test("resolves with the task's result", async (t) => {
    const { client } = await dialect.open(t);
    const calling = client.call("math.add", { a: 2, b: 3 }, { pollMs: 20 });
    await actAsWorker(client, "math.add", (task) =>
      client.store.complete({ taskId: task.id, workerId: "w1", result: { sum: task.payload.a + task.payload.b } }),
    );
    assert.deepEqual(await calling, { sum: 5 });
  });

  test("resolves with null when the task succeeded without a result", async (t) => {
    const { client } = await dialect.open(t);
    const def = defineTask("noop");
    const calling = client.call(def, undefined, { pollMs: 20 });
    const task = await actAsWorker(client, "noop", async (task) => {
      await client.store.complete({ taskId: task.id, workerId: "w1", result: undefined });
      return task;
    });
    assert.equal(await calling, null);
    assert.deepEqual(task.payload, {}, "an omitted payload is stored as {}");
  });

  test("rejects with TaskFailed carrying the envelope's fields", async (t) => {
    const { client } = await dialect.open(t);
    const calling = client.call("validate", {}, { pollMs: 20 });
    calling.catch(() => {}); // it may reject before rejectionOf below looks: not unhandled
    await actAsWorker(client, "validate", (task) =>
      client.store.fail({ taskId: task.id, workerId: "w1", error: ENVELOPE, retryable: false }),
    );
    const err = await rejectionOf(calling);
    assert.ok(err instanceof TaskFailed, String(err));
    assert.ok(err instanceof CairnQError);
    assert.equal(err.name, "TaskFailed");
    assert.equal(err.message, ENVELOPE.message);
    assert.equal(err.type, ENVELOPE.type);
    assert.equal(err.code, ENVELOPE.code);
    assert.equal(err.retryable, false);
    assert.deepEqual(err.details, ENVELOPE.details);
    assert.deepEqual(err.error, ENVELOPE);
  });

  test("rejects with TaskCanceled when the task is canceled", async (t) => {
    const { client } = await dialect.open(t);
    const calling = client.call("cancel.me", {}, { pollMs: 20 });
    calling.catch(() => {}); // it may reject before rejectionOf below looks: not unhandled
    const task = await waitFor(async () => (await client.list({ name: "cancel.me" }))[0]);
    await client.cancel(task.id);
    const err = await rejectionOf(calling);
    assert.ok(err instanceof TaskCanceled, String(err));
    assert.equal(err.taskId, task.id);
    assert.equal(err.message, `task ${task.id} was canceled`);
  });

  test("with no worker it times out: never claimed, names the handler, task stays queued", async (t) => {
    const { client } = await dialect.open(t);
    const err = await rejectionOf(client.call("unhandled", {}, { waitTimeoutMs: 300 }));
    assert.ok(err instanceof TaskTimeout, String(err));
    assert.ok(err.message.includes("never claimed by a worker"), err.message);
    assert.ok(err.message.includes("'unhandled'"), err.message);
    assert.ok(err.message.includes("did not finish within 300ms"), err.message);
    assert.equal(err.task.status, "queued");
    assert.equal(err.key, null);
    assert.equal((await client.get(err.taskId)).status, "queued", "the task keeps going");

    await claimTask(client.store, err.task);
    await client.store.complete({ taskId: err.taskId, workerId: "w1", result: "eventually" });
    const resumed = await client.wait(err.taskId);
    assert.equal(resumed.status, "succeeded");
    assert.equal(resumed.result, "eventually");
  });

  test("a keyed call that times out still reports key null", async (t) => {
    const { client } = await dialect.open(t);
    const err = await rejectionOf(client.call("keyed", {}, { key: "call-key", waitTimeoutMs: 0 }));
    assert.ok(err instanceof TaskTimeout);
    assert.equal(err.key, null);
    assert.ok(err.message.startsWith(`task ${err.taskId} `));
  });

  // The call's keyed submit must land before the claim below: true on SQLite,
  // where this client's writes run in order; on Postgres the call's submit can
  // come after the existing task finished, and then reuse makes a new task.
  if (dialect === sqlite) {
    test("submit options pass through, and a reuse hit waits on the existing task", async (t) => {
      const { client } = await dialect.open(t);
      const existing = await client.submit("dedupe", { first: true }, { key: "once", queue: "q" });
      const calling = client.call("dedupe", { second: true }, { key: "once", queue: "q", pollMs: 20 });
      await claimTask(client.store, existing);
      await client.store.complete({ taskId: existing.id, workerId: "w1", result: "from the first" });
      assert.equal(await calling, "from the first");
      assert.equal((await client.list()).length, 1);
    });
  }

  test("submit validation errors surface from call", async (t) => {
    const { client } = await dialect.open(t);
    assertPlainError(
      await rejectionOf(client.call("job", {}, { maxAttempts: 0, waitTimeoutMs: 100 })),
      "maxAttempts must be >= 1, got 0",
    );
    assert.deepEqual(await client.stats(), {});
  });

  test("call: the result, TaskFailed, TaskCanceled — with a worker on the same database", async (t) => {
    const { client, db } = await dialect.open(t);
    const worker = dialect.makeWorker(t, db, { retryBackoffMs: 0 });
    worker.worker.task("double", (ctx, p) => ({ doubled: p.n * 2, attempt: ctx.attempt }));
    worker.worker.task("reject", () => {
      throw Object.assign(new Error("nope"), { name: "ValueError" });
    });
    worker.worker.task("slow", async (ctx) => {
      while (!(await ctx.canceled())) await new Promise((r) => setTimeout(r, 20));
      return { late: true };
    });
    worker.start();

    assert.deepEqual(await client.call("double", { n: 21 }), { doubled: 42, attempt: 1 });
    const failed = await rejectionOf(client.call("reject", {}, { maxAttempts: 2 }));
    assert.ok(failed instanceof TaskFailed, String(failed));
    assert.equal(failed.type, "ValueError");
    assert.equal(failed.code, "handler_error");
    assert.equal(failed.message, "nope");

    const slow = client.call("slow", {}, { key: "slow-1" });
    slow.catch(() => {});
    const running = await waitFor(async () => {
      const task = await client.getByKey("slow-1");
      return task?.status === "running" ? task : null;
    });
    await client.cancel(running.id);
    const canceled = await rejectionOf(slow);
    assert.ok(canceled instanceof TaskCanceled, String(canceled));
    assert.equal(canceled.taskId, running.id);
  });
});
