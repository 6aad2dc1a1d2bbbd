// Signals figures (docs/api.md, "Signals"), this package only (the reference
// has no signals), standalone:
//   node bench/signals.mjs [--n=200] [--waiting=10000] [--drain=2000] [--reps=3] [--pg=postgres://…]
//
// 1. resume: `--n` tasks, one after another, each waiting in ctx.waitForSignal
//    (suspended, no slot); one worker (concurrency 4). Timed: from the
//    client's signal() call to the handler going past the wait (both
//    Date.now() of this process).
// 2. drain: `--drain` tasks of another name drained by one worker
//    (concurrency 8), on a database where `--waiting` tasks wait for a
//    signal at once, against the same drain on a database without them.
//    Timed: the first submit to the last task finished. The ratio is the
//    drain's throughput with the waiting tasks over without (issue target
//    >= 0.9): a waiting task holds no slot, and nothing reads the signals
//    tables while nobody signals.
import {
  argNumber,
  benchTarget,
  loadPackage,
  median,
  percentile,
  until,
  withWorker as sharedWithWorker,
} from "./lib.mjs";

const pkg = await loadPackage();
const target = benchTarget();
const n = argNumber("n", 200);
const waitingCount = argNumber("waiting", 10_000);
const drainCount = argNumber("drain", 2000);
const reps = argNumber("reps", 3);

const withWorker = (label, opts, register, fn) => sharedWithWorker(pkg, target, label, opts, register, fn);

/** ms from each signal() call to its task's resumption. */
async function resume() {
  const resumedAt = new Map();
  return withWorker(
    "resume",
    { concurrency: 4 },
    (worker) => {
      worker.task("approve", async (ctx) => {
        await ctx.waitForSignal("approval", "go");
        resumedAt.set(ctx.taskId, Date.now());
        return null;
      });
    },
    async (client) => {
      const latencies = [];
      for (let i = 0; i < n; i++) {
        const task = await client.submit("approve", { i });
        await until("waiting", async () => (await client.steps(task.id)).suspended?.kind === "signal", {
          everyMs: 1,
          timeoutMs: 60_000,
        });
        const sentAt = Date.now();
        await client.signal(task.id, "go", { i });
        await until("resumed", () => resumedAt.has(task.id), { everyMs: 1, timeoutMs: 60_000 });
        latencies.push(resumedAt.get(task.id) - sentAt);
      }
      return latencies;
    },
  );
}

/** ms to drain `drainCount` tasks, with `waiting` tasks waiting for a signal meanwhile. */
async function drain(waiting) {
  let done = 0;
  let started = 0;
  return withWorker(
    "drain",
    { concurrency: 8 },
    (worker) => {
      worker.task("approve", (ctx) => {
        started += 1;
        return ctx.waitForSignal("approval", "go");
      });
      worker.task("work", () => {
        done += 1;
        return null;
      });
    },
    async (client) => {
      if (waiting > 0) {
        for (let i = 0; i < waiting; i += 500) {
          await Promise.all(
            Array.from({ length: Math.min(500, waiting - i) }, (_, j) => client.submit("approve", { i: i + j })),
          );
        }
        // Each has run once and suspended: all started, none running.
        await until(
          "all waiting",
          async () => started >= waiting && (await client.stats("default")).default.running === 0,
          { everyMs: 100, timeoutMs: 600_000 },
        );
      }
      const from = performance.now();
      for (let i = 0; i < drainCount; i += 500) {
        await Promise.all(
          Array.from({ length: Math.min(500, drainCount - i) }, (_, j) => client.submit("work", { i: i + j })),
        );
      }
      await until("drained", () => done >= drainCount, { everyMs: 2, timeoutMs: 600_000 });
      return performance.now() - from;
    },
  );
}

try {
  console.log(`signals bench on ${target.name}: n=${n} waiting=${waitingCount} drain=${drainCount} reps=${reps}`);
  const latencies = [];
  const ratios = [];
  await drain(0); // warm-up, not counted: the first drain of a process is the slowest
  for (let r = 0; r < reps; r++) {
    const run = await resume();
    latencies.push(...run);
    console.log(`  resume: p50 ${median(run)} ms, p99 ${percentile(run, 99)} ms, max ${Math.max(...run)} ms`);
    // Interleaved, the order alternating between repetitions.
    const order = r % 2 === 0 ? [0, waitingCount] : [waitingCount, 0];
    const took = {};
    for (const waiting of order) took[waiting] = await drain(waiting);
    ratios.push(took[0] / took[waitingCount]);
    console.log(
      `  drain of ${drainCount}: ${took[0].toFixed(0)} ms alone, ${took[waitingCount].toFixed(0)} ms beside ${waitingCount} waiting (ratio ${ratios.at(-1).toFixed(3)})`,
    );
  }
  console.log("");
  console.log("| figure | median | min | max |");
  console.log("| --- | --- | --- | --- |");
  console.log(
    `| signal() → handler past ctx.waitForSignal (ms), p50 of all | ${median(latencies)} | ${Math.min(...latencies)} | ${Math.max(...latencies)} |`,
  );
  console.log(`| the same, p99 of all (ms) | ${percentile(latencies, 99)} | | |`);
  console.log(
    `| drain throughput beside ${waitingCount} waiting / alone (target ≥ 0.9) | ${median(ratios).toFixed(3)} | ${Math.min(...ratios).toFixed(3)} | ${Math.max(...ratios).toFixed(3)} |`,
  );
} finally {
  target.cleanup();
}
