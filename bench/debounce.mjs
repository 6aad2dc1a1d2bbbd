// Debounced submit (docs/api.md, "Debounce"), standalone, this package only:
//   node bench/debounce.mjs [--n=2000] [--reps=3] [--pg=postgres://…]
//
// Sequential `client.submit` throughput (ops/s), one fresh database per
// variant and repetition, the variants interleaved in a rotating order:
//   plain-one-key      keyed submits to one key (the default conflict: the
//                      first inserts, the rest return the queued task)
//   debounce-one-key   debounced submits to one key (the first inserts, the
//                      rest update the queued task: payload and run_at_ms)
//   plain-new-keys     keyed submits, each to a new key (each inserts)
//   debounce-new-keys  debounced submits, each to a new key (each inserts)
// The table gives each variant's median and the median ratio of the debounced
// variant to its plain one within a repetition.
import { argNumber, benchTarget, loadPackage, median, openClient, seconds } from "./lib.mjs";

const pkg = await loadPackage();
const target = benchTarget();
const n = argNumber("n", 2000);
const reps = argNumber("reps", 3);

const VARIANTS = {
  "plain-one-key": (i) => [{ i }, { key: "k" }],
  "debounce-one-key": (i) => [{ i }, { key: "k", debounceMs: 60_000 }],
  "plain-new-keys": (i) => [{ i }, { key: `k${i}` }],
  "debounce-new-keys": (i) => [{ i }, { key: `k${i}`, debounceMs: 60_000 }],
};

async function run(variant) {
  const location = target.fresh(variant);
  const client = openClient(pkg, location);
  try {
    await client.connect();
    const args = VARIANTS[variant];
    const started = process.hrtime.bigint();
    for (let i = 0; i < n; i++) await client.submit("save", ...args(i));
    return n / seconds(started);
  } finally {
    await client.close();
    target.release(location);
  }
}

try {
  console.log(`debounce bench on ${target.name}: n=${n} reps=${reps}`);
  const names = Object.keys(VARIANTS);
  const samples = Object.fromEntries(names.map((name) => [name, []]));
  for (let r = 0; r < reps; r++) {
    const order = names.map((_, k) => names[(k + r) % names.length]);
    for (const name of order) samples[name].push(await run(name));
    console.log(
      `  rep ${r + 1}: ${names.map((name) => `${name} ${samples[name].at(-1).toFixed(0)}`).join(", ")} ops/s`,
    );
  }
  console.log("");
  console.log("| figure | median | min | max |");
  console.log("| --- | --- | --- | --- |");
  for (const name of names) {
    const v = samples[name];
    console.log(
      `| ${name} (ops/s) | ${median(v).toFixed(0)} | ${Math.min(...v).toFixed(0)} | ${Math.max(...v).toFixed(0)} |`,
    );
  }
  for (const shape of ["one-key", "new-keys"]) {
    const ratios = samples[`debounce-${shape}`].map((v, i) => v / samples[`plain-${shape}`][i]);
    console.log(
      `| ratio debounce / plain, ${shape} | ${median(ratios).toFixed(3)} | ${Math.min(...ratios).toFixed(3)} | ${Math.max(...ratios).toFixed(3)} |`,
    );
  }
} finally {
  target.cleanup();
}
