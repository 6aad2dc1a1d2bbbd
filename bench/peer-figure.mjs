// One repetition of one figure for one system of bench/peers.mjs, in its own
// process: `--system=ID --figure=ID --location=…`; prints one JSON line.
import { spawn } from "node:child_process";
import { once } from "node:events";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { BENCH_DIR, argNumber, argValue, median, percentile, seconds, throughput, until } from "./lib.mjs";

export const SYSTEMS = {
  "cairnq-sqlite": { module: "cairnq", store: "sqlite", call: true, bulk: true },
  "cairnq-pg": { module: "cairnq", store: "pg", call: true, bulk: true },
  bullmq: { module: "bullmq", store: "redis", call: true, bulk: true },
  "graphile-worker": { module: "graphile-worker", store: "pg", bulk: true },
  "pg-boss": { module: "pg-boss", store: "pg", bulk: true },
  dbos: { module: "dbos", store: "pg", call: true },
};

export const FIGURES = {
  "submit-seq": { name: "submit, sequential (ops/s)", run: (s, n) => throughput(n.submit, 1, (i) => s.submit({ i })) },
  "submit-64": {
    name: "submit, 64 in flight (ops/s)",
    run: (s, n) => throughput(n.submit, 64, (i) => s.submit({ i })),
  },
  bulk: { name: "bulk submit, one call (tasks/s)", run: bulk, needs: "bulk" },
  "drain-1": { name: "drain, concurrency 1 (tasks/s)", run: (s, n) => drain(s, n.drain, 1) },
  "drain-8": { name: "drain, concurrency 8 (tasks/s)", run: (s, n) => drain(s, n.drain, 8) },
  "drain-64": { name: "drain, concurrency 64 (tasks/s)", run: (s, n) => drain(s, n.drain, 64) },
  call: { name: "enqueue and await, p50 (ms, lower is better)", lower: true, run: call, needs: "call" },
};

export function peerSizes() {
  return {
    submit: argNumber("submit-n", 2000),
    bulk: argNumber("bulk-n", 10000),
    drain: argNumber("drain-n", 2000),
    calls: argNumber("calls", 300),
    warmup: argNumber("warmup", 20),
  };
}

export function openSystem(id, location) {
  const system = SYSTEMS[id];
  if (!system) throw new Error(`--system must be one of ${Object.keys(SYSTEMS).join(", ")}`);
  const file = path.join(BENCH_DIR, "peers", "systems", `${system.module}.mjs`);
  return import(pathToFileURL(file).href).then((m) => m.open(location));
}

async function bulk(system, n) {
  const payloads = Array.from({ length: n.bulk }, (_, i) => ({ i }));
  const started = process.hrtime.bigint();
  await system.submitMany(payloads);
  return n.bulk / seconds(started);
}

async function drain(system, count, concurrency) {
  for (let from = 0; from < count; from += 1000) {
    await system.submitMany(Array.from({ length: Math.min(1000, count - from) }, (_, i) => ({ i: from + i })));
  }
  let done = 0;
  const started = process.hrtime.bigint();
  await system.work(concurrency, () => {
    done += 1;
    return null;
  });
  await until("drained", () => done >= count, { everyMs: 5, timeoutMs: 600_000 });
  return count / seconds(started);
}

async function call(system, n, { id, location }) {
  // The worker runs in another process, as an application's would.
  const worker = spawn(
    process.execPath,
    [path.join(BENCH_DIR, "peer-worker.mjs"), `--system=${id}`, `--location=${location}`],
    {
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  const exited = once(worker, "exit");
  const latencies = [];
  try {
    await readyLine(worker);
    for (let i = 0; i < n.warmup + n.calls; i += 1) {
      const started = process.hrtime.bigint();
      await system.call({ i });
      if (i >= n.warmup) latencies.push(seconds(started) * 1000);
    }
  } finally {
    worker.kill("SIGTERM");
    await exited;
  }
  return { value: median(latencies), detail: { p99: percentile(latencies, 99) } };
}

function readyLine(child) {
  return new Promise((resolve, reject) => {
    let seen = "";
    child.stdout.on("data", (chunk) => {
      seen += chunk;
      if (seen.includes("ready\n")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`the echo worker exited with ${code} before it was ready`)));
  });
}

async function main() {
  const id = argValue("system");
  const figure = FIGURES[argValue("figure")];
  if (!figure) throw new Error(`--figure must be one of ${Object.keys(FIGURES).join(", ")}`);
  const location = argValue("location");
  const system = await openSystem(id, location);
  try {
    const answer = await figure.run(system, peerSizes(), { id, location });
    console.log(JSON.stringify(typeof answer === "number" ? { value: answer } : answer));
  } finally {
    await system.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) await main();
