// A registration's backoff function (docs/api.md, "Retry policy"): called
// with the failed attempt and the error where the handler runs, its value the
// retry's delay; a bad value retries after the worker's backoff and reaches
// onError; a submit's retry cannot hold one.

import assert from "node:assert/strict";

import { statusTotals, waitFor } from "../support/helpers.mjs";
import { makeGate, waitForStatus } from "../support/worker-helpers.mjs";
import { forEachDialect, setupWorker, test } from "../support/dialects.mjs";

/** The row once failed attempt `attempt` is written back to the queue. */
const requeuedAfter = (client, id, attempt) =>
  waitFor(async () => {
    const row = await client.get(id);
    return row.status === "queued" && row.attempt === attempt && row.error ? row : null;
  });

forEachDialect("retry backoff function", (dialect) => {
  test("the function's value is the delay, called with the attempt and the error", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect);
    const calls = [];
    const backoff = (attempt, error) => {
      calls.push([attempt, error.message]);
      return attempt === 1 ? 0 : 40_000 + attempt;
    };
    worker.task("flaky", { retry: { attempts: 3, backoff } }, (ctx) => {
      throw new Error(`boom ${ctx.attempt}`);
    });
    const task = await client.submit("flaky");
    handle.start();
    const row = await requeuedAfter(client, task.id, 2);
    assert.equal(row.run_at_ms - row.updated_at_ms, 40_002);
    assert.deepEqual(calls, [
      [1, "boom 1"],
      [2, "boom 2"],
    ]);
  });

  test("the function is not called for the last attempt: nothing is retried", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect);
    const attempts = [];
    worker.task("twice", { retry: { attempts: 2, backoff: (attempt) => (attempts.push(attempt), 0) } }, () => {
      throw new Error("boom");
    });
    const task = await client.submit("twice");
    handle.start();
    assert.equal((await waitForStatus(client, task.id, "failed")).attempt, 2);
    assert.deepEqual(attempts, [1]);
  });

  test("ctx.fail without delayMs asks the function; with delayMs it does not", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect);
    const errors = [];
    const backoff = (_attempt, error) => {
      errors.push(error);
      return 25_000;
    };
    worker.task("asks", { retry: { backoff } }, (ctx) => ctx.fail("not yet"));
    worker.task("says", { retry: { backoff } }, (ctx) => ctx.fail("later", { delayMs: 7_000 }));
    const asks = await client.submit("asks");
    const says = await client.submit("says");
    handle.start();
    const asked = await requeuedAfter(client, asks.id, 1);
    const said = await requeuedAfter(client, says.id, 1);
    assert.equal(asked.run_at_ms - asked.updated_at_ms, 25_000);
    assert.equal(said.run_at_ms - said.updated_at_ms, 7_000);
    assert.deepEqual(errors, ["not yet"], "the reason as ctx.fail got it");
  });

  test("a bad value retries after the worker's backoff and reaches onError", async (t) => {
    const reported = [];
    const { client, handle, worker } = await setupWorker(t, dialect, {
      retryBackoffMs: 0,
      onError: (err, info) => reported.push([info.taskId, err.message]),
    });
    const values = { negative: -1, nan: NaN, text: "5s" };
    for (const [name, value] of Object.entries(values)) {
      worker.task(name, { retry: { attempts: 2, backoff: () => value } }, () => {
        throw new Error(name);
      });
    }
    worker.task(
      "throws",
      {
        retry: {
          attempts: 2,
          backoff: () => {
            throw new Error("inner");
          },
        },
      },
      () => {
        throw new Error("outer");
      },
    );
    const ids = {};
    for (const name of [...Object.keys(values), "throws"]) ids[name] = (await client.submit(name)).id;
    handle.start();
    for (const [name, id] of Object.entries(ids)) {
      const row = await waitForStatus(client, id, "failed");
      assert.equal(row.attempt, 2, `${name}: retried at once (the worker's backoff is off)`);
      assert.equal(row.error.message, name === "throws" ? "outer" : name, "the handler's error is the failure");
    }
    const byTask = Object.fromEntries(reported);
    assert.equal(
      byTask[ids.negative],
      "retry.backoff returned -1: a delay must be a finite number of milliseconds >= 0",
    );
    for (const name of ["nan", "text", "throws"]) {
      assert.equal(
        byTask[ids[name]],
        "retry.backoff returned NaN: a delay must be a finite number of milliseconds >= 0",
      );
    }
  });

  test("ctx.fail refuses a bad value of the function and writes nothing", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect);
    const refused = makeGate();
    worker.task("bad", { retry: { backoff: () => Infinity } }, async (ctx) => {
      refused.release(await ctx.fail("x").catch((err) => err.message));
      assert.equal((await client.get(ctx.taskId)).status, "running");
      return "done";
    });
    const task = await client.submit("bad");
    handle.start();
    assert.equal(
      await refused.promise,
      "retry.backoff returned Infinity: a delay must be a finite number of milliseconds >= 0",
    );
    assert.equal((await waitForStatus(client, task.id, "succeeded")).result, "done");
  });

  test("a submit's backoff wins over the registration's function", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect);
    let called = 0;
    worker.task("flaky", { retry: { backoff: () => (called++, 1) } }, () => {
      throw new Error("boom");
    });
    const task = await client.submit("flaky", {}, { retry: { backoff: "fixed", baseMs: 50_000 } });
    handle.start();
    const row = await requeuedAfter(client, task.id, 1);
    assert.equal(row.run_at_ms - row.updated_at_ms, 50_000);
    assert.equal(called, 0);
  });

  test("a function is refused in a submit's retry and beside baseMs, naming the field", async (t) => {
    const { client, worker } = await setupWorker(t, dialect);
    const backoff = () => 1;
    const stored =
      "retry.backoff: a submit's retry is stored with the task and cannot hold a function; " +
      "give the function in worker.task's retry, where the handler runs";
    await assert.rejects(client.submit("job", {}, { retry: { backoff } }), { message: stored });
    await assert.rejects(client.submitMany([{ task: "job", options: { retry: { backoff } } }]), {
      message: `items[0].options.${stored}`,
    });
    assert.deepEqual(Object.values(await statusTotals(client)), [0, 0, 0, 0, 0], "nothing written");
    assert.throws(() => worker.task("job", { retry: { backoff, maxMs: 10 } }, () => {}), {
      message: "retry.maxMs does not apply to a backoff function: it returns the delay itself",
    });
  });
});
