// Dead letters (docs/api.md, "Dead letters"): `deadLetter` per registration
// and per submit; a task that failed for good is submitted to that queue once,
// with its name, payload, id and error, in the failure's transaction — checked
// with worker processes SIGKILLed at random points; bad input refused naming
// the field, nothing written.

import assert from "node:assert/strict";

import { spawnFixture, statusTotals, waitFor } from "../support/helpers.mjs";
import { makeGate, waitForStatus } from "../support/worker-helpers.mjs";
import { forEachDialect, setupWorker, test } from "../support/dialects.mjs";

/** The letters in `queue`, by the id of the task each came from. */
async function lettersByOrigin(client, queue = "dlq") {
  const byOrigin = new Map();
  for (const letter of await client.list({ queue, limit: 1000 })) {
    const from = letter.metadata["cairnq.deadLettered"].from.id;
    byOrigin.set(from, [...(byOrigin.get(from) ?? []), letter]);
  }
  return byOrigin;
}

const bounce = () => {
  throw new Error("bounced");
};

forEachDialect("dead letters", (dialect) => {
  test("a task failed for good is submitted to its dead-letter queue, once", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect, { retryBackoffMs: 0 });
    worker.task("mail", { deadLetter: "mail.dead" }, bounce);
    worker.task("plain", bounce);
    const routed = await client.submit("mail", { to: "a@b" }, { maxAttempts: 2, metadata: { tenant: "t1" } });
    const overridden = await client.submit("mail", { to: "c@d" }, { maxAttempts: 1, deadLetter: "dlq" });
    const plain = await client.submit("plain", {}, { maxAttempts: 1 });
    assert.deepEqual(overridden.metadata, { "cairnq.deadLetter": "dlq" });
    handle.start();
    const failed = await waitForStatus(client, routed.id, "failed");
    await waitForStatus(client, overridden.id, "failed");
    await waitForStatus(client, plain.id, "failed");

    const letters = await lettersByOrigin(client, "mail.dead");
    assert.deepEqual([...letters.keys()], [routed.id], "the registration's queue, after the last attempt only");
    const [letter] = letters.get(routed.id);
    assert.equal(letter.name, "mail");
    assert.deepEqual(letter.payload, { to: "a@b" });
    assert.deepEqual(letter.metadata, {
      tenant: "t1",
      "cairnq.deadLettered": { from: { id: routed.id, queue: "default", attempt: 2 }, error: failed.error },
    });
    assert.deepEqual([...(await lettersByOrigin(client, "dlq")).keys()], [overridden.id], "the submit's queue wins");
    assert.equal((await client.list({ queue: "default", limit: 100 })).length, 3, "the originals stay, failed");
  });

  test("a worker of the dead-letter queue gets the letter with where it came from", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect, { queues: ["default", "dlq"] });
    const seen = makeGate();
    worker.task("mail", { deadLetter: "dlq" }, (ctx, payload) => {
      if (ctx.queue !== "dlq") bounce();
      seen.release({ payload, from: ctx.metadata["cairnq.deadLettered"].from.queue });
      return "handled";
    });
    await client.submit("mail", { to: "a@b" }, { maxAttempts: 1 });
    handle.start();
    assert.deepEqual(await seen.promise, { payload: { to: "a@b" }, from: "default" });
  });

  test("SIGKILLs around dead-lettering leave exactly one letter per failed task", async (t) => {
    const { client, db } = await setupWorker(t, dialect);
    const ids = [];
    for (let i = 0; i < 24; i++) {
      ids.push((await client.submit("mail", { i }, { maxAttempts: 3, deadLetter: "dlq" })).id);
    }
    const allFailed = async () =>
      (await client.list({ queue: "default", status: "failed", limit: 100 })).length === ids.length;
    const config = { dialect: dialect.name, db, leaseMs: 600 };
    let kills = 0;
    // Kill workers at random points until every task failed for good, or for
    // at most 40 rounds; then one worker runs until they have.
    while (kills < 40 && !(await allFailed())) {
      const proc = spawnFixture(t, "dead-letter-worker.mjs", config);
      await proc.waitForEvent((e) => e.event === "serving", { what: "serving" });
      await new Promise((resolve) => setTimeout(resolve, 100 + Math.random() * 600));
      proc.kill("SIGKILL");
      await proc.waitExit();
      kills++;
    }
    const last = spawnFixture(t, "dead-letter-worker.mjs", config);
    await waitFor(allFailed, { timeoutMs: 40_000, message: "not every task failed" });
    last.kill("SIGKILL");
    await last.waitExit();

    t.diagnostic(`${kills} workers killed`);
    const letters = await lettersByOrigin(client);
    for (const id of ids) {
      assert.equal(letters.get(id)?.length, 1, `one letter of ${id} after ${kills} kills`);
    }
    assert.equal(letters.size, ids.length, "no letter of anything else");
  });

  test("a lease that expires on the last attempt is dead-lettered by the registration", async (t) => {
    const { client, db } = await setupWorker(t, dialect);
    const task = await client.submit("mail", {}, { maxAttempts: 1 });
    const config = { dialect: dialect.name, db, leaseMs: 600, deadLetter: "dlq", hang: true };
    const killed = spawnFixture(t, "dead-letter-worker.mjs", config);
    await killed.waitForEvent((e) => e.event === "started", { what: "the only attempt" });
    killed.kill("SIGKILL");
    await killed.waitExit();
    // A worker with the same registration recovers the lease and fails the task.
    const recovering = spawnFixture(t, "dead-letter-worker.mjs", config);
    await waitForStatus(client, task.id, "failed", { timeoutMs: 30_000 });
    await waitFor(async () => (await lettersByOrigin(client)).has(task.id), {
      timeoutMs: 30_000,
      message: "no letter of the task whose lease expired",
    });
    recovering.kill("SIGKILL");
    await recovering.waitExit();
    const [letter] = (await lettersByOrigin(client)).get(task.id);
    assert.equal(letter.metadata["cairnq.deadLettered"].from.attempt, 1);
  });

  test("a bad deadLetter is refused naming the field, and nothing is written", async (t) => {
    const { client, worker } = await setupWorker(t, dialect);
    await assert.rejects(client.submit("mail", {}, { deadLetter: "" }), {
      message: 'deadLetter must be a non-empty string, got ""',
    });
    await assert.rejects(client.submit("mail", {}, { deadLetter: 5 }), {
      message: "deadLetter must be a string, got 5",
    });
    await assert.rejects(client.submitMany([{ task: "mail", options: { deadLetter: "" } }]), {
      message: 'items[0].options.deadLetter must be a non-empty string, got ""',
    });
    assert.deepEqual(Object.values(await statusTotals(client)), [0, 0, 0, 0, 0], "nothing written");
    assert.throws(() => worker.task("mail", { deadLetter: "" }, bounce), {
      message: 'deadLetter must be a non-empty string, got ""',
    });
  });
});
