// Schedule figures (docs/api.md, "Schedules"), standalone:
//   node bench/schedules.mjs [--n=1000] [--reps=3] [--drain-n=20000] [--pg=postgres://…]
//
// 1. fire-1000: `--n` schedules all due in the same second, one worker (in
//    this process, no handlers) fires them: how long after that second the
//    last of the N tasks was inserted (its created_at_ms). Target: < 2000 ms.
//    Run with `overlap: "allow"` and `"skip"` interleaved: a skip schedule's
//    firing first checks for a live task of its own (one statement each), so
//    the ratio is that check's cost on the tick (nothing is live here, so
//    every skip schedule still fires).
// 2. drain: a worker drains `--drain-n` no-op tasks on a database without the
//    schedules table, and on one holding `--n` schedules none of which is due
//    (yearly): tasks/s side by side, interleaved repetitions, median ratio.
//    The firing clock never runs in the poll loop, so the ratio should be ~1.
import {
  argNumber,
  benchTarget,
  drainRate,
  loadPackage,
  median,
  openClient,
  openWorker,
  seed,
  sleep,
  until,
} from "./lib.mjs";

const pkg = await loadPackage();
const target = benchTarget();
const n = argNumber("n", 1000);
const reps = argNumber("reps", 3);
const drainN = argNumber("drain-n", 20000);

/** A cron (6 fields, UTC) matching exactly the whole second `at`, every day. */
function cronAt(at) {
  const d = new Date(at);
  return `${d.getUTCSeconds()} ${d.getUTCMinutes()} ${d.getUTCHours()} * * *`;
}

/** @param {"allow" | "skip"} overlap */
async function fireAll(overlap) {
  const location = target.fresh("fire");
  const client = openClient(pkg, location);
  try {
    await client.connect();
    // Far enough ahead for N schedule() calls on a slow machine.
    const due = Math.ceil((Date.now() + 3000 + n * 10) / 1000) * 1000;
    for (let i = 0; i < n; i++) await client.schedule(`s${i}`, { task: "fired", cron: cronAt(due), overlap });
    const worker = openWorker(pkg, location, { pollIntervalMs: 50 });
    worker.task("unused", () => null);
    const running = worker.run();
    await until("all fired", async () => (await client.stats("default")).default.queued >= n, {
      everyMs: 50,
      timeoutMs: due - Date.now() + 60_000,
    });
    worker.stop();
    await running;
    await worker.close();
    const tasks = await client.list({ name: "fired", limit: n + 10 });
    const last = Math.max(...tasks.map((t) => t.created_at_ms));
    if (tasks.length !== n) throw new Error(`expected ${n} tasks, got ${tasks.length}`);
    return last - due;
  } finally {
    await client.close();
    target.release(location);
  }
}

/** Drain `--drain-n` tasks, with or without `--n` yearly schedules beside them. */
function drain(withSchedules) {
  return drainRate(pkg, target, "drain", {
    n: drainN,
    async setup(client) {
      if (withSchedules) {
        for (let i = 0; i < n; i++) await client.schedule(`yearly${i}`, { task: "never", cron: "@yearly" });
      }
      await seed(client, drainN, "job", (i) => ({ i }));
    },
    register: (worker, handler) => worker.task("job", handler),
  });
}

try {
  console.log(`schedules bench on ${target.name}: n=${n} reps=${reps} drain-n=${drainN}`);
  const fired = [];
  const firedSkip = [];
  for (let r = 0; r < reps; r++) {
    // Interleaved, the order alternating between repetitions.
    for (const overlap of r % 2 === 0 ? ["allow", "skip"] : ["skip", "allow"]) {
      const into = overlap === "allow" ? fired : firedSkip;
      into.push(await fireAll(overlap));
      console.log(`  fire-${n} (overlap ${overlap}): last task inserted ${into.at(-1)} ms after the due second`);
    }
  }
  const plain = [];
  const scheduled = [];
  for (let r = 0; r < reps; r++) {
    // Interleaved, the order alternating between repetitions.
    if (r % 2 === 0) {
      plain.push(await drain(false));
      scheduled.push(await drain(true));
    } else {
      scheduled.push(await drain(true));
      plain.push(await drain(false));
    }
    console.log(
      `  drain: ${plain.at(-1).toFixed(0)} tasks/s without schedules, ${scheduled.at(-1).toFixed(0)} with ${n} not due`,
    );
    await sleep(100);
  }
  console.log("");
  console.log("| figure | median | min | max |");
  console.log("| --- | --- | --- | --- |");
  console.log(
    `| ${n} schedules due in one second: last task inserted after (ms, lower is better; target < 2000) | ${median(fired)} | ${Math.min(...fired)} | ${Math.max(...fired)} |`,
  );
  console.log(
    `| the same, overlap: "skip" (ms) | ${median(firedSkip)} | ${Math.min(...firedSkip)} | ${Math.max(...firedSkip)} |`,
  );
  const skipRatios = firedSkip.map((v, i) => v / fired[i]);
  console.log(
    `| fire ratio, skip / allow (the skip check's cost on the tick) | ${median(skipRatios).toFixed(3)} | ${Math.min(...skipRatios).toFixed(3)} | ${Math.max(...skipRatios).toFixed(3)} |`,
  );
  console.log(
    `| drain, no schedules table (tasks/s) | ${median(plain).toFixed(0)} | ${Math.min(...plain).toFixed(0)} | ${Math.max(...plain).toFixed(0)} |`,
  );
  console.log(
    `| drain, ${n} schedules not due (tasks/s) | ${median(scheduled).toFixed(0)} | ${Math.min(...scheduled).toFixed(0)} | ${Math.max(...scheduled).toFixed(0)} |`,
  );
  const ratios = scheduled.map((v, i) => v / plain[i]);
  console.log(
    `| drain ratio, with / without (≥ 0.9 holds the 10% rule) | ${median(ratios).toFixed(3)} | ${Math.min(...ratios).toFixed(3)} | ${Math.max(...ratios).toFixed(3)} |`,
  );
} finally {
  target.cleanup();
}
