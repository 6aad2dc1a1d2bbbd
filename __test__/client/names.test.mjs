// Task names, queues and step ids: non-empty, at most 512 bytes of UTF-8
// (docs/api.md, "Values and JSON"), refused at the API with the field named,
// nothing written; a priority within the column's 32-bit range.

import assert from "node:assert/strict";

import { assertPlainError, rejectionOf } from "../support/helpers.mjs";
import { forEachDialect, test } from "../support/dialects.mjs";

const LONGEST = 512;

forEachDialect("names and priorities", (dialect) => {
  test("submit refuses an empty or overlong name or queue, and a priority past 32 bits", async (t) => {
    const { client } = await dialect.open(t);
    for (const [submit, message] of [
      [() => client.submit(""), 'name must be a non-empty string, got ""'],
      [() => client.submit("job", {}, { queue: "" }), 'queue must be a non-empty string, got ""'],
      [() => client.submit("n".repeat(LONGEST + 1)), "name must be at most 512 bytes of UTF-8, got 513 bytes"],
      [
        () => client.submit("job", {}, { queue: "€".repeat(171) }),
        "queue must be at most 512 bytes of UTF-8, got 513 bytes",
      ],
      [
        () => client.submit("job", {}, { key: "k", queue: "q".repeat(1_000_000) }),
        "queue must be at most 512 bytes of UTF-8, got 1000000 bytes",
      ],
      [
        () => client.submit("job", {}, { priority: 2 ** 31 }),
        "priority must be a number from -2147483648 to 2147483647, got 2147483648",
      ],
      [
        () => client.submit("job", {}, { priority: NaN }),
        "priority must be a number from -2147483648 to 2147483647, got NaN",
      ],
    ]) {
      assertPlainError(await rejectionOf(submit()), message);
    }
    assert.deepEqual(await client.list(), [], "a refused submit wrote a row");
    const edge = await client.submit("n".repeat(LONGEST), {}, { queue: "€".repeat(170), priority: -(2 ** 31) });
    assert.equal((await client.get(edge.id)).priority, -(2 ** 31));
  });

  test("a step id past 512 bytes fails the handler's step with the field named", async (t) => {
    const { client, handle } = await (async () => {
      const opened = await dialect.open(t);
      return { ...opened, handle: dialect.makeWorker(t, opened.db) };
    })();
    let refusal = null;
    handle.worker.task("steps", async (ctx) => {
      try {
        await ctx.step("s".repeat(LONGEST + 1), () => 1);
      } catch (err) {
        refusal = err;
      }
      return ctx.step("s".repeat(LONGEST), () => "kept");
    });
    handle.start();
    const task = await client.wait((await client.submit("steps")).id, { timeoutMs: 30_000 });
    assert.equal(task.result, "kept");
    assertPlainError(refusal, "step id must be at most 512 bytes of UTF-8, got 513 bytes");
    assert.deepEqual(
      (await client.steps(task.id)).steps.map((s) => s.id.length),
      [LONGEST],
    );
  });

  test("schedule refuses an overlong name, task or queue", async (t) => {
    const { client } = await dialect.open(t);
    const long = "x".repeat(LONGEST + 1);
    for (const [opts, name, field] of [
      [{ task: "report", cron: "0 2 * * *" }, long, "name"],
      [{ task: long, cron: "0 2 * * *" }, "s", "task"],
      [{ task: "report", cron: "0 2 * * *", queue: long }, "s", "queue"],
    ]) {
      assertPlainError(
        await rejectionOf(client.schedule(name, opts)),
        `${field} must be at most 512 bytes of UTF-8, got 513 bytes`,
      );
    }
    assert.deepEqual(await client.schedules(), []);
  });
});
