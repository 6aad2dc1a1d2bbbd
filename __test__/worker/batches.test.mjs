// Batch handlers (docs/api.md, "Registrations", "Dispatch and settlement"): the
// id → result map, other return values, ctx.succeed/ctx.fail inside a batch,
// and batches that throw.

import assert from "node:assert/strict";

import { TaskError } from "../../index.mjs";
import { waitFor } from "../support/helpers.mjs";
import { envelope, makeGate, rowsOf, waitAllTerminal, waitForStatus } from "../support/worker-helpers.mjs";
import { forEachDialect, setupWorker, test } from "../support/dialects.mjs";

// ---------------------------------------------------------------------------
forEachDialect("batch delivery", (dialect) => {
  async function submitN(client, name, n, payload = (i) => ({ i })) {
    const ids = [];
    for (let i = 0; i < n; i++) ids.push((await client.submit(name, payload(i))).id);
    return ids;
  }

  test("an id → result map settles each task; missing ids get null; foreign keys are ignored", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect);
    const calls = [];
    worker.task("b", { batch: 3 }, (items) => {
      calls.push(items.map((c) => c.taskId));
      return { [items[0].taskId]: "r0", [items[1].taskId]: { x: 1 }, task_not_in_this_call: 5 };
    });
    const ids = await submitN(client, "b", 3);
    handle.start();
    const rows = await waitAllTerminal(client, ids);
    assert.equal(calls.length, 1);
    assert.deepEqual(new Set(calls[0]), new Set(ids));
    const byId = Object.fromEntries(rows.map((r) => [r.id, r]));
    assert.equal(byId[calls[0][0]].result, "r0");
    assert.deepEqual(byId[calls[0][1]].result, { x: 1 });
    assert.equal(byId[calls[0][2]].result, null);
    for (const row of rows) assert.equal(row.status, "succeeded");
    assert.equal(await client.get("task_not_in_this_call"), null);
  });

  test("an array, a primitive or undefined returned from a batch gives every task a null result", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect);
    const returns = {
      arr: (items) => items.map((c) => c.taskId),
      prim: () => 5,
      undef: () => undefined,
      str: () => "s",
    };
    for (const [name, fn] of Object.entries(returns)) worker.task(name, { batch: 2 }, fn);
    const ids = [];
    for (const name of Object.keys(returns)) ids.push(...(await submitN(client, name, 2)));
    handle.start();
    for (const row of await waitAllTerminal(client, ids)) {
      assert.equal(row.status, "succeeded", row.name);
      assert.equal(row.result, null, row.name);
    }
  });

  test("ctx.succeed/ctx.fail inside a batch settle early; settling twice is a no-op returning null", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect, {
      retryBackoffMs: 60_000,
      retryBackoffMaxMs: 60_000,
    });
    const seen = {};
    worker.task("b", { batch: 4 }, async (items) => {
      const [a, b, c, d] = items;
      seen.order = items.map((x) => x.taskId);
      seen.aRow = await a.succeed({ early: true });
      seen.aSettled = a.settled;
      seen.aAgain = await a.succeed("again");
      seen.aFailAfter = await a.fail("too late");
      seen.bRow = await b.fail(new TaskError("no", { code: "nope" }));
      seen.bAgain = await b.succeed("x");
      seen.cRow = await c.fail("retry me");
      seen.cSettled = c.settled;
      seen.dSettledBefore = d.settled;
      return { [a.taskId]: "override", [b.taskId]: "override", [c.taskId]: "override", [d.taskId]: "d-result" };
    });
    await submitN(client, "b", 4);
    handle.start();
    await waitFor(() => seen.order && seen.dSettledBefore !== undefined);
    const [a, b, c, d] = seen.order;
    const rowD = await waitForStatus(client, d, "succeeded");
    assert.equal(rowD.result, "d-result");
    assert.equal(seen.aRow.status, "succeeded");
    assert.deepEqual(seen.aRow.result, { early: true });
    assert.equal(seen.aSettled, true);
    assert.equal(seen.aAgain, null);
    assert.equal(seen.aFailAfter, null);
    assert.equal(seen.bRow.status, "failed");
    assert.equal(seen.bAgain, null);
    assert.equal(seen.cRow.status, "queued", "retryable ctx.fail re-queues");
    assert.equal(seen.cSettled, true, "settled even though re-queued");
    assert.equal(seen.dSettledBefore, false);
    // The returned map never overwrote what the handler settled itself.
    const [rowA, rowB, rowC] = await rowsOf(client, [a, b, c]);
    assert.deepEqual(rowA.result, { early: true });
    assert.equal(rowA.status, "succeeded");
    assert.equal(rowB.status, "failed");
    assert.deepEqual(rowB.error, envelope("TaskError", "nope", "no", false));
    assert.equal(rowC.status, "queued");
    assert.equal(rowC.attempt, 1);
    assert.deepEqual(rowC.error, envelope("TaskError", "task_error", "retry me", true));
  });

  test("a batch that throws fails only the leftovers; one unserializable entry fails only its task", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect);
    worker.task("throws", { batch: 2 }, async (items) => {
      await items[0].succeed("kept");
      throw new TaskError("rest failed", { code: "rest" });
    });
    worker.task("mixed", { batch: 2 }, (items) => ({ [items[0].taskId]: 10n, [items[1].taskId]: "fine" }));
    const thrownIds = await submitN(client, "throws", 2);
    const mixedIds = await submitN(client, "mixed", 2);
    handle.start();
    const thrown = await waitAllTerminal(client, thrownIds);
    assert.deepEqual(thrown.map((r) => r.status).sort(), ["failed", "succeeded"]);
    assert.equal(thrown.find((r) => r.status === "succeeded").result, "kept");
    assert.deepEqual(
      thrown.find((r) => r.status === "failed").error,
      envelope("TaskError", "rest", "rest failed", false),
    );
    const mixed = await waitAllTerminal(client, mixedIds);
    assert.deepEqual(mixed.map((r) => r.status).sort(), ["failed", "succeeded"]);
    assert.equal(mixed.find((r) => r.status === "succeeded").result, "fine");
    assert.equal(mixed.find((r) => r.status === "failed").error.code, "unserializable_result");
  });

  // A batch call of short tasks counts as short however long the whole call
  // takes (each call here sleeps 10 ms, over the 5 ms a call the threshold
  // once applied to; 8 tasks make it about 1.25 ms a task): a round is then
  // claimed ahead while a call runs, and stop() leaves none of them leased.
  async function blockFourthCall(t) {
    const { client, handle, worker } = await setupWorker(t, dialect, { concurrency: 1 });
    const gate = makeGate();
    let calls = 0;
    worker.task("short", { batch: 8 }, async () => {
      calls += 1;
      if (calls < 4) await new Promise((r) => setTimeout(r, 10));
      else if (calls === 4) await gate.promise;
    });
    const ids = await submitN(client, "short", 64);
    handle.start();
    const running = async () => (await client.list({ status: "running", limit: 100 })).length;
    // The blocked call's 8 tasks and a round of 8 claimed ahead of it.
    await waitFor(async () => (await running()) === 16, { timeoutMs: 60_000, message: "a round claimed ahead" });
    return { client, handle, gate, ids, running };
  }

  test("a batch registration of short tasks keeps a round claimed ahead", async (t) => {
    const { client, gate, ids, running } = await blockFourthCall(t);
    assert.equal(await running(), 16, "never more than the running call and one round ahead");
    gate.release();
    const rows = await waitAllTerminal(client, ids);
    for (const row of rows) assert.equal(row.status, "succeeded");
  });

  test("stop() with a round claimed ahead leaves no task leased and none lost", async (t) => {
    const { client, handle, gate, running } = await blockFourthCall(t);
    const drained = handle.stopAndDrain();
    gate.release();
    await drained;
    assert.equal(await running(), 0, "nothing left leased to a stopped worker");
    const succeeded = (await client.list({ status: "succeeded", limit: 100 })).length;
    const queued = (await client.list({ status: "queued", limit: 100 })).length;
    assert.ok(succeeded >= 3 * 8, `the three short calls succeeded (${succeeded})`);
    assert.equal(succeeded + queued, 64, "every task succeeded or went back to the queue");
  });
});
