// Side-by-side benchmark of this package ("ours") against a reference package
// with the same public API (e.g. the TypeScript cairnq 0.7.0):
//   node bench/compare.mjs [--against=<entry .mjs>] [--reps=3] [--only=submit-seq,drain-64,…]
//     [--pg=postgres://…] [--memory [--memory-n=600000]] [--out=FILE] [size options, see README]
// Without --against it measures ours only. Every repetition of every figure
// runs in a fresh `node bench/figure.mjs` process on a fresh database; the
// packages alternate (ours, reference, ours, …) and medians are reported.
import fs from "node:fs";
import path from "node:path";
import { figures } from "./figure.mjs";
import {
  argFlag,
  argNumber,
  argValue,
  benchTarget,
  entryPath,
  figureBudgetMs,
  fmt,
  median,
  onlyFilter,
  pgDsn,
  runNode,
  sizes,
} from "./lib.mjs";

const OWN = ["against", "reps", "only", "out", "memory", "memory-n", "memory-timeout", "entry", "scratch"];
const forwarded = process.argv.slice(2).filter((a) => !OWN.includes(a.replace(/^--/, "").split("=")[0]));
const reps = Math.max(1, argNumber("reps", 3));
const only = onlyFilter();
const pg = pgDsn();
const against = argValue("against", null);
const packages = [{ label: "ours", entry: entryPath() }];
if (against) packages.push({ label: "reference", entry: path.resolve(against) });
if (only) {
  const unknown = [...only].filter((id) => !figures[id]);
  if (unknown.length) {
    console.error(`unknown --only id(s) ${unknown.join(", ")}; known: ${Object.keys(figures).join(", ")}`);
    process.exit(2);
  }
}

const quote = (a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, "'\\''")}'`);
const command = ["node", path.relative(process.cwd(), process.argv[1]), ...process.argv.slice(2)].map(quote).join(" ");
console.log(`$ ${command}`);
for (const p of packages) console.log(`${p.label}: ${p.entry}`);
console.log(`${pg ? "Postgres" : "SQLite"}, ${reps} repetition(s) per package, interleaved; medians\n`);

/**
 * The targets of the performance issue, by row name: `ratio` bounds ours /
 * reference (a floor for throughputs, a ceiling for "lower is better" rows),
 * `value` bounds our median itself. Rows without one must not lose: ratio 1.
 */
const GOALS = pg
  ? {
      "cancel, sequential (ops/s)": { ratio: 1 },
      "cancel, 64 in flight (ops/s)": { ratio: 1 },
      "purge (rows deleted/s)": { ratio: 1 },
      "drain, concurrency 64 (tasks/s)": { ratio: 3 },
      "batch drain (batch 256) (tasks/s)": { ratio: 5 },
    }
  : {
      "submit, sequential (ops/s)": { ratio: 1.5 },
      "submit, 64 in flight (ops/s)": { ratio: 2.5 },
      "cancel, sequential (ops/s)": { ratio: 1.5 },
      "drain, concurrency 1 (tasks/s)": { ratio: 1.5 },
      "drain, concurrency 8 (tasks/s)": { ratio: 2 },
      "drain, concurrency 64 (tasks/s)": { ratio: 2 },
      "batch drain (batch 256) (tasks/s)": { ratio: 3 },
      "backlog drain, concurrency 8 (tasks/s)": { ratio: 1.5 },
      "event-loop max lag, c=64 drain (ms, lower is better)": { value: 10 },
      "call() p50, worker in another process, poll 500 ms (ms, lower is better)": { value: 1 },
      "call() p50, worker in another process, poll 10 ms (ms, lower is better)": { ratio: 0.1 },
      "group commit: WAL frames of 32 concurrent complete / of 32 sequential (share, lower is better)": { value: 0.25 },
      "group commit: WAL frames of 32 concurrent submit / of 32 sequential (share, lower is better)": { value: 0.25 },
    };

/** rows: { name, lower, samples: {label: number[]}, details: {label: string[]}, errors: {label: string[]} } */
const rows = [];
const newRow = (name, lower) => {
  const row = { name, lower, samples: {}, details: {}, errors: {} };
  for (const p of packages) ((row.samples[p.label] = []), (row.details[p.label] = []), (row.errors[p.label] = []));
  rows.push(row);
  return row;
};

for (const [id, spec] of Object.entries(figures)) {
  if ((only && !only.has(id)) || (spec.sqliteOnly && pg)) continue;
  const figureRows = spec.rows.map((r) => newRow(r.name, r.lower));
  const timeoutMs = figureBudgetMs(spec, sizes()) + 15_000;
  for (let rep = 1; rep <= reps; rep++) {
    for (const { label, entry } of packages) {
      const target = benchTarget(); // a scratch place this process removes even if the child is killed
      const args = [`--figure=${id}`, `--entry=${entry}`, `--scratch=${target.scratch}`, ...forwarded];
      const started = Date.now();
      try {
        const out = await runNode("figure.mjs", args, {
          label: `figure ${id} (${spec.rows[0].name}) on ${label}`,
          timeoutMs,
        });
        out.values.forEach((v, k) => figureRows[k].samples[label].push(v));
        if (out.detail) figureRows[0].details[label].push(out.detail);
        const shown = out.values.map(fmt).join(", ") + (out.detail ? ` [${out.detail}]` : "");
        console.log(
          `${id.padEnd(13)} #${rep} ${label.padEnd(9)} ${shown}  (${((Date.now() - started) / 1000).toFixed(1)} s)`,
        );
      } catch (err) {
        figureRows[0].errors[label].push(err.message);
        console.log(`${id.padEnd(13)} #${rep} ${label.padEnd(9)} FAILED: ${err.message}`);
      } finally {
        target.cleanup();
      }
    }
  }
}

if (argFlag("memory")) await memory();

// ---------------------------------------------------------------------------

const ours = packages[0].label;
const ref = packages[1]?.label;
const med = (row, label) => (label && row.samples[label].length ? median(row.samples[label]) : null);
const table = [
  "| figure | ours | reference | ratio | target |",
  "| --- | ---: | ---: | ---: | --- |",
  ...rows.map((row) => {
    const [a, b] = [med(row, ours), med(row, ref)];
    const cell = (v, label) => (v != null ? fmt(v) : label && row.errors[label].length ? "ERROR" : "–");
    const ratio = a != null && b ? a / b : null;
    const goal = GOALS[row.name] ?? { ratio: 1 };
    const [bound, value] = goal.value != null ? [goal.value, a] : [goal.ratio, ratio];
    const met = value == null ? "" : (row.lower ? value <= bound : value >= bound) ? " ✓" : " ✗";
    const wanted = `${goal.value != null ? "ours " : "ratio "}${row.lower ? "≤" : "≥"} ${bound}`;
    return `| ${row.name} | ${cell(a, ours)} | ${cell(b, ref)} | ${ratio == null ? "–" : ratio.toFixed(2)} | ${wanted}${met} |`;
  }),
];
console.log("\nSamples per repetition:");
for (const row of rows) {
  console.log(`- ${row.name}`);
  for (const { label } of packages) {
    const s = row.samples[label];
    const spread = s.length
      ? `${s.map(fmt).join(", ")} (min ${fmt(Math.min(...s))}, max ${fmt(Math.max(...s))})`
      : "no sample";
    const details = row.details[label].length ? ` — ${row.details[label].join("; ")}` : "";
    const errors = row.errors[label].length ? ` — ${row.errors[label].length} failed` : "";
    console.log(`    ${label.padEnd(9)} ${spread}${details}${errors}`);
  }
}
console.log(`\n${table.join("\n")}`);
console.log(
  '\nratio = ours / reference; for rows marked "lower is better" a ratio below 1 means ours is better, otherwise above 1.',
);
const failures = rows.flatMap((row) => packages.flatMap(({ label }) => row.errors[label].map((e) => `${label}: ${e}`)));
if (failures.length) console.log(`\nFailures (${failures.length}):\n${failures.map((f) => `- ${f}`).join("\n")}`);
if (argValue("out", null)) fs.writeFileSync(argValue("out"), `$ ${command}\n\n${table.join("\n")}\n`);
process.exitCode = failures.length ? 1 : 0;

/** bench/memory.mjs once per package: peak RSS rows in the table, both curves side by side. */
async function memory() {
  const n = argNumber("memory-n", 600_000);
  const timeout = argNumber("memory-timeout", 1800);
  const results = {};
  const phases = [
    ["client", `memory: client submitting ${n} tasks, peak RSS (MB, lower is better)`],
    ["worker", `memory: worker draining ${n} tasks, peak RSS (MB, lower is better)`],
  ];
  const memoryRows = phases.map(([, name]) => newRow(name, true));
  for (const { label, entry } of packages) {
    const args = [`--entry=${entry}`, `--n=${n}`, `--timeout=${timeout}`, "--json", ...(pg ? [`--pg=${pg}`] : [])];
    try {
      results[label] = await runNode("memory.mjs", args, {
        label: `memory (n=${n}) on ${label}`,
        timeoutMs: 2 * timeout * 1000 + 60_000,
      });
      phases.forEach(([phase], k) => {
        const s = results[label][phase];
        memoryRows[k].samples[label].push(s.peakMB);
        memoryRows[k].details[label].push(
          `${s.seconds.toFixed(1)} s (${fmt(s.rate)}/s), quartile means ${s.quartilesMB.map(fmt).join("/")} MB, plateau ${s.plateau ? "yes" : "no"}`,
        );
      });
    } catch (err) {
      memoryRows[0].errors[label].push(err.message);
      console.log(`memory ${label} FAILED: ${err.message}`);
    }
  }
  const columns = phases.flatMap(([phase]) => packages.map(({ label }) => [phase, label]));
  console.log(`\nRSS curves (MB, 10 points over each run, n=${n}):`);
  console.log(`| point | ${columns.map(([phase, label]) => `${phase} ${label}`).join(" | ")} |`);
  console.log(`| ---: | ${columns.map(() => "---:").join(" | ")} |`);
  for (let i = 0; i < 10; i++) {
    const cells = columns.map(([phase, label]) => fmt(results[label]?.[phase].curveMB[i]));
    console.log(`| ${i + 1} | ${cells.join(" | ")} |`);
  }
}
