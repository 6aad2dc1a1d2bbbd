// Worker throughput and latency on SQLite (or, with --pg=DSN, Postgres):
// - drain of no-op tasks at concurrency 1, 8 and 64, and batched (batch 256);
// - event-loop delay (monitorEventLoopDelay) during the concurrency-64 drain;
// - call() latency, p50/p95, with the worker in another process.
// Usage: node bench/worker.mjs [--reps=3] [--n=2000] [--calls=300] [--pg=postgres://…]
import { fork } from "node:child_process";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { argValue, benchTarget, openClient, openWorker, percentile, repeat, throughput } from "./lib.mjs";

const reps = Number(argValue("reps", 3));
const n = Number(argValue("n", 2000));
const calls = Number(argValue("calls", 300));
const target = benchTarget();

/** Submit `n` tasks, then time a worker draining them all; returns tasks/s. */
async function drain({ concurrency, batch, loopDelay }) {
  const location = target.fresh("drain");
  const client = openClient(location);
  await throughput(n, 64, (i) => client.submit("noop", { i }));
  const worker = openWorker(location, { pollIntervalMs: 5 });
  let done = 0;
  let finished;
  const allDone = new Promise((resolve) => (finished = resolve));
  const count = (k) => {
    done += k;
    if (done >= n) finished();
  };
  if (batch) {
    worker.task("noop", { batch }, (items) => count(items.length));
  } else {
    worker.task("noop", () => count(1));
  }
  const histogram = loopDelay ? monitorEventLoopDelay({ resolution: 1 }) : null;
  histogram?.enable();
  const started = process.hrtime.bigint();
  const running = worker.run({ concurrency });
  await allDone;
  // The last settlements commit after the handlers return: wait for them too.
  while ((await client.stats()).default.succeeded < n) await new Promise((r) => setTimeout(r, 1));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  histogram?.disable();
  worker.stop();
  await running;
  await worker.close();
  await client.close();
  target.release(location);
  if (histogram) loopDelays.push(histogram.max / 1e6);
  return n / seconds;
}

const loopDelays = [];
console.log(`cairnq worker benchmark — ${target.name}, ${n} no-op tasks per drain, ${reps} repetitions, median (min, max)`);
await repeat("drain, concurrency 1", reps, () => drain({ concurrency: 1 }), "tasks/s");
await repeat("drain, concurrency 8", reps, () => drain({ concurrency: 8 }), "tasks/s");
await repeat("drain, concurrency 64", reps, () => drain({ concurrency: 64, loopDelay: true }), "tasks/s");
console.log(`  event-loop max delay during the concurrency-64 drains: ${loopDelays.map((d) => d.toFixed(1)).join(", ")} ms`);
await repeat("drain, batch 256", reps, () => drain({ concurrency: 4, batch: 256 }), "tasks/s");

for (const pollMs of [5, 500]) {
  const location = target.fresh("call");
  const child = fork(new URL("./echo-worker.mjs", import.meta.url), [location, String(pollMs)]);
  await new Promise((resolve) => child.once("message", resolve));
  const client = openClient(location);
  for (let i = 0; i < 20; i++) await client.call("echo", { i }, { pollMs: 1 });
  const latencies = [];
  for (let i = 0; i < calls; i++) {
    const started = process.hrtime.bigint();
    await client.call("echo", { i }, { pollMs: 1 });
    latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  console.log(
    `call() latency, worker in another process (poll ${pollMs} ms, wait poll 1 ms): ` +
      `p50 ${percentile(latencies, 50).toFixed(2)} ms, p95 ${percentile(latencies, 95).toFixed(2)} ms (n=${calls})`,
  );
  child.kill("SIGTERM");
  await client.close();
  await new Promise((resolve) => child.once("exit", resolve));
  target.release(location);
}
