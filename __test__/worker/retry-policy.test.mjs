// Retry policies (docs/api.md, "Retry policy"): `retry` per registration and
// per submit (a submit's backoff wins, its attempts are max_attempts),
// ctx.fail's delayMs, ctx.maxAttempts and ctx.isLastAttempt, and bad input
// refused with nothing written.

import assert from "node:assert/strict";

import { assertThrowsPlainError, statusTotals, waitFor } from "../support/helpers.mjs";
import { makeGate, waitForStatus } from "../support/worker-helpers.mjs";
import { forEachDialect, setupWorker, test } from "../support/dialects.mjs";

/** The row once its failed attempt is written back to the queue. */
const requeued = (client, id) =>
  waitFor(async () => {
    const row = await client.get(id);
    return row.status === "queued" && row.error ? row : null;
  });

const boom = () => {
  throw new Error("boom");
};

forEachDialect("retry policy", (dialect) => {
  test("a registration's fixed backoff replaces the worker's", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect, { retryBackoffMs: 0 });
    worker.task("flaky", { retry: { backoff: "fixed", baseMs: 60_000 } }, boom);
    worker.task("plain", boom);
    const flaky = await client.submit("flaky");
    const plain = await client.submit("plain");
    handle.start();
    const flakyRow = await requeued(client, flaky.id);
    assert.equal(flakyRow.run_at_ms - flakyRow.updated_at_ms, 60_000, "fixed: the base, no jitter");
    // The other name keeps the worker's backoff (off): its three attempts run at once.
    assert.equal((await waitForStatus(client, plain.id, "failed")).attempt, 3);
  });

  test("a registration's attempts cap the task's; the context knows its last attempt", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect, { retryBackoffMs: 0 });
    const seen = makeGate();
    worker.task("once", { retry: { attempts: 1 } }, (ctx) => {
      seen.release({ maxAttempts: ctx.maxAttempts, isLastAttempt: ctx.isLastAttempt });
      boom();
    });
    const task = await client.submit("once");
    assert.equal(task.max_attempts, 3);
    handle.start();
    assert.deepEqual(await seen.promise, { maxAttempts: 1, isLastAttempt: true });
    const row = await waitForStatus(client, task.id, "failed");
    assert.equal(row.attempt, 1);
  });

  test("a submit's retry: attempts in max_attempts, its backoff in the metadata, over the registration's", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect);
    const seen = [];
    worker.task("flaky", { retry: { backoff: "fixed", baseMs: 60_000 } }, (ctx) => {
      seen.push({ attempt: ctx.attempt, maxAttempts: ctx.maxAttempts, isLastAttempt: ctx.isLastAttempt });
      boom();
    });
    const task = await client.submit("flaky", {}, { retry: { attempts: 2, backoff: "fixed", baseMs: 45_000 } });
    assert.equal(task.max_attempts, 2);
    assert.deepEqual(task.metadata, { "cairnq.retry": { backoff: "fixed", baseMs: 45_000, maxMs: 30_000 } });
    handle.start();
    const row = await requeued(client, task.id);
    assert.equal(row.run_at_ms - row.updated_at_ms, 45_000);
    assert.deepEqual(seen, [{ attempt: 1, maxAttempts: 2, isLastAttempt: false }]);
  });

  test("ctx.fail's delayMs is honoured; a bad one is refused and writes nothing", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect);
    const refused = makeGate();
    worker.task("later", async (ctx) => {
      refused.release(await ctx.fail("bad", { delayMs: -1 }).catch((err) => err.message));
      assert.equal((await client.get(ctx.taskId)).status, "running");
      await ctx.fail("try later", { delayMs: 12_345 });
    });
    const task = await client.submit("later");
    handle.start();
    assert.equal(await refused.promise, "delayMs must be >= 0, got -1");
    const row = await requeued(client, task.id);
    assert.equal(row.run_at_ms - row.updated_at_ms, 12_345);
    assert.equal(row.error.message, "try later");
  });

  test("bad retry policies are refused naming the field, and nothing is written", async (t) => {
    const { client, worker } = await setupWorker(t, dialect);
    for (const [retry, message] of [
      [{ attempts: 0 }, "retry.attempts must be an integer >= 1, got 0"],
      [{ backoff: "linear" }, 'retry.backoff must be "exponential" or "fixed", got "linear"'],
      [{ baseMs: "1s" }, 'retry.baseMs must be a number, got "1s"'],
      [
        { maxMs: Infinity },
        "retry.maxMs must be a finite number of milliseconds, at most 1e15 (about 31,700 years), got Infinity",
      ],
      [5, "retry must be an object, got 5"],
    ]) {
      await assert.rejects(client.submit("job", {}, { retry }), { message });
    }
    await assert.rejects(client.submit("job", {}, { retry: { jitter: true } }), (err) =>
      err.message.startsWith('unknown key "jitter" in retry'),
    );
    await assert.rejects(client.submit("job", {}, { maxAttempts: 3, retry: { attempts: 2 } }), {
      message: "retry.attempts and maxAttempts both set the task's attempts: give one",
    });
    await assert.rejects(client.submitMany([{ task: "job", options: { retry: { attempts: 1.5 } } }]), {
      message: "items[0].options.retry.attempts must be an integer >= 1, got 1.5",
    });
    assert.deepEqual(Object.values(await statusTotals(client)), [0, 0, 0, 0, 0], "nothing written");
    assertThrowsPlainError(
      () => worker.task("job", { retry: { backoff: "linear" } }, () => {}),
      'retry.backoff must be "exponential" or "fixed", got "linear"',
    );
  });
});
