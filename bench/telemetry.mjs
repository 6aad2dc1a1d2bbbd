// Tracing's cost (README, "Observability"): the same figures run with
// `@opentelemetry/api` unresolvable ("absent"), resolvable with no provider
// registered ("no provider": the case that must cost nothing), and with a
// provider that records every span but exports none ("tracing").
// Each repetition is a fresh `bench/figure.mjs` process per mode, the modes
// back to back in a rotating order; the table shows each mode's median and the
// median of its per-repetition ratios to "absent" (pairs taken moments apart,
// so a machine whose load drifts over the run still compares like with like).
// Then, in this process, what "no provider" adds to a task whatever the noise:
// the cost of the checks made once per submit (tracer) and once per
// dispatched poll (tracer and meter).
//   node bench/telemetry.mjs [--reps=7] [--only=drain-8,submit-seq]
//     [--modes=absent,no provider,tracing] [--entry=…] [--pg=…] [size options]
import { createRequire } from "node:module";
import path from "node:path";

import { BENCH_DIR, argNumber, argValue, fmt, median, runNode } from "./lib.mjs";

const MODES = {
  absent: "no-otel.cjs",
  "no provider": null,
  tracing: "tracing.cjs",
};

const reps = argNumber("reps", 7);
const ids = argValue("only", "drain-8,submit-seq").split(",");
const names = argValue("modes", Object.keys(MODES).join(",")).split(",");
if (names[0] !== "absent" || !names.every((name) => name in MODES)) {
  throw new Error(`--modes: "absent" first, then any of ${Object.keys(MODES).join(", ")}`);
}
const own = ["--reps=", "--only=", "--modes="];
const passed = process.argv.slice(2).filter((a) => !own.some((prefix) => a.startsWith(prefix)));

/** The environment of a mode's child: its preload, if any, added to NODE_OPTIONS. */
function envOf(preload) {
  if (!preload) return process.env;
  const option = `--require=${path.join(BENCH_DIR, "preload", preload)}`;
  return { ...process.env, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} ${option}`.trim() };
}

console.log(`node bench/telemetry.mjs ${process.argv.slice(2).join(" ")}`);
const rows = [];
for (const id of ids) {
  /** @type {Record<string, number[]>} */
  const samples = Object.fromEntries(names.map((mode) => [mode, []]));
  for (let i = 0; i < reps; i++) {
    const order = names.map((_, k) => names[(i + k) % names.length]);
    for (const mode of order) {
      const { values } = await runNode("figure.mjs", [`--figure=${id}`, ...passed], {
        label: `${id} (${mode})`,
        timeoutMs: 300_000,
        env: envOf(MODES[mode]),
      });
      samples[mode].push(values[0]);
      console.log(`${id} ${mode.padEnd(12)} rep ${i + 1}: ${fmt(values[0])}`);
    }
  }
  for (const mode of names) {
    const s = samples[mode];
    const ratios = s.map((v, i) => v / samples.absent[i]);
    const spread = `${Math.min(...ratios).toFixed(3)}–${Math.max(...ratios).toFixed(3)}`;
    rows.push(
      `| ${id} | ${mode} | ${fmt(median(s))} (min ${fmt(Math.min(...s))}, max ${fmt(Math.max(...s))}) | ${median(ratios).toFixed(3)} (${spread}) |`,
    );
  }
}
console.log(
  "\n| figure | @opentelemetry/api | median (min, max) | paired ratio to absent, median (range) |\n| --- | --- | --- | --- |",
);
for (const row of rows) console.log(row);

// The checks themselves, with the API loaded and no provider: a task meets
// the tracer's at most twice (its submit, and its poll's dispatch, shared by
// the poll's tasks) and the meter's once.
const load = createRequire(import.meta.url);
const checks = {
  "activeTracer()": load("../lib/telemetry/trace.js").activeTracer,
  "activeInstruments()": load("../lib/telemetry/meter.js").activeInstruments,
};
const CHECKS = 2_000_000;
console.log("");
for (const [name, check] of Object.entries(checks)) {
  let found = 0;
  const started = process.hrtime.bigint();
  for (let i = 0; i < CHECKS; i++) if (check() !== null) found++;
  const nsPerCheck = Number(process.hrtime.bigint() - started) / CHECKS;
  if (found > 0) throw new Error(`${name}: a provider is registered in this process`);
  console.log(`${name} with @opentelemetry/api loaded and no provider: ${nsPerCheck.toFixed(1)} ns a call`);
}
