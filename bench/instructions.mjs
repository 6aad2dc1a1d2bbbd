// Instructions the native addon executes for one SQLite batch drain, counted
// by valgrind's callgrind: unlike a rate on this noisy 2-core VM, the count
// repeats to a few parts in 10,000, so it shows a change of 1–2% of the
// addon's work that timings cannot. Needs valgrind; not part of the tests.
//   node bench/instructions.mjs [--entry=index.mjs ...] [--drain-n=2000] [--batch=256] [--concurrency=4]
// Several --entry= compare builds; each line: instructions in the addon, per task.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { DEFAULT_ENTRY, argNumber, argValue, isMain, loadPackage, seed } from "./lib.mjs";

const SELF = fileURLToPath(import.meta.url);

const drained = argNumber("drain-n", 2000);
const batch = argNumber("batch", 256);
const concurrency = argNumber("concurrency", 4);

/** The child run under callgrind: drain the copied database, then exit. */
async function drain(entry, location) {
  const { Worker } = await loadPackage(entry);
  const worker = Worker.sqlite(location, { pollIntervalMs: 50 });
  let handled = 0;
  let reached;
  const all = new Promise((resolve) => (reached = resolve));
  const count = (k) => {
    handled += k;
    if (handled >= drained) reached();
  };
  if (batch > 0) worker.task("noop", { batch }, (items) => void count(items.length));
  else worker.task("noop", () => void count(1));
  const running = worker.run({ concurrency });
  await all;
  worker.stop();
  await running;
  await worker.close();
}

/** Instructions callgrind counted in the object files whose path names the addon. */
function addonInstructions(outFile) {
  const text = execFileSync("callgrind_annotate", ["--inclusive=no", "--threshold=100", outFile], {
    maxBuffer: 256 << 20,
  }).toString();
  let total = 0;
  for (const line of text.split("\n")) {
    const match = /^\s*([\d,]+)\s+\(.*\[(.*)\]\s*$/.exec(line);
    if (match && /cairnq[^/]*\.node$/.test(match[2])) total += Number(match[1].replaceAll(",", ""));
  }
  return total;
}

async function main() {
  const child = argValue("child", null);
  if (child) return drain(argValue("entry", null), child);
  const entries = process.argv.filter((a) => a.startsWith("--entry=")).map((a) => path.resolve(a.slice(8)));
  if (!entries.length) entries.push(DEFAULT_ENTRY);
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "cairnq-instructions-"));
  try {
    const seeded = path.join(scratch, "seeded.db");
    const { CairnQ } = await loadPackage(entries[0]);
    const client = CairnQ.sqlite(seeded);
    await client.connect();
    await seed(client, drained, "noop");
    await client.close();
    console.log(`batch drain of ${drained} tasks (batch ${batch}, concurrency ${concurrency}), one callgrind run each`);
    for (const entry of entries) {
      const location = path.join(scratch, "run.db");
      for (const suffix of ["", "-wal", "-shm"]) fs.rmSync(location + suffix, { force: true });
      fs.copyFileSync(seeded, location);
      const out = path.join(scratch, "callgrind.out");
      execFileSync(
        "valgrind",
        ["--tool=callgrind", `--callgrind-out-file=${out}`, process.execPath, SELF]
          .concat([`--child=${location}`, `--entry=${entry}`, `--drain-n=${drained}`])
          .concat([`--batch=${batch}`, `--concurrency=${concurrency}`]),
        { stdio: "ignore" },
      );
      const count = addonInstructions(out);
      console.log(`${entry}: ${(count / 1e6).toFixed(1)}M instructions, ${Math.round(count / drained)} a task`);
    }
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

if (isMain(import.meta.url)) await main();
