// The wait family (docs/api.md, "Waits and call"): wait and waitByKey, their
// timeouts and the TaskTimeout they describe the task with — on every dialect.

import assert from "node:assert/strict";

import { CairnQError, TaskTimeout } from "../../index.mjs";
import {
  ENVELOPE,
  TASK_COLUMNS,
  claimTask,
  makeDbPath,
  rejectionOf,
  runProcess,
  submitAndFail,
  submitAndSucceed,
} from "../support/helpers.mjs";
import { forEachDialect, sqlite, test } from "../support/dialects.mjs";

// ---------------------------------------------------------------------------
forEachDialect("wait and waitByKey", (dialect) => {
  test("resolves with the task for every terminal status, without throwing", async (t) => {
    const { client } = await dialect.open(t);
    const ok = await submitAndSucceed(client, "ok", { r: 1 });
    const bad = await submitAndFail(client, "bad");
    const c = await client.submit("c");
    await client.cancel(c.id);
    assert.deepEqual(await client.wait(ok.id), ok);
    assert.equal((await client.wait(bad.id)).status, "failed");
    assert.equal((await client.wait(c.id)).status, "canceled");
  });

  test("resolves once the task finishes while it waits", async (t) => {
    const { client } = await dialect.open(t);
    const task = await client.submit("job");
    let settled = false;
    const waiting = client.wait(task.id, { timeoutMs: 20_000, pollMs: 20 }).finally(() => (settled = true));
    await claimTask(client.store, task);
    assert.equal(settled, false);
    await client.store.complete({ taskId: task.id, workerId: "w1", result: { done: true } });
    const done = await waiting;
    assert.equal(done.status, "succeeded");
    assert.deepEqual(done.result, { done: true });
  });

  test("timeoutMs: 0 reads exactly once", async (t) => {
    const { client } = await dialect.open(t);
    const done = await submitAndSucceed(client, "ok");
    assert.equal((await client.wait(done.id, { timeoutMs: 0 })).id, done.id);
    const queued = await client.submit("pending.job", {}, { queue: "slow" });
    const err = await rejectionOf(client.wait(queued.id, { timeoutMs: 0 }));
    assert.ok(err instanceof TaskTimeout);
    assert.equal(
      err.message,
      `task ${queued.id} did not finish within 0ms: never claimed by a worker — is a worker running with a handler for 'pending.job' on queue 'slow', against this same database?`,
    );
    assert.equal(err.taskId, queued.id);
    assert.equal(err.key, null);
    assert.equal(err.task.status, "queued");
    assert.deepEqual(await client.get(queued.id), queued, "waiting never modifies the task");
  });

  test("TaskTimeout.task is the last snapshot as a task row, columns in table order", async (t) => {
    const { client } = await dialect.open(t);
    const queued = await client.submit("job", { a: [1, { b: 2 }] }, { metadata: { m: 1 } });
    const err = await rejectionOf(client.wait(queued.id, { timeoutMs: 0 }));
    assert.deepEqual(err.task, queued);
    assert.deepEqual(Object.keys(err.task), TASK_COLUMNS);
  });

  test("a missing id is polled until the deadline, then TaskTimeout with task null", async (t) => {
    const { client } = await dialect.open(t);
    const started = Date.now();
    const err = await rejectionOf(client.wait("task_missing", { timeoutMs: 200, pollMs: 20 }));
    assert.ok(Date.now() - started >= 150, "it waited for (about) the timeout");
    assert.ok(err instanceof TaskTimeout);
    assert.ok(err instanceof CairnQError);
    assert.equal(err.name, "TaskTimeout");
    assert.equal(err.taskId, "task_missing");
    assert.equal(err.task, null);
    assert.equal(err.key, null);
    assert.equal(
      err.message,
      "task task_missing did not finish within 200ms: task not found — wrong database file, or already purged?",
    );
  });

  test("the timeout message describes a running task, with or without a cancel request", async (t) => {
    const { client } = await dialect.open(t);
    const task = await client.submit("job", {}, { maxAttempts: 4 });
    await claimTask(client.store, task);
    const running = await rejectionOf(client.wait(task.id, { timeoutMs: 0 }));
    assert.equal(running.message, `task ${task.id} did not finish within 0ms: still running (attempt 1/4)`);
    assert.equal(running.task.status, "running");
    await client.cancel(task.id);
    const cancelling = await rejectionOf(client.wait(task.id, { timeoutMs: 0 }));
    assert.equal(
      cancelling.message,
      `task ${task.id} did not finish within 0ms: cancel requested, waiting for the handler to observe it`,
    );
  });

  test("the timeout message describes a re-queued task and its next run", async (t) => {
    const { client } = await dialect.open(t);
    const task = await client.submit("job");
    await claimTask(client.store, task);
    await client.store.fail({ taskId: task.id, workerId: "w1", error: ENVELOPE, retryable: true, delayMs: 60_000 });
    const err = await rejectionOf(client.wait(task.id, { timeoutMs: 0 }));
    assert.match(
      err.message,
      new RegExp(`^task ${task.id} did not finish within 0ms: still queued \\(attempt 1/3\\), next run in ~\\d+ms$`),
    );
    const next = Number(err.message.match(/~(\d+)ms$/)[1]);
    assert.ok(next > 50_000 && next <= 60_000, `next run in ${next}ms`);
  });

  test("waitByKey on a key with no task times out with the key as subject and taskId", async (t) => {
    const { client } = await dialect.open(t);
    const err = await rejectionOf(client.waitByKey("nobody", { timeoutMs: 100, pollMs: 10 }));
    assert.ok(err instanceof TaskTimeout);
    assert.equal(err.taskId, "nobody");
    assert.equal(err.key, "nobody");
    assert.equal(err.task, null);
    assert.equal(
      err.message,
      "key nobody did not finish within 100ms: no task under this key — never submitted, or already purged?",
    );
  });

  test("waitByKey timing out on an existing task reports that task", async (t) => {
    const { client } = await dialect.open(t);
    const task = await client.submit("keyed.job", {}, { key: "k1" });
    const err = await rejectionOf(client.waitByKey("k1", { timeoutMs: 0 }));
    assert.equal(err.taskId, task.id);
    assert.equal(err.key, "k1");
    assert.equal(err.task.id, task.id);
    assert.match(err.message, /^key k1 did not finish within 0ms: never claimed by a worker/);
    assert.ok(err.message.includes("'keyed.job'"));
  });

  test("waitByKey waits for a key that only appears later", async (t) => {
    const { client } = await dialect.open(t);
    let settled = false;
    const waiting = client.waitByKey("later", { timeoutMs: 20_000, pollMs: 20 }).finally(() => (settled = true));
    const task = await client.submit("job", {}, { key: "later" });
    await claimTask(client.store, task);
    assert.equal(settled, false);
    await client.store.complete({ taskId: task.id, workerId: "w1", result: 7 });
    const done = await waiting;
    assert.equal(done.id, task.id);
    assert.equal(done.result, 7);
  });

  test("a replace mid-wait moves waitByKey to the replacement task", async (t) => {
    const { client } = await dialect.open(t);
    const first = await client.submit("job", { v: 1 }, { key: "k" });
    let settled = false;
    const waiting = client.waitByKey("k", { timeoutMs: 20_000, pollMs: 20 }).finally(() => (settled = true));
    const second = await client.submit("job", { v: 2 }, { key: "k", conflict: "replace" });
    assert.equal((await client.get(first.id)).status, "canceled");
    await claimTask(client.store, second);
    assert.equal(settled, false, "the canceled original must not end the wait");
    await client.store.complete({ taskId: second.id, workerId: "w1", result: "second" });
    const done = await waiting;
    assert.equal(done.id, second.id);
    assert.equal(done.result, "second");
  });

  test("timeoutMs: Infinity waits for as long as it takes", async (t) => {
    const { client } = await dialect.open(t);
    const task = await client.submit("job");
    const waiting = client.wait(task.id, { timeoutMs: Infinity, pollMs: 20 });
    await client.cancel(task.id);
    const done = await waiting;
    assert.equal(done.status, "canceled");
  });

  test("a poll interval larger than the time left still honours the deadline", async (t) => {
    const { client } = await dialect.open(t);
    const task = await client.submit("job");
    const started = Date.now();
    const err = await rejectionOf(client.wait(task.id, { timeoutMs: 200, pollMs: Infinity }));
    assert.ok(err instanceof TaskTimeout, `${err.name}: ${err.message}`);
    assert.ok(Date.now() - started < 10_000);
    const slowPoll = await rejectionOf(client.wait(task.id, { timeoutMs: 200, pollMs: 60_000 }));
    assert.ok(slowPoll instanceof TaskTimeout, `${slowPoll.name}: ${slowPoll.message}`);
  });

  // A child process with a SQLite file of its own.
  if (dialect === sqlite) {
    test("a pending wait keeps the process alive until it settles", async (t) => {
      const entry = JSON.stringify(new URL("../../index.mjs", import.meta.url).href);
      const dbPath = JSON.stringify(makeDbPath(t));
      const script = `
        const { CairnQ } = await import(${entry});
        const client = CairnQ.sqlite(${dbPath});
        const task = await client.submit("job", {});
        client.wait(task.id, { timeoutMs: 300 }).catch((e) => console.log("wait:" + e.name));
        client.waitByKey("absent", { timeoutMs: 300 }).catch((e) => console.log("waitByKey:" + e.name));
      `;
      const out = await runProcess(process.execPath, ["--input-type=module", "-e", script], { timeoutMs: 20_000 });
      assert.equal(out.code, 0, out.stderr);
      assert.deepEqual(out.stdout.trim().split("\n").sort(), ["wait:TaskTimeout", "waitByKey:TaskTimeout"]);
    });
  }

  test("a timed-out wait can be resumed with wait(err.taskId)", async (t) => {
    const { client } = await dialect.open(t);
    const task = await client.submit("job");
    const err = await rejectionOf(client.wait(task.id, { timeoutMs: 50 }));
    await claimTask(client.store, task);
    await client.store.complete({ taskId: task.id, workerId: "w1", result: "late" });
    assert.equal((await client.wait(err.taskId)).result, "late");
  });
});
