// retryMany of many failed tasks (docs/api.md, "Bulk retry and cancel"), this
// package only, standalone:
//   node bench/bulk-ops.mjs [--n=100000] [--others=0] [--limit=1000] [--pg=postgres://…]
//
// Seeds `others` succeeded tasks, then n failed ones completed after them
// (submitMany in chunks, then SQL updates of the status, none of it timed),
// then in a fresh child process (so its peak RSS is the retry's alone) calls
// client.retryMany({limit}) until a page is not full. Reports the time, pages, tasks/s, the child's RSS before the first
// page and its peak (process.resourceUsage().maxRSS), and checks that every
// task ended queued. A dry run of one page is timed too.
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";

import { argNumber, argValue, benchTarget, entryPath, loadPackage, openClient, runNode, seconds } from "./lib.mjs";

const n = argNumber("n", 100_000);
const others = argNumber("others", 0);
const limit = argNumber("limit", 1000);
const MB = 1024 * 1024;

if (argValue("phase", null) === "retry") {
  // The measured phase, in its own process.
  const pkg = await loadPackage();
  const client = openClient(pkg, argValue("location", ""));
  await client.connect();
  const dryStarted = process.hrtime.bigint();
  const dry = await client.retryMany({ limit, dryRun: true });
  const dryS = seconds(dryStarted);
  const rssBefore = process.memoryUsage().rss;
  const started = process.hrtime.bigint();
  let retried = 0;
  let pages = 0;
  for (;;) {
    const page = await client.retryMany({ limit });
    retried += page.count;
    pages += 1;
    if (!page.more) break;
  }
  const s = seconds(started);
  const stats = await client.stats();
  const queued = Object.values(stats).reduce((sum, counts) => sum + counts.queued, 0);
  await client.close();
  console.log(
    JSON.stringify({
      retried,
      pages,
      s,
      dryMs: dryS * 1000,
      dryCount: dry.count,
      queued,
      rssBeforeMb: rssBefore / MB,
      peakRssMb: (process.resourceUsage().maxRSS * 1024) / MB,
    }),
  );
  process.exit(0);
}

const pkg = await loadPackage();
const target = benchTarget();
const location = target.fresh("bulk-ops");
const client = openClient(pkg, location);
await client.connect();
const seedStarted = process.hrtime.bigint();
for (let done = 0; done < others + n; done += 10_000) {
  const count = Math.min(10_000, others + n - done);
  await client.submitMany(Array.from({ length: count }, (_, i) => ({ task: "job", payload: { i: done + i } })));
}
await client.close();
// The first `others` tasks (by id, the submit order) succeeded, the rest failed;
// each completed when it was created.
const settled = `update cairnq_tasks set attempt = 1, completed_at_ms = created_at_ms, updated_at_ms = created_at_ms,
  status = case when id <= (select id from cairnq_tasks order by id limit 1 offset ${Math.max(others - 1, 0)})
                 and ${others} > 0 then 'succeeded' else 'failed' end,
  error = case when id <= (select id from cairnq_tasks order by id limit 1 offset ${Math.max(others - 1, 0)})
                and ${others} > 0 then null else ${target.pg ? `'{"message":"boom"}'::jsonb` : `'{"message":"boom"}'`} end`;
if (target.pg) {
  execFileSync("psql", [location, "-qAtc", settled]);
  execFileSync("psql", [location, "-qAtc", "vacuum analyze cairnq_tasks"]);
} else {
  const Database = createRequire(import.meta.url)("better-sqlite3");
  const db = new Database(location);
  db.exec(settled);
  db.close();
}
const seedS = seconds(seedStarted);

const result = await runNode(
  "bulk-ops.mjs",
  ["--phase=retry", `--location=${location}`, `--limit=${limit}`, `--entry=${entryPath()}`],
  { label: "retryMany", timeoutMs: 1_800_000 },
);
target.release(location);
target.cleanup();

const ok = result.retried === n && result.queued === n;
console.log(
  `retryMany of ${n} failed tasks (beside ${others} succeeded) on ${target.name}, pages of ${limit} (seeded in ${seedS.toFixed(1)} s)`,
);
console.log(
  `  retried ${result.retried} in ${result.pages} pages: ${result.s.toFixed(2)} s, ${Math.round(result.retried / result.s)} tasks/s`,
);
console.log(`  one dry-run page (${result.dryCount} ids): ${result.dryMs.toFixed(1)} ms`);
console.log(`  RSS before the first page ${result.rssBeforeMb.toFixed(1)} MB, peak ${result.peakRssMb.toFixed(1)} MB`);
console.log(`  every task queued after: ${ok ? "yes" : `NO (${result.queued} queued)`}`);
if (!ok) process.exitCode = 1;
