// Install smoke test, ES-module form: run from a fresh folder where the
// packed `cairnq` and its platform package were installed from tarballs
// (scripts/release/install-proof.sh). Prints one `ok` line; exits non-zero on failure.
// It never calls process.exit on success: the runtime must exit by itself.
import { CairnQ, TaskFailed, Worker, defineTask } from "cairnq";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";

const runtime = typeof Bun !== "undefined" ? `bun ${Bun.version}` : `node ${process.version}`;
const require = createRequire(import.meta.url);
const entry = require.resolve("cairnq");
assert.match(entry, /node_modules[\\/]cairnq[\\/]/, `cairnq resolved outside node_modules: ${entry}`);

const dir = mkdtempSync(join(tmpdir(), "cairnq-smoke-"));
try {
  const path = join(dir, "queue.db");
  const add = defineTask("add");
  const worker = Worker.sqlite(path, { pollIntervalMs: 20 })
    .task(add, (_ctx, { a, b }) => a + b)
    .task("boom", async () => {
      throw new Error("boom on purpose");
    });
  const client = CairnQ.sqlite(path);

  const [sum, failure] = await worker.background(async () => {
    const sum = await client.call(add, { a: 2, b: 3 }, { waitTimeoutMs: 20_000 });
    const failure = await client.call("boom", {}, { maxAttempts: 1, waitTimeoutMs: 20_000 }).then(
      () => null,
      (err) => err,
    );
    return [sum, failure];
  });
  await client.close();

  assert.equal(sum, 5);
  assert.ok(failure instanceof TaskFailed, `expected TaskFailed, got ${failure}`);
  assert.equal(failure.message, "boom on purpose");
  console.log(`ok smoke.mjs (import) on ${runtime}: call -> ${sum}, failure -> ${failure.name}; cairnq from ${entry}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
