// Resident memory under a long run: a client submitting n tasks (64 in flight),
// then, in another process, a worker draining those n no-op tasks (concurrency
// 64). Each phase samples process.memoryUsage().rss every 250 ms.
//   node bench/memory.mjs [--entry=index.mjs] [--n=600000] [--pg=postgres://…] [--json]
// Reports per phase: the RSS curve (10 points), quartile means, whether the last
// quarter's mean is within 5% of the third's (plateau) and the peak. --json
// prints one JSON line {client, worker} instead (bench/compare.mjs reads it).
import { Worker as Thread } from "node:worker_threads";
import {
  argFlag,
  argNumber,
  argValue,
  benchTarget,
  entryPath,
  isMain,
  loadPackage,
  mean,
  openClient,
  openWorker,
  pgDsn,
  runNode,
  seconds,
  throughput,
  until,
} from "./lib.mjs";

const n = argNumber("n", 600_000);
const timeoutMs = argNumber("timeout", 1800) * 1000;
const MB = 1024 * 1024;

/** `values` cut into `k` contiguous parts of nearly equal length (no empty part). */
function parts(values, k) {
  const out = [];
  for (let i = 0; i < k; i++) {
    const part = values.slice(Math.floor((i * values.length) / k), Math.floor(((i + 1) * values.length) / k));
    if (part.length) out.push(part);
  }
  return out;
}

function summarize({ samples, seconds: secs }) {
  const quartiles = parts(samples, 4).map(mean);
  const [q3, q4] = quartiles.slice(-2);
  return {
    seconds: secs,
    rate: n / secs,
    peakMB: Math.max(...samples),
    quartilesMB: quartiles,
    plateau: quartiles.length === 4 && Math.abs(q4 - q3) <= 0.05 * q3,
    curveMB: parts(samples, 10).map(mean),
  };
}

// The sampler runs on its own thread: a package that keeps the main event loop
// busy (synchronous SQLite) would starve a timer there. RSS is process-wide.
const SAMPLER = `
const { workerData } = require("node:worker_threads");
const control = new Int32Array(workerData, 0, 2); // [samples taken, stop]
const samples = new Float64Array(workerData, 8);
const take = () => {
  const i = Atomics.load(control, 0);
  if (i < samples.length) (samples[i] = process.memoryUsage.rss() / ${MB}), Atomics.store(control, 0, i + 1);
};
take();
const timer = setInterval(() => (Atomics.load(control, 1) ? clearInterval(timer) : take()), 250);
`;

/** Sample RSS (MB) every 250 ms while `work()` runs. */
async function sampled(work) {
  const sab = new SharedArrayBuffer(8 + 8 * 100_000);
  const control = new Int32Array(sab, 0, 2);
  const thread = new Thread(SAMPLER, { eval: true, workerData: sab });
  await until("the sampler's first sample", () => Atomics.load(control, 0) > 0, { everyMs: 1, timeoutMs: 10_000 });
  const started = process.hrtime.bigint();
  try {
    await work();
  } finally {
    Atomics.store(control, 1, 1);
  }
  const secs = seconds(started);
  const last = process.memoryUsage.rss() / MB;
  await thread.terminate();
  const samples = [...new Float64Array(sab, 8, Atomics.load(control, 0)), last];
  return { samples, seconds: secs };
}

async function clientPhase(pkg, location) {
  const client = openClient(pkg, location);
  await client.connect();
  try {
    return await sampled(() => throughput(n, 64, () => client.submit("noop", {})));
  } finally {
    await client.close();
  }
}

async function workerPhase(pkg, location) {
  const client = openClient(pkg, location);
  await client.connect();
  const worker = openWorker(pkg, location, { pollIntervalMs: 50 });
  let handled = 0;
  worker.task("noop", () => void handled++);
  let running;
  try {
    return await sampled(async () => {
      running = worker.run({ concurrency: 64 });
      await until("every task handled", () => handled >= n, { everyMs: 50, timeoutMs });
      await until("stats() showing every task succeeded", async () => (await client.stats()).default?.succeeded >= n, {
        everyMs: 5,
        timeoutMs,
      });
    });
  } finally {
    worker.stop();
    await running?.catch(() => {});
    await worker.close();
    await client.close();
  }
}

if (isMain(import.meta.url)) {
  const phase = argValue("phase", null);
  if (phase) {
    const run = phase === "client" ? clientPhase : workerPhase;
    console.log(JSON.stringify(await run(await loadPackage(), argValue("location"))));
    process.exit(0);
  }
  const target = benchTarget();
  const entry = entryPath();
  const pg = pgDsn();
  const result = {};
  try {
    const location = target.fresh("memory");
    for (const name of ["client", "worker"]) {
      const args = [
        `--phase=${name}`,
        `--entry=${entry}`,
        `--location=${location}`,
        `--n=${n}`,
        `--timeout=${timeoutMs / 1000}`,
      ];
      if (pg) args.push(`--pg=${pg}`);
      const label = `memory ${name} phase (n=${n}, ${entry})`;
      result[name] = summarize(await runNode("memory.mjs", args, { label, timeoutMs: timeoutMs + 30_000 }));
    }
  } finally {
    target.cleanup();
  }
  if (argFlag("json")) {
    console.log(JSON.stringify(result));
  } else {
    console.log(`cairnq memory — ${entry} on ${target.name}, n=${n}`);
    for (const [name, s] of Object.entries(result)) {
      const what = name === "client" ? "client submitting, 64 in flight" : "worker draining, concurrency 64";
      console.log(`${what}: ${s.seconds.toFixed(1)} s (${Math.round(s.rate)}/s), peak ${s.peakMB.toFixed(0)} MB`);
      console.log(
        `  quartile means ${s.quartilesMB.map((q) => q.toFixed(0)).join(" / ")} MB, plateau: ${s.plateau ? "yes" : "no"}`,
      );
      console.log(`  curve (MB): ${s.curveMB.map((q) => q.toFixed(0)).join(" ")}`);
    }
  }
}
