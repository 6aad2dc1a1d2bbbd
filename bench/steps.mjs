// Durable steps figures (docs/api.md, "Durable steps"), this package only
// (the reference has no steps), standalone:
//   node bench/steps.mjs [--n=200] [--reps=3] [--pg=postgres://…]
//
// 1. resume: `--n` parents, one after another, each waiting on a child with
//    ctx.callChild; one worker (concurrency 4) runs both. Timed: from the
//    child's completion (its completed_at_ms) to the parent's handler going
//    past callChild again (Date.now()). On SQLite both are this host's clock;
//    on Postgres completed_at_ms is the database's, so the figure includes
//    the clock offset. Issue target on SQLite: under 50 ms.
// 2. steps: `--n` tasks whose handler runs 10 ctx.step (fn returns a small
//    object), against `--n` tasks whose handler calls ctx.progress once, one
//    task at a time (concurrency 1). Timed inside the handler: mean ms per
//    handler, and the ratio (issue target: 10 steps <= 10x one progress; a
//    step and a progress are one commit each).
import {
  argNumber,
  benchTarget,
  loadPackage,
  mean,
  median,
  percentile,
  until,
  withWorker as sharedWithWorker,
} from "./lib.mjs";

const pkg = await loadPackage();
const target = benchTarget();
const n = argNumber("n", 200);
const reps = argNumber("reps", 3);

const withWorker = (label, opts, register, fn) => sharedWithWorker(pkg, target, label, opts, register, fn);

/** ms from each child's completion to its parent's resumption. */
async function resume() {
  const resumedAt = new Map();
  return withWorker(
    "resume",
    { concurrency: 4 },
    (worker) => {
      worker.task("parent", async (ctx) => {
        await ctx.callChild("kid", "child", {});
        resumedAt.set(ctx.taskId, Date.now());
        return null;
      });
      worker.task("child", () => ({ ok: true }));
    },
    async (client) => {
      const latencies = [];
      for (let i = 0; i < n; i++) {
        const parent = await client.submit("parent", { i });
        await until("parent done", async () => resumedAt.has(parent.id), { everyMs: 1, timeoutMs: 60_000 });
        const { steps } = await client.steps(parent.id);
        const child = await client.get(steps[0].childId);
        latencies.push(resumedAt.get(parent.id) - child.completed_at_ms);
      }
      return latencies;
    },
  );
}

/** Mean handler ms of `n` tasks doing `work(ctx)`, one at a time. */
async function handlerTime(label, work) {
  const took = [];
  return withWorker(
    label,
    { concurrency: 1 },
    (worker) => {
      worker.task("measured", async (ctx) => {
        const started = performance.now();
        await work(ctx);
        took.push(performance.now() - started);
        return null;
      });
    },
    async (client) => {
      for (let i = 0; i < n; i++) await client.submit("measured", { i });
      await until("all measured", () => took.length >= n, { everyMs: 5 });
      return mean(took);
    },
  );
}

const tenSteps = async (ctx) => {
  for (let s = 0; s < 10; s++) await ctx.step(`s${s}`, () => ({ s }));
};
const oneProgress = (ctx) => ctx.progress(0.5, "half way");

try {
  console.log(`steps bench on ${target.name}: n=${n} reps=${reps}`);
  const latencies = [];
  const steps = [];
  const progress = [];
  for (let r = 0; r < reps; r++) {
    const run = await resume();
    latencies.push(...run);
    console.log(`  resume: p50 ${median(run)} ms, p95 ${percentile(run, 95)} ms, max ${Math.max(...run)} ms`);
    // Interleaved, the order alternating between repetitions.
    const order = r % 2 === 0 ? [tenSteps, oneProgress] : [oneProgress, tenSteps];
    for (const work of order) (work === tenSteps ? steps : progress).push(await handlerTime("steps", work));
    console.log(`  handler: 10 steps ${steps.at(-1).toFixed(2)} ms, 1 progress ${progress.at(-1).toFixed(2)} ms`);
  }
  const ratios = steps.map((v, i) => v / progress[i]);
  console.log("");
  console.log("| figure | median | min | max |");
  console.log("| --- | --- | --- | --- |");
  console.log(
    `| child completion → parent resumed (ms, lower is better; target < 50 on SQLite), p50 of all | ${median(latencies)} | ${Math.min(...latencies)} | ${Math.max(...latencies)} |`,
  );
  console.log(`| the same, p95 of all (ms) | ${percentile(latencies, 95)} | | |`);
  console.log(
    `| handler with 10 ctx.step (ms) | ${median(steps).toFixed(2)} | ${Math.min(...steps).toFixed(2)} | ${Math.max(...steps).toFixed(2)} |`,
  );
  console.log(
    `| handler with 1 ctx.progress (ms) | ${median(progress).toFixed(2)} | ${Math.min(...progress).toFixed(2)} | ${Math.max(...progress).toFixed(2)} |`,
  );
  console.log(
    `| ratio, 10 steps / 1 progress (target ≤ 10) | ${median(ratios).toFixed(2)} | ${Math.min(...ratios).toFixed(2)} | ${Math.max(...ratios).toFixed(2)} |`,
  );
} finally {
  target.cleanup();
}
