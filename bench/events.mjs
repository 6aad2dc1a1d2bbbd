// Events figures (docs/api.md, "Events"), this package only (the reference
// has no events), standalone:
//   node bench/events.mjs [--n=2000] [--calls=300] [--reps=3] [--pg=postgres://…]
//
// 1. delivery: 10 listener processes (bench/events-listener.mjs) subscribed
//    while `--n` tasks are submitted and drained by a worker of this process
//    at concurrency 64; each event's latency from its write (`at`) to its
//    receipt in a listener, p50 and p99 over every listener, and each task's
//    history checked (queued → started → succeeded: none missing, none out
//    of order), and the CPU time a listener process spent on them (median);
//    the p50 of each kind apart.
// 2. guard: the drain (`--n` tasks, concurrency 64), `--n` sequential
//    submits and `--calls` sequential call()s (worker in this process,
//    concurrency 8) on a database without the events table, with it and no
//    listener, and with 1 and 10 listener processes attached. The
//    repetitions take the variants in turn, so noise spreads over all.
import { fork } from "node:child_process";

import {
  argNumber,
  benchTarget,
  loadPackage,
  median,
  openClient,
  openWorker,
  percentile,
  seconds,
  sleep,
  until,
  withTimeout,
} from "./lib.mjs";

const pkg = await loadPackage();
const target = benchTarget();
const n = argNumber("n", 2000);
const calls = argNumber("calls", 300);
const reps = argNumber("reps", 3);
const entry = new URL("../index.mjs", import.meta.url).pathname;

/** `count` listener processes on `location`, each ready; `stop()` ends them. */
async function listeners(location, count, tasks = 0) {
  const children = Array.from({ length: count }, () =>
    fork(
      new URL("./events-listener.mjs", import.meta.url),
      [`--entry=${entry}`, `--location=${location}`, `--tasks=${tasks}`],
      { stdio: "inherit" },
    ),
  );
  const reports = children.map(
    (child) =>
      new Promise((resolve, reject) => {
        child.on("message", (m) => m !== "ready" && resolve(m));
        child.once("exit", (code) => reject(new Error(`a listener exited (${code}) before its report`)));
      }),
  );
  for (const report of reports) report.catch(() => {});
  await Promise.all(
    children.map((child) =>
      withTimeout(new Promise((resolve) => child.on("message", (m) => m === "ready" && resolve())), 60_000, "listener"),
    ),
  );
  return {
    reports,
    async stop() {
      await Promise.all(
        children.map((child) => {
          if (child.exitCode !== null) return null;
          const exited = new Promise((resolve) => child.once("exit", resolve));
          if (child.connected) child.disconnect();
          return exited;
        }),
      );
    },
  };
}

/** A fresh database with the events table (unless `table` is false) and `count` listeners. */
async function prepared(label, { table, count, tasks = 0 }) {
  const location = target.fresh(label);
  const client = openClient(pkg, location);
  await client.connect();
  if (table) {
    const subscription = client.events();
    await subscription.ready();
    subscription.close();
  }
  const attached = await listeners(location, count, tasks);
  return {
    location,
    client,
    attached,
    async release() {
      await attached.stop();
      await client.close();
      target.release(location);
    },
  };
}

/** Submit `count` noop tasks, 64 in flight, in submitMany batches of 500. */
async function seedNoops(client, count) {
  for (let at = 0; at < count; at += 500) {
    const size = Math.min(500, count - at);
    await client.submitMany(Array.from({ length: size }, (_, i) => ({ task: "noop", payload: { i: at + i } })));
  }
}

/**
 * A worker (poll 50 ms, concurrency 64) draining `count` queued noops: tasks/s,
 * and this process's CPU time a task (µs), which the machine's other load
 * moves less than the rate.
 */
async function drain(location, count) {
  const worker = openWorker(pkg, location, { pollIntervalMs: 50, concurrency: 64 });
  let done = 0;
  worker.task("noop", () => {
    done += 1;
    return null;
  });
  const started = process.hrtime.bigint();
  const cpuAtStart = process.cpuUsage();
  const running = worker.run();
  await until("drained", () => done >= count, { everyMs: 5, timeoutMs: 600_000 });
  const rate = count / seconds(started);
  const cpu = process.cpuUsage(cpuAtStart);
  worker.stop();
  await running;
  await worker.close();
  return { rate, cpuUs: (cpu.user + cpu.system) / count };
}

async function delivery() {
  const setup = await prepared("delivery", { table: true, count: 10, tasks: n });
  try {
    await seedNoops(setup.client, n);
    await drain(setup.location, n);
    const reports = await withTimeout(Promise.all(setup.attached.reports), 300_000, "listener reports");
    const all = reports.flatMap((r) => r.latencies);
    const kinds = Object.keys(reports[0].byKind);
    return {
      byKind: kinds
        .map(
          (kind) =>
            `${kind} ${percentile(
              reports.flatMap((r) => r.byKind[kind]),
              50,
            )}`,
        )
        .join(", "),
      p50: percentile(all, 50),
      p99: percentile(all, 99),
      events: all.length,
      missing: reports.reduce((sum, r) => sum + r.missing, 0),
      wrong: reports.reduce((sum, r) => sum + r.wrong, 0),
      cpuMs: median(reports.map((r) => r.cpuMs)),
    };
  } finally {
    await setup.release();
  }
}

const VARIANTS = [
  { label: "no events table", table: false, count: 0 },
  { label: "table, 0 listeners", table: true, count: 0 },
  { label: "1 listener", table: true, count: 1 },
  { label: "10 listeners", table: true, count: 10 },
];

async function guard(variant) {
  const figures = {};
  let setup = await prepared("drain", variant);
  try {
    await seedNoops(setup.client, n);
    await sleep(500);
    ({ rate: figures.drain, cpuUs: figures.drainCpu } = await drain(setup.location, n));
  } finally {
    await setup.release();
  }
  setup = await prepared("submit", variant);
  try {
    const started = process.hrtime.bigint();
    for (let i = 0; i < n; i++) await setup.client.submit("job", { i });
    figures.submit = n / seconds(started);
  } finally {
    await setup.release();
  }
  setup = await prepared("call", variant);
  const worker = openWorker(pkg, setup.location, { pollIntervalMs: 50, concurrency: 8 });
  worker.task("echo", (_ctx, payload) => payload);
  const running = worker.run();
  try {
    for (let i = 0; i < 20; i++) await setup.client.call("echo", { i });
    const latencies = [];
    for (let i = 0; i < calls; i++) {
      const started = process.hrtime.bigint();
      await setup.client.call("echo", { i });
      latencies.push(seconds(started) * 1000);
    }
    figures.call = percentile(latencies, 50);
  } finally {
    worker.stop();
    await running;
    await worker.close();
    await setup.release();
  }
  return figures;
}

console.log(
  `node bench/events.mjs ${process.argv.slice(2).join(" ")} (${target.name}, n=${n}, calls=${calls}, reps=${reps})`,
);
try {
  const deliveries = [];
  for (let rep = 0; rep < reps; rep++) {
    const d = await delivery();
    deliveries.push(d);
    console.log(
      `delivery rep ${rep + 1}: p50 ${d.p50.toFixed(2)} ms, p99 ${d.p99.toFixed(2)} ms, ${d.events} events, ${d.missing} tasks missing, ${d.wrong} histories wrong, ${d.cpuMs.toFixed(0)} ms CPU a listener; p50 by kind (ms): ${d.byKind}`,
    );
  }
  const samples = VARIANTS.map(() => ({ drain: [], drainCpu: [], submit: [], call: [] }));
  for (let rep = 0; rep < reps; rep++) {
    for (const [i, variant] of VARIANTS.entries()) {
      const f = await guard(variant);
      for (const key of Object.keys(f)) samples[i][key].push(f[key]);
      console.log(
        `guard rep ${rep + 1}, ${variant.label}: drain ${f.drain.toFixed(0)} tasks/s (${f.drainCpu.toFixed(1)} µs CPU a task), submit ${f.submit.toFixed(0)} ops/s, call() p50 ${f.call.toFixed(2)} ms`,
      );
    }
  }
  console.log("\n| figure | median | min | max |\n| --- | --- | --- | --- |");
  for (const key of ["p50", "p99", "cpuMs"]) {
    const values = deliveries.map((d) => d[key]);
    console.log(
      `| delivery ${key === "cpuMs" ? "CPU a listener" : key}, 10 listener processes, ${n}-task drain at 64 (ms) | ${median(values).toFixed(2)} | ${Math.min(...values).toFixed(2)} | ${Math.max(...values).toFixed(2)} |`,
    );
  }
  const base = samples[0];
  for (const [i, variant] of VARIANTS.entries()) {
    for (const [key, unit] of [
      ["drain", "tasks/s"],
      ["drainCpu", "µs CPU a task in the draining process, lower is better"],
      ["submit", "ops/s"],
      ["call", "ms, lower is better"],
    ]) {
      const values = samples[i][key];
      const digits = { call: 2, drainCpu: 1 }[key] ?? 0;
      const ratio = median(values) / median(base[key]);
      console.log(
        `| ${key}, ${variant.label} (${unit}) | ${median(values).toFixed(digits)} (×${ratio.toFixed(3)}) | ${Math.min(...values).toFixed(digits)} | ${Math.max(...values).toFixed(digits)} |`,
      );
    }
  }
} finally {
  target.cleanup();
}
