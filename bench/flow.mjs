// Flow-control figures (docs/api.md, "Flow control"), standalone:
//   node bench/flow.mjs [--n=20000] [--groups=10000] [--reps=3] [--concurrency=16] [--limited-n=1000] [--pg=postgres://…]
//
// 1. groups: a worker drains `--n` no-op tasks spread over `--groups` groups
//    (task i in group i % groups) registered with `groupConcurrency: 1`,
//    against the same drain of ungrouped tasks under a plain registration:
//    tasks/s side by side, interleaved repetitions, median ratio (the issue
//    asks ≥ 0.8).
// 2. neighbour: a worker drains `--n` tasks of an unlimited name alone, and
//    beside a name with `rateLimit: {max: 10, perMs: 1000}` and `--limited-n`
//    of its tasks queued: tasks/s of the unlimited name side by side,
//    interleaved, median ratio (the issue asks ≥ 0.9).
import { argNumber, benchTarget, drainRate, loadPackage, median, throughput } from "./lib.mjs";

const pkg = await loadPackage();
const target = benchTarget();
const n = argNumber("n", 20000);
const groups = argNumber("groups", 10000);
const reps = argNumber("reps", 3);
const concurrency = argNumber("concurrency", 16);
const limitedN = argNumber("limited-n", 1000);

/** Drain `n` tasks named "job", queued by `setup`, registered by `register`. */
const drain = (setup, register) => drainRate(pkg, target, "flow", { n, concurrency, setup, register });

const jobs = (opts) => (client) => throughput(n, 64, (i) => client.submit("job", { i }, opts(i)));

const variants = {
  ungrouped: () =>
    drain(
      jobs(() => ({})),
      (w, fn) => w.task("job", fn),
    ),
  grouped: () =>
    drain(
      jobs((i) => ({ group: `g${i % groups}` })),
      (w, fn) => w.task("job", { groupConcurrency: 1 }, fn),
    ),
  alone: () =>
    drain(
      jobs(() => ({})),
      (w, fn) => w.task("job", fn),
    ),
  neighbour: () =>
    drain(
      async (client) => {
        await throughput(limitedN, 64, (i) => client.submit("limited", { i }));
        await jobs(() => ({}))(client);
      },
      (w, fn) => {
        w.task("limited", { rateLimit: { max: 10, perMs: 1000 } }, () => null);
        w.task("job", fn);
      },
    ),
};

/** Interleaved repetitions of `a` and `b`, the order alternating. */
async function pair(label, a, b) {
  const first = [];
  const second = [];
  for (let r = 0; r < reps; r++) {
    if (r % 2 === 0) {
      first.push(await variants[a]());
      second.push(await variants[b]());
    } else {
      second.push(await variants[b]());
      first.push(await variants[a]());
    }
    console.log(`  ${label}: ${first.at(-1).toFixed(0)} tasks/s ${a}, ${second.at(-1).toFixed(0)} ${b}`);
  }
  return [first, second];
}

const row = (label, values, digits = 0) =>
  `| ${label} | ${median(values).toFixed(digits)} | ${Math.min(...values).toFixed(digits)} | ${Math.max(...values).toFixed(digits)} |`;

try {
  console.log(
    `flow bench on ${target.name}: n=${n} groups=${groups} reps=${reps} concurrency=${concurrency} limited-n=${limitedN}`,
  );
  const [ungrouped, grouped] = await pair("groups", "ungrouped", "grouped");
  const [alone, neighbour] = await pair("neighbour", "alone", "neighbour");
  console.log("");
  console.log("| figure | median | min | max |");
  console.log("| --- | --- | --- | --- |");
  console.log(row(`drain, ${n} ungrouped tasks (tasks/s)`, ungrouped));
  console.log(row(`drain, ${n} tasks over ${groups} groups, groupConcurrency 1 (tasks/s)`, grouped));
  console.log(
    row(
      "groups ratio, grouped / ungrouped (≥ 0.8 asked)",
      grouped.map((v, i) => v / ungrouped[i]),
      3,
    ),
  );
  console.log(row(`drain of an unlimited name alone (tasks/s)`, alone));
  console.log(row(`drain of it beside a rate-limited name with ${limitedN} queued (tasks/s)`, neighbour));
  console.log(
    row(
      "neighbour ratio, beside / alone (≥ 0.9 asked)",
      neighbour.map((v, i) => v / alone[i]),
      3,
    ),
  );
} finally {
  target.cleanup();
}
