// A handler that blocks the event loop well past its lease must still run
// exactly once: leases are renewed off the JS thread. Two Worker instances
// (two worker ids) poll the same file in this process; if the first one's
// lease lapsed during the block, the second would claim the task again.
import { CairnQ, Worker } from "cairnq";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

const runtime = typeof Bun !== "undefined" ? `bun ${Bun.version}` : `node ${process.version}`;
const LEASE_MS = 500;
const BLOCK_MS = 1500;

const dir = mkdtempSync(join(tmpdir(), "cairnq-blocked-"));
try {
  const path = join(dir, "queue.db");
  const runs = [];
  const reported = [];
  const options = {
    leaseMs: LEASE_MS,
    pollIntervalMs: 20,
    onError: (err, info) => reported.push(`${info.phase}: ${err?.name}: ${err?.message}`),
  };
  const blockFor = (workerName) => (ctx) => {
    runs.push({ worker: workerName, attempt: ctx.attempt });
    const until = Date.now() + BLOCK_MS;
    while (Date.now() < until) {
      // a synchronous, CPU-bound handler: the event loop is stuck here
    }
    return { blockedMs: BLOCK_MS };
  };
  const first = Worker.sqlite(path, options).task("block", blockFor("first"));
  const second = Worker.sqlite(path, options).task("block", blockFor("second"));
  const client = CairnQ.sqlite(path);

  const running = [first.run(), second.run()];
  const result = await client.call("block", {}, { waitTimeoutMs: 30_000 });
  // Leave more than a lease for a duplicate claim to show up.
  await sleep(LEASE_MS * 3);
  first.stop();
  second.stop();
  await Promise.all(running);

  const [task] = await client.list({ name: "block" });
  await Promise.all([first.close(), second.close(), client.close()]);

  assert.deepEqual(result, { blockedMs: BLOCK_MS });
  assert.equal(runs.length, 1, `handler ran ${runs.length} times: ${JSON.stringify(runs)}`);
  assert.equal(task.status, "succeeded");
  assert.equal(task.attempt, 1, `task was claimed ${task.attempt} times`);
  const blocked = reported.filter((line) => line.includes("EventLoopBlocked")).length;
  const other = reported.filter((line) => !line.includes("EventLoopBlocked"));
  assert.deepEqual(other, [], "unexpected onError reports");
  console.log(
    `ok blocked.mjs on ${runtime}: lease ${LEASE_MS}ms, handler blocked ${BLOCK_MS}ms, ran once (attempt 1)` +
      `; EventLoopBlocked reports: ${blocked}`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
