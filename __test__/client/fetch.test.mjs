// Manual fetch and settle (docs/api.md, "Manual fetch"): a script takes a
// task with client.fetch and finishes it with complete / fail / extendLease,
// here or in another process; each refusal says why and writes nothing. On
// every dialect.
import assert from "node:assert/strict";

import { LeaseExpired, LostLease, NotOwner, NotRunning, TaskError } from "../../index.mjs";
import { REPO_ROOT, rejectionOf, runProcess, waitFor } from "../support/helpers.mjs";
import { forEachDialect, test } from "../support/dialects.mjs";

forEachDialect("manual fetch", (dialect) => {
  test("fetch takes due tasks of the queue and names under one worker id, at most count", async (t) => {
    const { client } = await dialect.open(t);
    for (const name of ["a", "b", "a", "a"]) await client.submit(name, { name });
    await client.submit("a", {}, { queue: "other" });
    await client.submit("a", {}, { runAtDelayMs: 600_000 });
    const fetched = await client.fetch({ names: ["a"], count: 2, workerId: "script_1", leaseMs: 60_000 });
    assert.equal(fetched.length, 2);
    for (const task of fetched) {
      assert.equal(task.status, "running");
      assert.equal(task.name, "a");
      assert.equal(task.queue, "default");
      assert.equal(task.worker_id, "script_1");
      assert.equal(task.attempt, 1);
      assert.ok(task.lease_until_ms >= Date.now() + 50_000, "the lease asked for");
    }
    const [rest] = await client.fetch({ names: ["a"], count: 5 });
    assert.match(rest.worker_id, /^worker_/, "a fresh worker id by default");
    assert.deepEqual(await client.fetch({ names: ["a"] }), [], "nothing due is left");
    assert.deepEqual(
      (await client.fetch({ queue: "other" })).map((task) => task.queue),
      ["other"],
    );
  });

  test("complete, fail with a backoff and extendLease settle a fetched task", async (t) => {
    const { client } = await dialect.open(t);
    const first = await client.submit("job", { n: 1 });
    const [task] = await client.fetch();
    assert.equal(task.id, first.id);
    const extended = await client.extendLease(task, 600_000);
    assert.ok(extended.lease_until_ms > task.lease_until_ms + 500_000);
    const done = await client.complete(task, { ok: true });
    assert.equal(done.status, "succeeded");
    assert.deepEqual(done.result, { ok: true });

    const second = await client.submit("job", {}, { maxAttempts: 2 });
    const [again] = await client.fetch();
    // A TaskError's own retryable decides, as for ctx.fail.
    const reason = new TaskError("try later", { code: "busy", retryable: true });
    const retried = await client.fail(again, reason, { delayMs: 60_000 });
    assert.equal(retried.id, second.id);
    assert.equal(retried.status, "queued");
    assert.equal(retried.error.code, "busy");
    assert.ok(retried.run_at_ms >= Date.now() + 50_000, "due after the delay");
    assert.deepEqual(await client.fetch(), [], "not due before its delay");
    await client.submit("job");
    const [last] = await client.fetch();
    const failed = await client.fail(last, "for good", { retryable: false });
    assert.equal(failed.status, "failed");
    assert.equal(failed.error.message, "for good");
  });

  test("a wrong worker id is NotOwner while the lease is live, and the task runs on untouched", async (t) => {
    const { client } = await dialect.open(t);
    await client.submit("job");
    const [task] = await client.fetch({ workerId: "script_a" });
    const impostor = { id: task.id, worker_id: "script_b" };
    for (const write of [
      () => client.complete(impostor, 1),
      () => client.fail(impostor, "no"),
      () => client.extendLease(impostor, 1_000),
    ]) {
      const err = await rejectionOf(write());
      assert.ok(err instanceof NotOwner, `${err}`);
      assert.ok(!(err instanceof LostLease), "not told the lease is lost: it is live");
      assert.equal(err.message, `task ${task.id} is held by worker script_a, not script_b`);
      assert.deepEqual([err.taskId, err.workerId, err.owner], [task.id, "script_b", "script_a"]);
    }
    const row = await client.get(task.id);
    assert.equal(row.status, "running");
    assert.equal(row.lease_until_ms, task.lease_until_ms);
    assert.equal((await client.complete(task, 2)).status, "succeeded");
    const twice = await rejectionOf(client.complete(task, 3));
    assert.ok(twice instanceof NotRunning, `${twice}`);
    assert.equal(twice.message, `task ${task.id} is succeeded, not running`);
    assert.equal(twice.status, "succeeded");
    assert.deepEqual((await client.get(task.id)).result, 2);
  });

  test("an expired lease says so (a LostLease), writes nothing, and the task goes to the next fetch", async (t) => {
    const { client } = await dialect.open(t);
    const submitted = await client.submit("job");
    const [task] = await client.fetch({ workerId: "script_a", leaseMs: 1 });
    await waitFor(() => Date.now() > task.lease_until_ms + 5);
    const err = await rejectionOf(client.complete(task, { late: true }));
    assert.ok(err instanceof LeaseExpired, `${err}`);
    assert.ok(err instanceof LostLease);
    assert.equal(err.message, `the lease of worker script_a on task ${task.id} has expired`);
    assert.equal((await client.get(task.id)).result, null);
    const [recovered] = await client.fetch({ workerId: "script_b" });
    assert.equal(recovered.id, submitted.id);
    assert.equal(recovered.attempt, 2);
    const stale = await rejectionOf(client.extendLease(task, 60_000));
    assert.ok(stale instanceof NotOwner, `${stale}`);
    assert.equal(stale.owner, "script_b");
  });

  test("bad input is refused naming the field, and nothing is claimed", async (t) => {
    const { client } = await dialect.open(t);
    await client.submit("job");
    for (const [opts, message] of [
      [{ count: 0 }, "count must be an integer >= 1, got 0"],
      [{ leaseMs: 0 }, "leaseMs must be an integer >= 1, got 0"],
      [{ leaseMs: NaN }, "leaseMs must be an integer >= 1, got NaN"],
      [{ queue: "" }, 'queue must be a non-empty string, got ""'],
      [{ limit: 2 }, /^unknown key "limit" in fetch options/],
    ]) {
      const err = await rejectionOf(client.fetch(/** @type {any} */ (opts)));
      if (typeof message === "string") assert.equal(err.message, message);
      else assert.match(err.message, message);
    }
    const err = await rejectionOf(client.complete(/** @type {any} */ ({ id: "task_1" })));
    assert.ok(err instanceof TypeError);
    assert.equal(err.message, "complete needs a fetched task: task.worker_id must be a string, got undefined");
    const [task] = await client.fetch();
    assert.equal(task.attempt, 1, "the refused fetches claimed nothing");
    const lease = await rejectionOf(client.extendLease(task, -5));
    assert.equal(lease.message, "leaseMs must be an integer >= 1, got -5");
  });

  test("a task fetched here is completed by another process", async (t) => {
    const { client, db } = await dialect.open(t);
    const submitted = await client.submit("job", { n: 20 });
    const [task] = await client.fetch({ leaseMs: 120_000 });
    const script = `
      import { CairnQ } from "./index.mjs";
      const [dialect, db, task] = process.argv.slice(1);
      const client = dialect === "sqlite" ? CairnQ.sqlite(db) : CairnQ.postgres(db);
      const fetched = JSON.parse(task);
      const done = await client.complete(fetched, { n: fetched.payload.n + 1 });
      console.log(done.status);
      await client.close();
    `;
    const out = await runProcess(
      process.execPath,
      ["--input-type=module", "-e", script, dialect.name, db, JSON.stringify(task)],
      { cwd: REPO_ROOT, timeoutMs: 60_000 },
    );
    assert.equal(out.code, 0, out.stderr);
    assert.equal(out.stdout, "succeeded\n");
    assert.deepEqual((await client.get(submitted.id)).result, { n: 21 });
  });
});
