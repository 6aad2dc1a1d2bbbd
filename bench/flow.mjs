// Flow-control figures (docs/api.md, "Flow control"), standalone:
//   node bench/flow.mjs [--n=20000] [--groups=10000] [--reps=3] [--concurrency=16] [--limited-n=1000] [--only=groups,neighbour,key] [--pg=postgres://…]
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
// 3. key: a worker drains `--n` tasks of a name under a rate limit that never
//    binds (`max` 1e9 a second: every draw counts the window and records its
//    starts) drawing from the name's own budget, against the same with a
//    `key` (the key's budget: the limits read with the key's row, the starts
//    under the key): tasks/s side by side, interleaved, median ratio.
import { argNumber, benchTarget, drainRate, loadPackage, median, onlyFilter, throughput } from "./lib.mjs";

const pkg = await loadPackage();
const target = benchTarget();
const n = argNumber("n", 20000);
const groups = argNumber("groups", 10000);
const reps = argNumber("reps", 3);
const concurrency = argNumber("concurrency", 16);
const limitedN = argNumber("limited-n", 1000);
const only = onlyFilter() ?? new Set(["groups", "neighbour", "key"]);
const UNBINDING = { max: 1e9, perMs: 1000 };

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
  "own budget": () =>
    drain(
      jobs(() => ({})),
      (w, fn) => w.task("job", { rateLimit: UNBINDING }, fn),
    ),
  "key budget": () =>
    drain(
      jobs(() => ({})),
      (w, fn) => w.task("job", { rateLimit: { key: "shared", ...UNBINDING } }, fn),
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
  console.log("| figure | median | min | max |");
  console.log("| --- | --- | --- | --- |");
  if (only.has("groups")) groupFigures(await pair("groups", "ungrouped", "grouped"));
  if (only.has("neighbour")) neighbourFigures(await pair("neighbour", "alone", "neighbour"));
  if (only.has("key")) keyFigures(await pair("key", "own budget", "key budget"));
} finally {
  target.cleanup();
}

function groupFigures([ungrouped, grouped]) {
  console.log(row(`drain, ${n} ungrouped tasks (tasks/s)`, ungrouped));
  console.log(row(`drain, ${n} tasks over ${groups} groups, groupConcurrency 1 (tasks/s)`, grouped));
  console.log(
    row(
      "groups ratio, grouped / ungrouped (≥ 0.8 asked)",
      grouped.map((v, i) => v / ungrouped[i]),
      3,
    ),
  );
}

function neighbourFigures([alone, neighbour]) {
  console.log(row(`drain of an unlimited name alone (tasks/s)`, alone));
  console.log(row(`drain of it beside a rate-limited name with ${limitedN} queued (tasks/s)`, neighbour));
  console.log(
    row(
      "neighbour ratio, beside / alone (≥ 0.9 asked)",
      neighbour.map((v, i) => v / alone[i]),
      3,
    ),
  );
}

function keyFigures([own, keyed]) {
  console.log(row(`drain, ${n} tasks under a rate of the name's own budget (tasks/s)`, own));
  console.log(row(`drain, ${n} tasks under a rate of a key's budget (tasks/s)`, keyed));
  console.log(
    row(
      "key ratio, key budget / own budget",
      keyed.map((v, i) => v / own[i]),
      3,
    ),
  );
}
