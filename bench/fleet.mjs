// How a fleet of worker processes scales on one Postgres server:
//   node bench/fleet.mjs --pg=postgres://… [--n=20000] [--processes=1,2,4,8,16]
//     [--concurrency=16] [--groups=10000] [--reps=1] [--entry=…]
//
// For each process count and each variant (ungrouped: a plain registration;
// grouped: task i in group i % groups, `groupConcurrency: 1`), a fresh
// database gets `--n` queued no-op tasks, then that many worker processes
// (bench/fleet-worker.mjs, concurrency `--concurrency` each, poll 50 ms) open
// and, all ready, start together; timed until their handlers ran `--n` times.
// Sampled during the drain (every 100 ms, on a connection of its own): the
// active backends of the database by wait event, and lock requests not
// granted; before and after: transactions committed per task (an empty claim
// commits too, so more than ~2 a task means claims came back empty or short),
// WAL records and bytes per task and WAL writes (pg_stat_wal), and the busy
// share of this machine's CPUs (/proc/stat).
import { fork } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import pg from "pg";
import {
  argNumber,
  argValue,
  benchTarget,
  entryPath,
  loadPackage,
  median,
  openClient,
  seconds,
  sleep,
  throughput,
  withTimeout,
} from "./lib.mjs";

const target = benchTarget();
if (!target.pg) throw new Error("fleet.mjs runs on Postgres: pass --pg=postgres://… (or set CAIRNQ_BENCH_PG_DSN)");
const pkg = await loadPackage();
const n = argNumber("n", 20000);
const counts = argValue("processes", "1,2,4,8,16").split(",").map(Number);
const concurrency = argNumber("concurrency", 16);
const groups = argNumber("groups", 10000);
const reps = Math.max(1, argNumber("reps", 1));

/** Jiffies busy and in total over every CPU, from /proc/stat's first line. */
function cpuTimes() {
  const [, ...fields] = fs.readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/);
  const values = fields.map(Number);
  const idle = values[3] + values[4]; // idle + iowait
  const total = values.reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
}

async function serverCounters(sql, database) {
  const { rows } = await sql.query(
    `select (select xact_commit + xact_rollback from pg_stat_database where datname = $1) as xacts,
            wal_records, wal_bytes, wal_write
     from pg_stat_wal`,
    [database],
  );
  const row = rows[0];
  return Object.fromEntries(Object.entries(row).map(([k, v]) => [k, Number(v)]));
}

/** Every 100 ms until `stop()`: wait events of the database's active backends, ungranted locks. */
function sampler(sql, database) {
  const waits = new Map();
  let samples = 0;
  let ungranted = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const { rows } = await sql.query(
        `select coalesce(wait_event_type || ':' || wait_event, 'CPU') as wait, count(*)::int as n
         from pg_stat_activity
         where datname = $1 and state = 'active' and pid <> pg_backend_pid()
         group by 1`,
        [database],
      );
      for (const { wait, n: count } of rows) waits.set(wait, (waits.get(wait) ?? 0) + count);
      const locks = await sql.query(
        `select count(*)::int as n from pg_locks l join pg_database d on d.oid = l.database
         where d.datname = $1 and not l.granted`,
        [database],
      );
      ungranted += locks.rows[0].n;
      samples += 1;
      await sleep(100);
    }
  })();
  return async () => {
    running = false;
    await loop;
    const perSample = [...waits].sort((a, b) => b[1] - a[1]).map(([w, c]) => `${w} ${(c / samples).toFixed(1)}`);
    return { active: perSample.join(", ") || "none", ungranted: ungranted / Math.max(1, samples) };
  };
}

async function stopAll(children) {
  for (const { child } of children) if (child.exitCode == null) child.kill("SIGTERM");
  await Promise.all(children.map((c) => c.exited));
}

async function drain(processes, grouped) {
  const location = target.fresh("fleet");
  const database = new URL(location).pathname.slice(1);
  const client = openClient(pkg, location);
  const sql = new pg.Client({ connectionString: location });
  const children = [];
  try {
    await client.connect();
    await sql.connect();
    await throughput(n, 64, (i) => client.submit("job", { i }, grouped ? { group: `g${i % groups}` } : {}));
    // Closed before the counters are read: an idle backend reports its
    // counters late (PostgreSQL 15: after 10 s idle), at its exit at once, so
    // the submits' commits and WAL would land in the drain's.
    await client.close();
    await sql.query("vacuum analyze cairnq_tasks");
    await sleep(1000);
    let done = 0;
    const counts = new Array(processes).fill(0);
    let finished;
    const drained = new Promise((resolve) => (finished = resolve));
    for (let k = 0; k < processes; k++) {
      const args = [`--entry=${entryPath()}`, `--location=${location}`, `--concurrency=${concurrency}`];
      const child = fork(new URL("./fleet-worker.mjs", import.meta.url), grouped ? [...args, "--grouped"] : args);
      const ready = new Promise((resolve) => child.once("message", resolve));
      child.on("message", (message) => {
        if (message.done == null) return;
        done += message.done - counts[k];
        counts[k] = message.done;
        if (done >= n) finished();
      });
      children.push({ child, ready, exited: new Promise((resolve) => child.once("exit", resolve)) });
    }
    await withTimeout(Promise.all(children.map((c) => c.ready)), 60_000, "the worker processes' start");
    const before = await serverCounters(sql, database);
    const cpuBefore = cpuTimes();
    const stopSampling = sampler(sql, database);
    const started = process.hrtime.bigint();
    for (const { child } of children) child.send("go");
    await withTimeout(drained, 600_000, `the drain by ${processes} processes`);
    const elapsed = seconds(started);
    const cpuAfter = cpuTimes();
    const sampled = await stopSampling();
    // A backend reports its counters at most once a second, and at its exit.
    await stopAll(children);
    await sleep(1500);
    const after = await serverCounters(sql, database);
    const per = (key) => (after[key] - before[key]) / n;
    return {
      rate: n / elapsed,
      cpu: (cpuAfter.busy - cpuBefore.busy) / (cpuAfter.total - cpuBefore.total),
      xacts: per("xacts"),
      walRecords: per("wal_records"),
      walBytes: per("wal_bytes"),
      walWrites: after.wal_write - before.wal_write,
      ...sampled,
    };
  } finally {
    await stopAll(children);
    await sql.end();
    await client.close();
    target.release(location);
  }
}

const rows = [];
try {
  console.log(
    `fleet bench: n=${n} processes=${counts.join(",")} concurrency=${concurrency} groups=${groups} reps=${reps}; ` +
      `${os.cpus().length} CPUs, load ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(" ")}`,
  );
  for (const processes of counts) {
    for (const grouped of [false, true]) {
      const results = [];
      for (let r = 0; r < reps; r++) {
        const result = await drain(processes, grouped);
        results.push(result);
        console.log(
          `  ${processes} × c${concurrency} ${grouped ? "grouped  " : "ungrouped"} ${result.rate.toFixed(0)} tasks/s, ` +
            `CPU ${(result.cpu * 100).toFixed(0)}%, ${result.xacts.toFixed(2)} xacts/task, ` +
            `WAL ${result.walRecords.toFixed(1)} records ${result.walBytes.toFixed(0)} B/task, ${result.walWrites} writes; ` +
            `active backends by wait: ${result.active}; ungranted locks ${result.ungranted.toFixed(2)}`,
        );
      }
      const mid = results.find((r) => r.rate === median(results.map((x) => x.rate))) ?? results[0];
      rows.push({ processes, grouped, rate: median(results.map((r) => r.rate)), mid });
    }
  }
  console.log(
    `\nload after: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
  );
  console.log(
    "\n| processes × concurrency | ungrouped (tasks/s) | grouped (tasks/s) | grouped / ungrouped | CPU busy (ungrouped / grouped) | xacts a task | active backends by wait (ungrouped) |",
  );
  console.log("| --- | ---: | ---: | ---: | ---: | ---: | --- |");
  for (const processes of counts) {
    const [u, g] = [false, true].map((grouped) => rows.find((r) => r.processes === processes && r.grouped === grouped));
    console.log(
      `| ${processes} × ${concurrency} | ${u.rate.toFixed(0)} | ${g.rate.toFixed(0)} | ${(g.rate / u.rate).toFixed(2)} | ` +
        `${(u.mid.cpu * 100).toFixed(0)}% / ${(g.mid.cpu * 100).toFixed(0)}% | ${u.mid.xacts.toFixed(2)} / ${g.mid.xacts.toFixed(2)} | ${u.mid.active} |`,
    );
  }
} finally {
  target.cleanup();
}
