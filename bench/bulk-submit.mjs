// Bulk submit (docs/api.md, "Bulk submit"), this package only, every figure
// in one run:
//   node bench/bulk-submit.mjs [--n=10000] [--reps=3] [--pg=postgres://…]
//
// SQLite (always), tasks/s, each repetition on fresh files:
//   raw            one transaction of n prepared inserts through rusqlite into
//                  a fresh file with the protocol's schema and indexes
//                  (crates/core/examples/raw_bulk_insert.rs, built --release)
//   submitMany     client.submitMany of n items, one call
//   Promise.all    n client.submit calls at once
// Postgres (with --pg), tasks/s, each repetition on a fresh database:
//   sequential     n client.submit calls, one after another
//   submitMany     client.submitMany of n items, one call
// The table gives each figure's median and the median ratio within a
// repetition (submitMany / raw on SQLite, submitMany / sequential on Postgres).
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

import { BENCH_DIR, argNumber, loadPackage, median, openClient, pgDsn, seconds, benchTarget } from "./lib.mjs";

const pkg = await loadPackage();
const n = argNumber("n", 10_000);
const reps = argNumber("reps", 3);
const repo = path.resolve(BENCH_DIR, "..");
const items = () => Array.from({ length: n }, (_, i) => ({ task: "bulk", payload: { i } }));

execFileSync("cargo", ["build", "--quiet", "--release", "-p", "cairnq-core", "--example", "raw_bulk_insert"], {
  cwd: repo,
  stdio: "inherit",
});
const rawBin = path.join(repo, "target", "release", "examples", "raw_bulk_insert");

/** tasks/s of `fn(client)` on a fresh database of `target`. */
async function timed(target, fn) {
  const location = target.fresh("bulk");
  const client = openClient(pkg, location);
  try {
    await client.connect();
    const started = process.hrtime.bigint();
    await fn(client);
    return n / seconds(started);
  } finally {
    await client.close();
    target.release(location);
  }
}

function raw() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cairnq-raw-"));
  try {
    const out = JSON.parse(execFileSync(rawBin, [path.join(dir, "raw.db"), String(n)], { encoding: "utf8" }));
    return n / (out.ms / 1000);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const FIGURES = {
  sqlite: {
    raw: () => raw(),
    submitMany: (target) => timed(target, (client) => client.submitMany(items())),
    "Promise.all": (target) =>
      timed(target, (client) => Promise.all(items().map((item) => client.submit(item.task, item.payload)))),
  },
  postgres: {
    sequential: (target) =>
      timed(target, async (client) => {
        for (const item of items()) await client.submit(item.task, item.payload);
      }),
    submitMany: (target) => timed(target, (client) => client.submitMany(items())),
  },
};

/** Each figure's samples, the figures in a rotating order per repetition. */
async function measure(figures, target) {
  const names = Object.keys(figures);
  const samples = Object.fromEntries(names.map((name) => [name, []]));
  for (let r = 0; r < reps; r++) {
    for (const name of names.map((_, k) => names[(k + r) % names.length])) {
      samples[name].push(await figures[name](target));
    }
    console.log(`  rep ${r + 1}: ${names.map((name) => `${name} ${samples[name].at(-1).toFixed(0)}`).join(", ")}`);
  }
  return samples;
}

function table(dialect, samples, [over, under]) {
  for (const [name, v] of Object.entries(samples)) {
    console.log(
      `| ${dialect} ${name} (tasks/s) | ${median(v).toFixed(0)} | ${Math.min(...v).toFixed(0)} | ${Math.max(...v).toFixed(0)} |`,
    );
  }
  const ratios = samples[over].map((v, i) => v / samples[under][i]);
  console.log(
    `| ${dialect} ratio ${over} / ${under} | ${median(ratios).toFixed(2)} | ${Math.min(...ratios).toFixed(2)} | ${Math.max(...ratios).toFixed(2)} |`,
  );
}

const dsn = pgDsn();
console.log(`bulk submit bench: n=${n} reps=${reps}${dsn ? " (and Postgres)" : ""}`);
// benchTarget reads --pg: SQLite's target is made with the flag out of sight.
const sqliteTarget = withoutPg(() => benchTarget(null));
const pgTarget = dsn ? benchTarget(null) : null;
const results = [];
try {
  results.push(["sqlite", await measure(FIGURES.sqlite, sqliteTarget), ["submitMany", "raw"]]);
  if (pgTarget) results.push(["postgres", await measure(FIGURES.postgres, pgTarget), ["submitMany", "sequential"]]);
} finally {
  sqliteTarget.cleanup();
  pgTarget?.cleanup();
}
console.log("");
console.log("| figure | median | min | max |");
console.log("| --- | --- | --- | --- |");
for (const [dialect, samples, ratio] of results) table(dialect, samples, ratio);

/** `make()` with `--pg` and CAIRNQ_BENCH_PG_DSN out of sight. */
function withoutPg(make) {
  const argv = process.argv;
  const env = process.env.CAIRNQ_BENCH_PG_DSN;
  process.argv = argv.filter((arg) => !arg.startsWith("--pg="));
  delete process.env.CAIRNQ_BENCH_PG_DSN;
  try {
    return make();
  } finally {
    process.argv = argv;
    if (env !== undefined) process.env.CAIRNQ_BENCH_PG_DSN = env;
  }
}
