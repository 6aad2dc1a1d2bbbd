// Queue pause and resume propagation across processes (docs/api.md, "Queue
// pauses"), this package only, standalone:
//   node bench/pauses.mjs [--processes=3] [--rounds=10] [--poll=1000] [--pg=postgres://…]
//
// `--processes` worker processes (bench/fleet-worker.mjs --starts,
// concurrency 8, poll `--poll` ms) run no-op tasks that this process submits one after
// another the whole time. Each round pauses the queue, waits 1.5 s, then
// resumes it and waits for the next start. Timed, with Date.now() of this
// machine: pause, from pauseQueue() resolving (its commit is before) to the
// last handler start of any process after it (0 when none started);
// resume, from calling resumeQueue() to the first handler start after it.
// p50 and max of each over the rounds.
import { fork } from "node:child_process";
import path from "node:path";
import { BENCH_DIR, argNumber, benchTarget, entryPath, loadPackage, median, openClient, sleep, until } from "./lib.mjs";

const pkg = await loadPackage();
const target = benchTarget();
const processes = argNumber("processes", 3);
const rounds = argNumber("rounds", 10);
const poll = argNumber("poll", 1000);

const location = target.fresh("pauses");
const client = openClient(pkg, location);
await client.connect();
const starts = [];
const children = [];
for (let i = 0; i < processes; i++) {
  const child = fork(
    path.join(BENCH_DIR, "fleet-worker.mjs"),
    [`--location=${location}`, `--entry=${entryPath()}`, `--poll=${poll}`, "--concurrency=8", "--starts"],
    { stdio: ["ignore", "inherit", "inherit", "ipc"] },
  );
  child.on("message", (m) => m.starts && starts.push(...m.starts));
  await new Promise((resolve) => child.once("message", resolve));
  children.push(child);
}
for (const child of children) child.send("go");

let feeding = true;
const feeder = (async () => {
  while (feeding) {
    await client.submit("job", {});
    await sleep(2);
  }
})();

const pauseMs = [];
const resumeMs = [];
try {
  await until("first starts", () => starts.length > 50, { timeoutMs: 60_000 });
  for (let round = 0; round < rounds; round++) {
    await sleep(500);
    await client.pauseQueue("default");
    const pausedAt = Date.now();
    await sleep(1500);
    const after = starts.filter((at) => at > pausedAt);
    pauseMs.push(after.length === 0 ? 0 : Math.max(...after) - pausedAt);
    const resumedAt = Date.now();
    await client.resumeQueue("default");
    await until("a start after the resume", () => starts.some((at) => at >= resumedAt), { everyMs: 1 });
    resumeMs.push(Math.min(...starts.filter((at) => at >= resumedAt)) - resumedAt);
  }
} finally {
  feeding = false;
  await feeder;
  for (const child of children) child.disconnect();
  await Promise.all(children.map((child) => new Promise((resolve) => child.once("exit", resolve))));
  await client.close();
  target.cleanup();
}

const max = (values) => Math.max(...values);
console.log(`${target.name}, ${processes} worker processes, poll ${poll} ms, ${rounds} rounds`);
console.log(`pause  (last start after pauseQueue):  p50 ${median(pauseMs)} ms, max ${max(pauseMs)} ms  [${pauseMs}]`);
console.log(
  `resume (first start after resumeQueue): p50 ${median(resumeMs)} ms, max ${max(resumeMs)} ms  [${resumeMs}]`,
);
