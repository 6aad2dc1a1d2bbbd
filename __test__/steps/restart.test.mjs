// Restart from a step (docs/api.md, "Restart from a step"; issue 50, point
// 9): a task of steps a, b, c restarted from b by worker processes runs b and
// c again and replays a, also when the worker running b again is SIGKILLed;
// bad input is refused and changes nothing; the command line's --from-step.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";

import { forEachDialect, sqlite, test } from "../support/dialects.mjs";
import { assertFailure, cli, cliJson } from "../support/cli-helpers.mjs";
import { makeTempDir, readJsonLines, rejectionOf, spawnFixture, waitFor } from "../support/helpers.mjs";

const PATIENCE = { timeoutMs: 60_000, intervalMs: 50 };

forEachDialect("restart from a step", (dialect) => {
  test("a restart from b re-runs b and c only, also across a SIGKILL during the re-run", async (t) => {
    const { client, db } = await dialect.open(t);
    const dir = makeTempDir(t);
    const runsFile = path.join(dir, "runs.jsonl");
    const holdFile = path.join(dir, "hold");
    const config = { dialect: dialect.name, db, runsFile, holdFile, leaseMs: 1500 };
    const spawnWorker = async () => {
      const worker = spawnFixture(t, "restart-worker.mjs", config);
      await worker.waitForEvent((e) => e.event === "serving", { what: "serving" });
      return worker;
    };
    const finished = (id) =>
      waitFor(async () => ["succeeded", "failed"].includes((await client.get(id)).status), {
        ...PATIENCE,
        message: `task ${id} never finished`,
      });

    const first = await spawnWorker();
    const task = await client.submit("abc", {}, { maxAttempts: 5 });
    await finished(task.id);
    assert.deepEqual((await client.get(task.id)).result, [0, 0, 0]);
    first.kill("SIGTERM");
    await first.waitExit();

    fs.writeFileSync(holdFile, "");
    const killed = await spawnWorker();
    const restarted = await client.retry(task.id, { fromStep: "b" });
    assert.equal(restarted.status, "queued");
    assert.equal(restarted.result, null);
    await waitFor(() => readJsonLines(runsFile).some((run) => run.step === "b" && run.pid === killed.pid), {
      ...PATIENCE,
      message: "the restarted run never reached b",
    });
    killed.kill("SIGKILL");
    await killed.waitExit();
    fs.rmSync(holdFile);

    const last = await spawnWorker();
    await finished(task.id);
    last.kill("SIGTERM");
    await last.waitExit();
    const done = await client.get(task.id);
    assert.equal(done.status, "succeeded", JSON.stringify(done));
    // b's third run read two earlier ones; c's second, one.
    assert.deepEqual(done.result, [0, 2, 1]);
    const runs = readJsonLines(runsFile).map((run) => run.step);
    assert.deepEqual(
      ["a", "b", "c"].map((step) => runs.filter((s) => s === step).length),
      [1, 3, 2],
      "a never ran again; b ran in the killed worker and after it; c once after the restart",
    );
    const { steps } = await client.steps(task.id);
    assert.deepEqual(steps.map((s) => s.id).sort(), ["a", "b", "c"]);
  });

  test("bad fromStep input is refused and changes nothing", async (t) => {
    const { client } = await dialect.open(t);
    const queued = await client.submit("nobody-runs-this", {});
    const refused = async (promise, message) => {
      const err = await rejectionOf(promise);
      assert.equal(err.constructor, Error);
      assert.equal(err.message, message);
    };
    await refused(client.retry(queued.id, { fromStep: 5 }), "fromStep must be a non-empty string, got 5");
    await refused(client.retry(queued.id, { fromStep: "" }), 'fromStep must be a non-empty string, got ""');
    await refused(
      client.retry(queued.id, { fromStep: "b" }),
      `fromStep: task ${queued.id} is queued; only a failed, canceled or succeeded task restarts from a step`,
    );
    await client.cancel(queued.id);
    await refused(client.retry(queued.id, { fromStep: "b" }), `fromStep: task ${queued.id} has no stored step "b"`);
    assert.equal((await client.get(queued.id)).status, "canceled");
    assert.equal(await client.retry("task_nobody", { fromStep: "b" }), null);
    assert.equal(await client.retryByKey("no-such-key", { fromStep: "b" }), null);
    assert.equal(await client.retry(42, { fromStep: "b" }), null);
  });

  if (dialect === sqlite) {
    test("cairnq retry --from-step", async (t) => {
      const { client, db } = await dialect.open(t);
      const runsFile = path.join(makeTempDir(t), "runs.jsonl");
      const config = { dialect: dialect.name, db, runsFile, holdFile: path.join(db, "none"), leaseMs: 30_000 };
      const worker = spawnFixture(t, "restart-worker.mjs", config);
      await worker.waitForEvent((e) => e.event === "serving", { what: "serving" });
      const task = await client.submit("abc", {});
      const succeeded = async (result) =>
        waitFor(async () => JSON.stringify((await client.get(task.id)).result) === JSON.stringify(result), {
          ...PATIENCE,
          message: `task ${task.id} never returned ${JSON.stringify(result)}`,
        });
      await succeeded([0, 0, 0]);
      const out = await cliJson(["retry", db, task.id, "--from-step", "c"]);
      assert.equal(out.status, "queued");
      await succeeded([0, 0, 1]);
      assertFailure(
        await cli(["retry", db, task.id, "--from-step", "zz"]),
        7,
        new RegExp(`fromStep: task ${task.id} has no stored step "zz"`),
      );
      worker.kill("SIGTERM");
      await worker.waitExit();
    });
  }
});
