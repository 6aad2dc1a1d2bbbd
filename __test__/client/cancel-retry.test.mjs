// cancel/cancelByKey and retry/retryByKey (docs/protocol.md, "Cancel", "Retry")
// — on every dialect.

import assert from "node:assert/strict";

import { claimTask, submitAndFail, submitAndSucceed } from "../support/helpers.mjs";
import { forEachDialect, test } from "../support/dialects.mjs";

// ---------------------------------------------------------------------------
forEachDialect("cancel and cancelByKey", (dialect) => {
  test("a queued task is canceled at once", async (t) => {
    const { client } = await dialect.open(t);
    const task = await client.submit("job");
    const canceled = await client.cancel(task.id);
    assert.equal(canceled.id, task.id);
    assert.equal(canceled.status, "canceled");
    assert.equal(canceled.cancel_requested_at_ms, null);
    assert.notEqual(canceled.completed_at_ms, null);
    assert.deepEqual(await client.get(task.id), canceled);
  });

  test("a running task only gets the cooperative cancel flag", async (t) => {
    const { client } = await dialect.open(t);
    const task = await client.submit("job");
    await claimTask(client.store, task);
    const flagged = await client.cancel(task.id);
    assert.equal(flagged.status, "running");
    assert.notEqual(flagged.cancel_requested_at_ms, null);
    assert.equal(flagged.completed_at_ms, null);
    const done = await client.store.complete({ taskId: task.id, workerId: "w1", result: { ignored: true } });
    assert.equal(done.status, "canceled", "cancel wins at completion");
  });

  test("a terminal or missing task gives null and stays unchanged", async (t) => {
    const { client } = await dialect.open(t);
    const done = await submitAndSucceed(client, "job");
    assert.equal(await client.cancel(done.id), null);
    assert.deepEqual(await client.get(done.id), done);
    assert.equal(await client.cancel("task_01HZZZZZZZZZZZZZZZZZZZZZZZ"), null);
    const canceled = await client.submit("job");
    await client.cancel(canceled.id);
    assert.equal(await client.cancel(canceled.id), null);
  });

  test("cancelByKey cancels what the key points at; unknown or terminal → null", async (t) => {
    const { client } = await dialect.open(t);
    const task = await client.submit("job", {}, { key: "k" });
    const canceled = await client.cancelByKey("k");
    assert.equal(canceled.id, task.id);
    assert.equal(canceled.status, "canceled");
    assert.equal(await client.cancelByKey("k"), null);
    assert.equal(await client.cancelByKey("unknown"), null);

    const running = await client.submit("job", {}, { key: "r" });
    await claimTask(client.store, running);
    const flagged = await client.cancelByKey("r");
    assert.equal(flagged.status, "running");
    assert.notEqual(flagged.cancel_requested_at_ms, null);
  });

  test("cancel: queued → canceled at once; running → flag only; terminal or missing → null", async (t) => {
    const { client } = await dialect.open(t);
    const queued = await client.submit("job");
    const canceled = await client.cancel(queued.id);
    assert.equal(canceled.status, "canceled");
    assert.equal(canceled.cancel_requested_at_ms, null);
    assert.notEqual(canceled.completed_at_ms, null);
    assert.equal(await client.cancel(queued.id), null);
    assert.equal(await client.cancel("task_missing"), null);

    const running = await client.submit("job2");
    await claimTask(client.store, running);
    const flagged = await client.cancel(running.id);
    assert.equal(flagged.status, "running");
    assert.notEqual(flagged.cancel_requested_at_ms, null);
    // Cancel wins on completion: the result is dropped.
    const finished = await client.store.complete({ taskId: running.id, workerId: "w1", result: { dropped: true } });
    assert.equal(finished.status, "canceled");
    assert.equal(finished.result, null);

    const keyed = await client.submit("job3", {}, { key: "kc" });
    assert.equal((await client.cancelByKey("kc")).id, keyed.id);
    assert.equal((await client.get(keyed.id)).status, "canceled");
    assert.equal(await client.cancelByKey("kc"), null);
    assert.equal(await client.cancelByKey("unknown"), null);
  });
});

// ---------------------------------------------------------------------------
forEachDialect("retry and retryByKey", (dialect) => {
  test("a failed task is re-queued with its attempt kept; resetAttempt zeroes it", async (t) => {
    const { client } = await dialect.open(t);
    const failed = await submitAndFail(client, "job");
    assert.equal(failed.status, "failed");
    assert.equal(failed.attempt, 1);
    const retried = await client.retry(failed.id);
    assert.equal(retried.status, "queued");
    assert.equal(retried.attempt, 1);
    assert.equal(retried.error, null);
    assert.equal(retried.worker_id, null);
    assert.equal(retried.completed_at_ms, null);
    assert.equal(retried.lease_until_ms, null);
    assert.ok(retried.run_at_ms >= failed.completed_at_ms);

    const again = await submitAndFail(client, "job2");
    const reset = await client.retry(again.id, { resetAttempt: true });
    assert.equal(reset.status, "queued");
    assert.equal(reset.attempt, 0);
  });

  test("a canceled task can be retried", async (t) => {
    const { client } = await dialect.open(t);
    const task = await client.submit("job");
    await client.cancel(task.id);
    const retried = await client.retry(task.id);
    assert.equal(retried.status, "queued");
    assert.equal(retried.cancel_requested_at_ms, null);
  });

  test("queued, running, succeeded and missing tasks give null", async (t) => {
    const { client } = await dialect.open(t);
    const queued = await client.submit("job");
    assert.equal(await client.retry(queued.id), null);
    const running = await client.submit("run");
    await claimTask(client.store, running);
    assert.equal(await client.retry(running.id), null);
    const done = await submitAndSucceed(client, "ok");
    assert.equal(await client.retry(done.id), null);
    assert.equal(await client.retry("task_01HZZZZZZZZZZZZZZZZZZZZZZZ"), null);
    assert.equal((await client.get(queued.id)).status, "queued");
    assert.equal((await client.get(running.id)).status, "running");
    assert.equal((await client.get(done.id)).status, "succeeded");
  });

  test("retryByKey re-queues the keyed task; resetAttempt applies; unknown key → null", async (t) => {
    const { client } = await dialect.open(t);
    const failed = await submitAndFail(client, "job", { key: "k" });
    const retried = await client.retryByKey("k", { resetAttempt: true });
    assert.equal(retried.id, failed.id);
    assert.equal(retried.status, "queued");
    assert.equal(retried.attempt, 0);
    assert.equal(await client.retryByKey("k"), null, "queued now: not retryable");
    assert.equal(await client.retryByKey("unknown"), null);
    const canceled = await client.submit("job", {}, { key: "c" });
    await client.cancel(canceled.id);
    const again = await client.retryByKey("c");
    assert.equal(again.status, "queued");
    assert.equal(again.attempt, 0);
  });
});
