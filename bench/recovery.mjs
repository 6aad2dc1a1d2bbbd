// Crash recovery and lease safety with a worker's default options
// (docs/api.md, "Worker options": leaseMs 4 000, a beat every 1 000 ms, an
// idle poll every 500 ms). Never pass/fail: it prints figures.
//
//   node bench/recovery.mjs [--reps=10] [--pg=postgres://…] [--load-s=60]
//
// 1. Recovery: a worker process takes a task whose handler hangs; at a
//    random point of its beat cycle it is SIGKILLed; another worker process,
//    idle and polling, takes the task over. The figure is the time from the
//    SIGKILL to the task running under the other worker (read from the
//    database every 5 ms).
// 2. Beats under load (SQLite): a worker runs tasks sleeping longer than the
//    load lasts while a second process keeps SQLite's write lock busy
//    (transactions of 250 ms, 50 ms apart: SQLite's
//    busy wait polls, so a writer that never pauses starves every other one) and one busy-looping process per
//    core takes the CPU. The database is read every 20 ms: each renewal of a
//    lease is a beat, the gap between two renewals the beat gap, and the
//    margin what was left of the lease when it was renewed. A lease that ran
//    out shows as a margin below 0, a task claimed again as an attempt above 1.
import { execFile, fork, spawn } from "node:child_process";
import os from "node:os";
import path from "node:path";

import { BENCH_DIR, argNumber, benchTarget, entryPath, loadPackage, median, openClient, sleep } from "./lib.mjs";

const pkg = await loadPackage();
const target = benchTarget();
const reps = argNumber("reps", 10);
const loadSeconds = argNumber("load-s", 60);

/** A recovery-worker.mjs process; resolves once it told its worker id. */
async function startWorker(location, mode, extra = []) {
  const child = fork(
    path.join(BENCH_DIR, "recovery-worker.mjs"),
    [`--entry=${entryPath()}`, `--location=${location}`, `--mode=${mode}`, ...extra],
    { stdio: ["ignore", "inherit", "inherit", "ipc"] },
  );
  const { workerId } = await new Promise((resolve) => child.once("message", resolve));
  return { child, workerId, exited: new Promise((resolve) => child.once("exit", resolve)) };
}

async function until(check, everyMs) {
  for (;;) {
    const value = await check();
    if (value) return value;
    await sleep(everyMs);
  }
}

async function recoveryOnce() {
  const location = target.fresh("recovery");
  const client = openClient(pkg, location);
  const task = await client.submit("job");
  const victim = await startWorker(location, "hang");
  await until(async () => (await client.get(task.id)).status === "running", 5);
  const rescuer = await startWorker(location, "ok");
  await sleep(Math.random() * 1_000); // anywhere in the beat cycle
  victim.child.kill("SIGKILL");
  const killedAt = performance.now();
  await victim.exited;
  await until(async () => {
    const row = await client.get(task.id);
    return row.status !== "queued" && row.worker_id === rescuer.workerId;
  }, 5);
  const ms = performance.now() - killedAt;
  rescuer.child.kill("SIGTERM");
  await rescuer.exited;
  await client.close();
  target.release(location);
  return ms;
}

const python = process.env.CAIRNQ_PYTHON ?? "python3";
const HOLD_WRITE_LOCK = `
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=60)
c.execute("create table if not exists bench_load (v blob)")
end = time.time() + float(sys.argv[2])
held = 0
while time.time() < end:
    c.execute("begin immediate")
    c.execute("insert into bench_load values (randomblob(65536))")
    time.sleep(0.25)
    c.execute("commit")
    held += 1
    time.sleep(0.05)
print(held)
`;

async function beatsUnderLoad() {
  const location = target.fresh("load");
  const client = openClient(pkg, location);
  const ids = [];
  for (let i = 0; i < 4; i++) ids.push((await client.submit("job")).id);
  const worker = await startWorker(location, "sleep", [`--sleep=${(loadSeconds + 30) * 1000}`]);
  await until(
    async () => (await Promise.all(ids.map((id) => client.get(id)))).every((r) => r.status === "running"),
    20,
  );
  const writer = new Promise((resolve, reject) =>
    execFile(python, ["-c", HOLD_WRITE_LOCK, location, String(loadSeconds)], (err, out) =>
      err ? reject(err) : resolve(Number(out.trim())),
    ),
  );
  const hogs = os.cpus().map(() => spawn(process.execPath, ["-e", "for(;;){}"], { stdio: "ignore" }));
  const last = new Map();
  const gaps = [];
  const margins = [];
  let maxAttempt = 1;
  const end = performance.now() + loadSeconds * 1000;
  while (performance.now() < end) {
    for (const row of await Promise.all(ids.map((id) => client.get(id)))) {
      maxAttempt = Math.max(maxAttempt, row.attempt);
      const before = last.get(row.id);
      if (before && row.lease_until_ms !== before.lease_until_ms) {
        gaps.push(row.updated_at_ms - before.updated_at_ms);
        margins.push(before.lease_until_ms - row.updated_at_ms);
      }
      last.set(row.id, row);
    }
    await sleep(20);
  }
  for (const hog of hogs) hog.kill("SIGKILL");
  const transactions = await writer;
  worker.child.kill("SIGKILL");
  await worker.exited;
  await client.close();
  target.release(location);
  return { transactions, gaps, margins, maxAttempt };
}

const times = [];
for (let i = 0; i < reps; i++) times.push(await recoveryOnce());
times.sort((a, b) => a - b);
const show = (ms) => `${(ms / 1000).toFixed(2)} s`;
console.log(
  `${target.name}: SIGKILL to the task running elsewhere, ${reps} runs (default lease 4 000 ms, poll 500 ms)`,
);
console.log(`  min ${show(times[0])}  median ${show(median(times))}  max ${show(times.at(-1))}`);

if (!target.pg) {
  const load = await beatsUnderLoad();
  const gaps = load.gaps.sort((a, b) => a - b);
  console.log(
    `SQLite under load for ${loadSeconds} s (${load.transactions} write transactions of 250 ms, 50 ms apart, by another process, ${os.cpus().length} busy-looping processes):`,
  );
  console.log(
    `  ${gaps.length} beats; gap median ${median(gaps)} ms, max ${gaps.at(-1)} ms (interval 1 000); ` +
      `least lease left at a renewal ${Math.min(...load.margins)} ms of 4 000; highest attempt ${load.maxAttempt}`,
  );
}
target.cleanup();
