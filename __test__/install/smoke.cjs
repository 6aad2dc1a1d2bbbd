// Install smoke test, CommonJS form (`require("cairnq")`); see smoke.mjs.
"use strict";
const { CairnQ, TaskFailed, Worker, defineTask } = require("cairnq");
const assert = require("node:assert/strict");
const { mkdtempSync, rmSync } = require("node:fs");
const { tmpdir } = require("node:os");
const { join } = require("node:path");

const runtime = typeof Bun !== "undefined" ? `bun ${Bun.version}` : `node ${process.version}`;
const entry = require.resolve("cairnq");
assert.match(entry, /node_modules[\\/]cairnq[\\/]/, `cairnq resolved outside node_modules: ${entry}`);

async function main() {
  const dir = mkdtempSync(join(tmpdir(), "cairnq-smoke-"));
  try {
    const path = join(dir, "queue.db");
    const add = defineTask("add");
    const worker = Worker.sqlite(path, { pollIntervalMs: 20 })
      .task(add, (_ctx, { a, b }) => a + b)
      .task("boom", () => {
        throw new Error("boom on purpose");
      });
    const client = CairnQ.sqlite(path);

    const [sum, failure] = await worker.background(async () => {
      const sum = await client.call(add, { a: 20, b: 22 }, { waitTimeoutMs: 20_000 });
      const failure = await client.call("boom", {}, { maxAttempts: 1, waitTimeoutMs: 20_000 }).then(
        () => null,
        (err) => err,
      );
      return [sum, failure];
    });
    await client.close();

    assert.equal(sum, 42);
    assert.ok(failure instanceof TaskFailed, `expected TaskFailed, got ${failure}`);
    assert.equal(failure.message, "boom on purpose");
    console.log(
      `ok smoke.cjs (require) on ${runtime}: call -> ${sum}, failure -> ${failure.name}; cairnq from ${entry}`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
