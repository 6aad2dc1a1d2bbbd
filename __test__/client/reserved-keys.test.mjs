// Reserved keys (docs/security.md, "Reserved keys"): keys in the "cairnq:"
// namespace are the core's (schedule occurrences, durable-step children).
// submit, ctx.submit and the CLI refuse them; a task another SDK's submit put
// under a child's key is not taken for the child.
import assert from "node:assert/strict";
import { test as nodeTest } from "node:test";

import { TEST_TIMEOUT_MS, forEachDialect, setupWorker, test } from "../support/dialects.mjs";
import { assertFailure, cli } from "../support/cli-helpers.mjs";
import { SDKS, pythonSdkProblem, pythonStep, sdkSkipReason } from "../support/python-sdks.mjs";
import { rejectionOf } from "../support/helpers.mjs";
import { waitForStatus } from "../support/worker-helpers.mjs";

const REFUSAL = /^key must be outside the "cairnq:" namespace: keys starting with "cairnq:" are reserved/;
const SDK = SDKS[1];
const SDK_SKIP = sdkSkipReason(SDK, pythonSdkProblem(SDK));

forEachDialect("reserved keys", (dialect) => {
  test("submit refuses a cairnq: key, plain or debounced, and writes nothing", async (t) => {
    const { client } = await dialect.open(t);
    for (const [key, opts] of [
      ["cairnq:step:task_1:approve", {}],
      ["cairnq:schedule:nightly:1772409600000", { conflict: "reject" }],
      ["cairnq:", { debounceMs: 1000 }],
    ]) {
      const err = await rejectionOf(client.submit("job", {}, { key, ...opts }));
      assert.match(err.message, REFUSAL);
    }
    assert.deepEqual(await client.stats(), {});
    const own = await client.submit("job", {}, { key: "mine-cairnq:1" });
    assert.equal((await client.getByKey("mine-cairnq:1")).id, own.id, "only the prefix is reserved");
  });

  test("ctx.submit refuses a cairnq: key", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect);
    worker.task("parent", async (ctx) => {
      const err = await ctx.submit("child", {}, { key: `cairnq:step:${ctx.taskId}:approval` }).catch((e) => e);
      return err.message;
    });
    handle.start();
    const parent = await client.submit("parent", {});
    const done = await waitForStatus(client, parent.id, "succeeded");
    assert.match(done.result, REFUSAL);
    assert.equal((await client.list({ name: "child" })).length, 0);
  });

  test("the CLI's submit refuses a cairnq: key: exit 2, nothing written", async (t) => {
    const db = await dialect.createDatabase(t);
    assertFailure(
      await cli(["submit", db, "job", "--key", "cairnq:step:task_1:approve"]),
      2,
      /^error: key must be outside/,
    );
    const { client } = await dialect.open(t, {}, db);
    assert.deepEqual(await client.stats(), {});
  });

  nodeTest(
    "a task another SDK submitted under a child's key is not the child: the parent gets its real child's result",
    { skip: SDK_SKIP, timeout: TEST_TIMEOUT_MS },
    async (t) => {
      const { client, db, handle, worker } = await setupWorker(t, dialect);
      worker.task("approve", (_ctx, { amount }) => ({ approved: amount < 100 }));
      worker.task("purchase", async (ctx, { amount }) => ctx.callChild("approval", "approve", { amount }));
      const parent = await client.submit("purchase", { amount: 500 });
      // Before the parent runs, another program occupies its child's key
      // with a task that approves.
      const key = `cairnq:step:${parent.id}:approval`;
      const forged = await pythonStep(
        SDK,
        "submit",
        db,
        "--name",
        "approve",
        "--payload",
        '{"amount": 1}',
        "--key",
        key,
      );
      assert.equal(forged.error, undefined, JSON.stringify(forged));
      handle.start();
      const done = await waitForStatus(client, parent.id, "succeeded");
      assert.deepEqual(done.result, { approved: false });
      const child = await client.getByKey(key);
      assert.notEqual(child.id, forged.task.id);
      assert.equal(child.parent_id, parent.id);
    },
  );
});
