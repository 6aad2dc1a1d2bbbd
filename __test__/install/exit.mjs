// Worker start / stop / close, then nothing: the process must exit by itself
// (no referenced native handle, thread-safe function or timer left behind).
// The caller runs this under a timeout; a hang is a failure.
import { CairnQ, Worker } from "cairnq";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const runtime = typeof Bun !== "undefined" ? `bun ${Bun.version}` : `node ${process.version}`;
const dir = mkdtempSync(join(tmpdir(), "cairnq-exit-"));
const path = join(dir, "queue.db");

// 1. A worker that ran a task, stopped, and closed its store.
const worker = Worker.sqlite(path, { pollIntervalMs: 50 }).task("echo", (_ctx, payload) => payload);
const client = CairnQ.sqlite(path);
const running = worker.run({ concurrency: 2 });
const echoed = await client.call("echo", { hello: "world" }, { waitTimeoutMs: 20_000 });
assert.deepEqual(echoed, { hello: "world" });
worker.stop();
await running;
await worker.close();

// 2. A worker stopped while idle in a long poll sleep: run() must settle at once.
const idle = Worker.sqlite(path, { pollIntervalMs: 5_000 }).task("never", () => null);
const idleRun = idle.run();
await new Promise((resolve) => setTimeout(resolve, 200));
const stoppedAt = Date.now();
idle.stop();
await idleRun;
const stopMs = Date.now() - stoppedAt;
assert.ok(stopMs < 1_000, `run() took ${stopMs}ms to settle after stop()`);
await idle.close();

// 3. serve(): no signal listeners are left behind.
const served = Worker.sqlite(path, { pollIntervalMs: 50 }).task("echo", (_ctx, payload) => payload);
const serving = served.serve();
await client.call("echo", 1, { waitTimeoutMs: 20_000 });
served.stop();
await serving;
assert.equal(process.listenerCount("SIGINT"), 0, "SIGINT listener left behind");
assert.equal(process.listenerCount("SIGTERM"), 0, "SIGTERM listener left behind");

await client.close();
rmSync(dir, { recursive: true, force: true });
console.log(
  `ok exit.mjs on ${runtime}: worker run/stop/close done (idle stop took ${stopMs}ms); waiting for the process to exit by itself`,
);
