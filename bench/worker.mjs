// Worker figures: drains of no-op tasks (concurrency 1, 8, 64, batched, from a
// deep backlog, and behind backlogs of 2k/20k/200k), the event-loop lag during
// the concurrency-64 drain, and call() latency with the worker in another process.
// Standalone: node bench/worker.mjs [--entry=index.mjs] [--reps=3] [--only=drain-64,…]
//   [--n=N | --drain-n= --backlog= --backlog-n=] [--calls=300] [--pg=postgres://…]
import { fork } from "node:child_process";
import { monitorEventLoopDelay } from "node:perf_hooks";
import {
  openClient,
  openWorker,
  percentile,
  seconds,
  seed,
  single,
  sleep,
  standalone,
  until,
  withClient,
  withTimeout,
} from "./lib.mjs";

/**
 * Queue `queued` noop tasks, then time a worker (poll 50 ms) from `run()` until
 * `measured` of them succeeded; resolves tasks/s and the
 * event loop's max delay (ms) over that time.
 */
function drain(ctx, { queued, measured = queued, concurrency, batch }) {
  return withClient(ctx, "drain", async (client, location) => {
    await seed(client, queued, "noop");
    return timedDrain(ctx.pkg, client, location, { name: "noop", measured, concurrency, batch });
  });
}

/**
 * Time a worker (poll 50 ms) that handles only `name`, from `run()` until
 * `measured` tasks of that name succeeded (read with `list` by status and
 * name, which reaches an index, so the check does not grow with a deep queue
 * of other names); resolves
 * tasks/s, the seconds it took and the event loop's max delay (ms) over that time.
 */
async function timedDrain(pkg, client, location, { name, measured, concurrency, batch }) {
  const errors = [];
  const worker = openWorker(pkg, location, { pollIntervalMs: 50, onError: (err) => errors.push(err) });
  let handled = 0;
  let reached;
  const allHandled = new Promise((resolve) => (reached = resolve));
  const count = (k) => {
    handled += k;
    if (handled >= measured) reached();
  };
  if (batch) worker.task(name, { batch }, (items) => void count(items.length));
  else worker.task(name, () => void count(1));
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  // Its timer only measures from its first tick on: let it tick before the clock starts.
  await sleep(10);
  const started = process.hrtime.bigint();
  const running = worker.run({ concurrency });
  try {
    const early = running.then(() => {
      throw new Error("worker.run() settled before the drain finished");
    });
    await Promise.race([allHandled, early]);
    // The last settlements commit after the handlers return: wait for them too.
    // The measured-th success exists: one row crosses, not `measured` of them.
    await until("every task succeeded", async () => {
      const last = await client.list({ status: "succeeded", name, limit: 1, offset: measured - 1 });
      return last.length === 1;
    });
    const took = seconds(started);
    const rate = measured / took;
    // A loop blocked until now is only recorded at the timer's next tick.
    await sleep(5);
    histogram.disable();
    if (errors.length)
      console.error(`worker reported ${errors.length} errors, first: ${errors[0]?.stack ?? errors[0]}`);
    return { rate, seconds: took, lagMs: histogram.max / 1e6, errors: errors.length };
  } finally {
    histogram.disable();
    worker.stop();
    await running.catch(() => {});
    await worker.close();
  }
}

/** The backlog sizes of the `backlog-scale` figure. */
const SCALE_BACKLOGS = [2_000, 20_000, 200_000];
const OTHER_NAME_TASKS = 200;
const SCALE_MEASURED = 2_000;

/**
 * Claim cost against backlog depth, per size in SCALE_BACKLOGS on a fresh
 * database: `n` queued tasks of one name, then 200 of another, time a
 * concurrency-8 worker that handles only the other name until its 200
 * succeeded (ms); then a worker for the backlog's name draining its first
 * 2 000 (tasks/s). Flat rows mean a claim costs the same however deep the
 * queue; the 2 000 row is the drain from an otherwise empty queue.
 */
async function backlogScale(ctx) {
  const values = [];
  for (const n of SCALE_BACKLOGS) {
    const { otherMs, firstRate } = await withClient(ctx, `backlog-${n}`, async (client, location) => {
      await seed(client, n, "backlog");
      await seed(client, OTHER_NAME_TASKS, "other");
      const other = await timedDrain(ctx.pkg, client, location, {
        name: "other",
        measured: OTHER_NAME_TASKS,
        concurrency: 8,
      });
      const first = await timedDrain(ctx.pkg, client, location, {
        name: "backlog",
        measured: Math.min(SCALE_MEASURED, n),
        concurrency: 8,
      });
      return { otherMs: other.seconds * 1000, firstRate: first.rate };
    });
    values.push(otherMs, firstRate);
  }
  return { values };
}

const drainFigure = (name, opts) =>
  single(name, false, async (ctx) => (await drain(ctx, { queued: ctx.sizes.drain, ...opts })).rate);

/** call() latency: the echo worker (poll `pollMs`) in a child process; p50 (p95, p99, max) in ms. */
async function callLatency(ctx, pollMs) {
  const location = ctx.target.fresh("call");
  const client = openClient(ctx.pkg, location);
  let child;
  let exited;
  try {
    await client.connect(); // creates the schema before a second process opens the database
    const args = [`--entry=${ctx.entry}`, `--location=${location}`, `--poll=${pollMs}`];
    child = fork(new URL("./echo-worker.mjs", import.meta.url), args, { stdio: "inherit" });
    exited = new Promise((resolve) => child.once("exit", resolve));
    const died = exited.then((code) => {
      throw new Error(`the echo worker process exited (${code}) while the figure ran`);
    });
    const measure = async () => {
      await withTimeout(new Promise((resolve) => child.once("message", resolve)), 30_000, "echo worker start");
      for (let i = 0; i < ctx.sizes.warmup; i++) await client.call("echo", { i });
      const latencies = [];
      for (let i = 0; i < ctx.sizes.calls; i++) {
        const started = process.hrtime.bigint();
        await client.call("echo", { i });
        latencies.push(seconds(started) * 1000);
      }
      return latencies;
    };
    const latencies = await Promise.race([measure(), died]);
    const [p95, p99, max] = [percentile(latencies, 95), percentile(latencies, 99), Math.max(...latencies)];
    const detail = `p95 ${p95.toFixed(2)} ms, p99 ${p99.toFixed(2)} ms, max ${max.toFixed(1)} ms`;
    return { values: [percentile(latencies, 50)], detail };
  } finally {
    if (child) {
      child.kill("SIGTERM");
      const killer = setTimeout(() => child.kill("SIGKILL"), 5000);
      await exited;
      clearTimeout(killer);
    }
    await client.close();
    ctx.target.release(location);
  }
}

const callFigure = (pollMs) => ({
  // A worker that sleeps 500 ms between polls takes ~0.5 s per call: 320 calls need more than 120 s.
  budgetMs: (sizes) => (sizes.warmup + sizes.calls) * (pollMs + 300) + 30_000,
  rows: [{ name: `call() p50, worker in another process, poll ${pollMs} ms (ms, lower is better)`, lower: true }],
  run: (ctx) => callLatency(ctx, pollMs),
});

export const figures = {
  "drain-1": drainFigure("drain, concurrency 1 (tasks/s)", { concurrency: 1 }),
  "drain-8": drainFigure("drain, concurrency 8 (tasks/s)", { concurrency: 8 }),
  "drain-64": {
    rows: [
      { name: "drain, concurrency 64 (tasks/s)", lower: false },
      { name: "event-loop max lag, c=64 drain (ms, lower is better)", lower: true },
    ],
    run: async (ctx) => {
      const { rate, lagMs } = await drain(ctx, { queued: ctx.sizes.drain, concurrency: 64 });
      return { values: [rate, lagMs] };
    },
  },
  batch: drainFigure("batch drain (batch 256) (tasks/s)", { concurrency: 4, batch: 256 }),
  backlog: single("backlog drain, concurrency 8 (tasks/s)", false, async (ctx) => {
    const { backlog, backlogMeasured } = ctx.sizes;
    return (await drain(ctx, { queued: backlog, measured: backlogMeasured, concurrency: 8 })).rate;
  }),
  "backlog-scale": {
    // Seeding 222 000 tasks dominates; generous for a loaded 2-core box.
    budgetMs: () => 900_000,
    rows: SCALE_BACKLOGS.flatMap((n) => [
      {
        name: `${OTHER_NAME_TASKS} of another name behind ${n.toLocaleString("en-US")} queued, c=8 (ms, lower is better)`,
        lower: true,
      },
      {
        name: `first ${SCALE_MEASURED.toLocaleString("en-US")} of ${n.toLocaleString("en-US")} queued, c=8 (tasks/s)`,
        lower: false,
      },
    ]),
    run: backlogScale,
  },
  "call-500": callFigure(500),
  "call-10": callFigure(10),
};

await standalone(import.meta.url, figures);
