// Tracing's cost (README, "Observability"): the same figures run with
// `@opentelemetry/api` unresolvable ("absent"), resolvable with no provider
// registered ("no provider": the case that must cost nothing), and with a
// provider that records every span but exports none ("tracing").
// Each repetition is a fresh `bench/figure.mjs` process per mode, the modes in
// a rotating order; the table shows medians and the ratio to "absent".
//   node bench/telemetry.mjs [--reps=7] [--only=drain-8,submit-seq] [--entry=…] [--pg=…] [size options]
import path from "node:path";

import { BENCH_DIR, argNumber, argValue, fmt, median, runNode } from "./lib.mjs";

const MODES = {
  absent: "no-otel.cjs",
  "no provider": null,
  tracing: "tracing.cjs",
};

const reps = argNumber("reps", 7);
const ids = argValue("only", "drain-8,submit-seq").split(",");
const passed = process.argv.slice(2).filter((a) => !a.startsWith("--reps=") && !a.startsWith("--only="));

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
  const samples = Object.fromEntries(Object.keys(MODES).map((mode) => [mode, []]));
  const names = Object.keys(MODES);
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
  const base = median(samples.absent);
  for (const mode of names) {
    const s = samples[mode];
    rows.push(`| ${id} | ${mode} | ${fmt(median(s))} (min ${fmt(Math.min(...s))}, max ${fmt(Math.max(...s))}) | ${(median(s) / base).toFixed(3)} |`);
  }
}
console.log("\n| figure | @opentelemetry/api | median (min, max) | ratio to absent |\n| --- | --- | --- | --- |");
for (const row of rows) console.log(row);
