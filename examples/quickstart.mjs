// A worker and a client on one embedded SQLite file.
//
//   npm start            (builds the addon, then runs this file)
//
// The worker registers two handlers; the client calls them and prints the
// results. The second handler blocks the event loop for longer than its lease:
// the lease is renewed from Rust meanwhile, so the task still runs exactly once.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { CairnQ, Worker, defineTask } from "../index.mjs";

const dbPath = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "cairnq-quickstart-")), "queue.db");

/** @type {import("../index.js").TaskDef<{ text: string }, { words: number }>} */
const countWords = defineTask("count-words");

const worker = Worker.sqlite(dbPath, {
  leaseMs: 1_000,
  pollIntervalMs: 50,
  onError: (err, info) => console.log(`  (worker reported ${err.name} during ${info.phase})`),
});

worker.task(countWords, async (ctx, { text }) => {
  await ctx.progress(0.5, "counting");
  return { words: text.split(/\s+/).filter(Boolean).length };
});

worker.task("checksum", (ctx, { size }) => {
  // Synchronous work that holds the event loop for 2.5 s, 2.5× the lease.
  const until = Date.now() + 2_500;
  let sum = 0;
  while (Date.now() < until) sum = (sum + size * 31) % 1_000_003;
  return { sum, attempt: ctx.attempt };
});

const client = CairnQ.sqlite(dbPath);

await worker.background(async () => {
  const counted = await client.call(countWords, { text: "a durable task queue on one SQLite file" });
  console.log("count-words ->", counted);

  const checksum = await client.call("checksum", { size: 42 }, { waitTimeoutMs: 20_000 });
  console.log("checksum    ->", checksum, "(attempt 1: the lease survived the blocked loop)");

  console.log("stats       ->", JSON.stringify(await client.stats()));
});

await client.close();
console.log(`done; the queue lives in ${dbPath}`);
