// Shared benchmark plumbing: options, the package under test, fresh
// databases, in-flight pools, child processes, statistics.
import { execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
/** The repository's own entry: what runs when no `--entry=` is given. */
export const DEFAULT_ENTRY = path.resolve(BENCH_DIR, "../index.mjs");

/** `--name=value` from the command line, or `fallback`. */
export function argValue(name, fallback) {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  return hit ? hit.slice(name.length + 3) : fallback;
}

export function argFlag(name) {
  return process.argv.includes(`--${name}`);
}

export function argNumber(name, fallback) {
  const value = Number(argValue(name, fallback));
  if (!Number.isFinite(value) || value < 0) throw new Error(`--${name} must be a non-negative number`);
  return value;
}

/** The absolute path of the package entry under test (`--entry=`). */
export function entryPath() {
  return path.resolve(argValue("entry", DEFAULT_ENTRY));
}

/** Load the package under test: the same workload code runs on either package. */
export function loadPackage(entry = entryPath()) {
  return import(pathToFileURL(entry).href);
}

/**
 * Workload sizes. `--n=N` sets every count at once (the backlog queue is 11×N);
 * a specific option (e.g. `--drain-n=`) wins over it.
 */
export function sizes() {
  const base = argValue("n", null);
  const size = (name, fallback, scale = 1) => argNumber(name, base == null ? fallback : Number(base) * scale);
  return {
    submitSeq: size("submit-n", 5000),
    submit64: size("submit64-n", 20000),
    getSeeded: size("get-seeded", 2000),
    getOps: size("get-n", 10000),
    cancelSeq: size("cancel-n", 5000),
    cancel64: size("cancel64-n", 10000),
    purge: size("purge-n", 20000),
    drain: size("drain-n", 2000),
    backlog: size("backlog", 22000, 11),
    backlogMeasured: size("backlog-n", 2000),
    calls: argNumber("calls", 300),
    warmup: argNumber("warmup", 20),
  };
}

/** The Postgres server to run on (`--pg=` or CAIRNQ_BENCH_PG_DSN), or null for SQLite. */
export function pgDsn() {
  return argValue("pg", process.env.CAIRNQ_BENCH_PG_DSN || null);
}

/**
 * Where a benchmark runs: fresh SQLite files under one scratch directory, or
 * with `--pg=postgres://…` fresh databases on that server (created with psql)
 * named after one prefix. `location` is what `openClient`/`openWorker` take, so
 * it can cross to a child process. `--scratch=` (SQLite: a directory, Postgres:
 * a database-name prefix) lets a parent choose it, so it can clean up after a
 * child it had to kill; `cleanup()` removes everything under it.
 */
export function benchTarget(scratch = argValue("scratch", null), dsn = pgDsn()) {
  let serial = 0;
  if (!dsn) {
    const root = scratch ?? fs.mkdtempSync(path.join(os.tmpdir(), "cairnq-bench-"));
    return {
      name: "SQLite",
      pg: false,
      scratch: root,
      fresh(label) {
        const dir = path.join(root, `${label}-${serial++}`);
        fs.mkdirSync(dir, { recursive: true });
        return path.join(dir, "bench.db");
      },
      release(location) {
        fs.rmSync(path.dirname(location), { recursive: true, force: true });
      },
      cleanup() {
        fs.rmSync(root, { recursive: true, force: true });
      },
    };
  }
  const prefix = scratch ?? `cairnq_bench_${randomBytes(4).toString("hex")}`;
  const psql = (sql) => execFileSync("psql", [dsn, "-qAtc", sql], { encoding: "utf8" });
  const drop = (database) => psql(`drop database if exists ${database} with (force)`);
  return {
    name: "Postgres",
    pg: true,
    scratch: prefix,
    fresh() {
      const database = `${prefix}_${serial++}`;
      psql(`create database ${database}`);
      const url = new URL(dsn);
      url.pathname = `/${database}`;
      return url.toString();
    },
    release(location) {
      drop(new URL(location).pathname.slice(1));
    },
    cleanup() {
      const names = psql(`select datname from pg_database where datname like '${prefix}\\_%'`);
      for (const database of names.split("\n").filter(Boolean)) drop(database);
    },
  };
}

export function openClient(pkg, location) {
  return location.startsWith("postgres") ? pkg.CairnQ.postgres(location) : pkg.CairnQ.sqlite(location);
}

export function openWorker(pkg, location, opts) {
  return location.startsWith("postgres") ? pkg.Worker.postgres(location, opts) : pkg.Worker.sqlite(location, opts);
}

/**
 * Drain `n` tasks on a fresh database of `target`: `setup(client)` queues
 * them, then a worker (poll 50 ms, `concurrency`) registered by
 * `register(worker, handler)` runs them; tasks/s from `run()` until the
 * handler ran `n` times.
 */
export async function drainRate(pkg, target, label, { n, concurrency = 16, setup, register }) {
  const location = target.fresh(label);
  const client = openClient(pkg, location);
  try {
    await client.connect();
    await setup(client);
    // Postgres: the drain starts with the statistics of the table it drains.
    // A fresh database's table was loaded within seconds, and autovacuum has
    // analyzed it empty, part-loaded or not at all, so the planner's choices
    // (and the figures) flip between repetitions; a queue table in service has
    // the statistics autovacuum keeps. bench/fleet.mjs does the same.
    if (location.startsWith("postgres")) execFileSync("psql", [location, "-qc", "vacuum analyze cairnq_tasks"]);
    // Let the setup's checkpoints finish, so every variant starts alike.
    await sleep(1000);
    const worker = openWorker(pkg, location, { pollIntervalMs: 50, concurrency });
    let done = 0;
    register(worker, () => {
      done += 1;
      return null;
    });
    const started = process.hrtime.bigint();
    const running = worker.run();
    await until("drained", () => done >= n, { everyMs: 5, timeoutMs: 600_000 });
    const rate = n / seconds(started);
    worker.stop();
    await running;
    await worker.close();
    return rate;
  } finally {
    await client.close();
    target.release(location);
  }
}

/** A connected client on a fresh database, closed and released after `fn`. */
export async function withClient(ctx, label, fn) {
  const location = ctx.target.fresh(label);
  const client = openClient(ctx.pkg, location);
  try {
    await client.connect();
    return await fn(client, location);
  } finally {
    await client.close();
    ctx.target.release(location);
  }
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export function seconds(startedNs) {
  return Number(process.hrtime.bigint() - startedNs) / 1e9;
}

/** Run `op(i)` for i in [0, n) with at most `inFlight` pending; returns ops/s. */
export async function throughput(n, inFlight, op) {
  let next = 0;
  const started = process.hrtime.bigint();
  const lane = async () => {
    while (next < n) await op(next++);
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, n) }, lane));
  return n / seconds(started);
}

/** Submit `count` tasks named `name`, 64 in flight; returns their ids. */
export async function seed(client, count, name = "job", payload = (i) => ({ i })) {
  const ids = new Array(count);
  await throughput(count, 64, async (i) => (ids[i] = (await client.submit(name, payload(i))).id));
  return ids;
}

/** Poll `check()` every `everyMs` until it is truthy; throws after `timeoutMs`. */
export async function until(what, check, { everyMs = 2, timeoutMs = 120_000 } = {}) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`${what}: not reached within ${timeoutMs} ms`);
    await sleep(everyMs);
  }
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

export function mean(values) {
  return values.reduce((a, b) => a + b, 0) / values.length;
}

/** 12,345 / 123 / 12.3 / 1.23 — enough digits to compare, no more. */
export function fmt(v) {
  if (v == null || Number.isNaN(v)) return "–";
  if (Math.abs(v) >= 1000) return Math.round(v).toLocaleString("en-US");
  if (Math.abs(v) >= 100) return v.toFixed(0);
  if (Math.abs(v) >= 10) return v.toFixed(1);
  return v.toFixed(2);
}

/** Reject with `${what} did not finish within …` unless `promise` settles in time. */
export function withTimeout(promise, ms, what) {
  let timer;
  const expiry = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, expiry]).finally(() => clearTimeout(timer));
}

const running = new Set();
let interruptible = false;
function killChildrenOnInterrupt() {
  if (interruptible) return;
  interruptible = true;
  process.once("SIGINT", () => {
    for (const child of running) killGroup(child);
    process.exit(130);
  });
}

function killGroup(child) {
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    // already gone
  }
}

/**
 * Run `node script args…` (environment `env`) in its own process group; resolve the last JSON line
 * it printed on stdout. After `timeoutMs` the whole group (the script and any
 * child it forked) is killed and the promise rejects with `label`.
 */
export function runNode(script, args, { label, timeoutMs, echo = false, env = process.env }) {
  killChildrenOnInterrupt();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.resolve(BENCH_DIR, script), ...args], {
      detached: true,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    running.add(child);
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += d;
      if (echo) process.stdout.write(d);
    });
    child.stderr.on("data", (d) => (stderr += d));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child);
    }, timeoutMs);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      running.delete(child);
      killGroup(child); // a grandchild that outlived its parent
      const tail = stderr.trim().split("\n").slice(-6).join("\n");
      if (timedOut) return reject(new Error(`${label} did not finish within ${timeoutMs / 1000} s`));
      const line = stdout
        .trim()
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .pop();
      if (code !== 0 || !line) {
        return reject(new Error(`${label} exited with ${signal ?? code}${tail ? `:\n${tail}` : ""}`));
      }
      resolve(JSON.parse(line));
    });
  });
}

// ---------------------------------------------------------------------------
// Figures: `{ rows: [{ name, lower }], run(ctx) → { values: [one per row], detail? } }`.
// `ctx` = { pkg, entry, target, sizes }. bench/figure.mjs runs one in a child
// process for bench/compare.mjs; a figure module run directly (e.g.
// `node bench/client.mjs`) repeats its own figures in-process.
// ---------------------------------------------------------------------------

/** A figure with one row whose value is what `measure(ctx)` resolves. */
export function single(name, lower, measure) {
  return { rows: [{ name, lower }], run: async (ctx) => ({ values: [await measure(ctx)] }) };
}

export const FIGURE_TIMEOUT_MS = argNumber("timeout", 120) * 1000;

export async function figureContext() {
  const entry = entryPath();
  return { pkg: await loadPackage(entry), entry, target: benchTarget(), sizes: sizes() };
}

/** How long one repetition of `spec` may take: 120 s (`--timeout=`), unless the figure says more. */
export function figureBudgetMs(spec, sizes) {
  return Math.max(FIGURE_TIMEOUT_MS, spec.budgetMs?.(sizes) ?? 0);
}

export function runFigure(id, spec, ctx) {
  return withTimeout(spec.run(ctx), figureBudgetMs(spec, ctx.sizes), `figure ${id} (${spec.rows[0].name})`);
}

/** `--only=a,b` as a filter over figure ids (null = all). */
export function onlyFilter() {
  const only = argValue("only", null);
  return only ? new Set(only.split(",").map((s) => s.trim())) : null;
}

/** True when `url` (an `import.meta.url`) is the script node was started with. */
export function isMain(url) {
  return Boolean(process.argv[1]) && path.resolve(process.argv[1]) === fileURLToPath(url);
}

/** When `url` is the script node was started with, run `figures` in-process. */
export async function standalone(url, figures) {
  if (!isMain(url)) return;
  const reps = argNumber("reps", 3);
  const only = onlyFilter();
  const ctx = await figureContext();
  console.log(`cairnq benchmark — ${ctx.entry} on ${ctx.target.name}, ${reps} repetitions, median (min, max)`);
  try {
    for (const [id, spec] of Object.entries(figures)) {
      if ((only && !only.has(id)) || (spec.sqliteOnly && ctx.target.pg)) continue;
      const samples = spec.rows.map(() => []);
      const details = [];
      for (let i = 0; i < reps; i++) {
        const result = await runFigure(id, spec, ctx);
        result.values.forEach((v, k) => samples[k].push(v));
        if (result.detail) details.push(result.detail);
      }
      spec.rows.forEach((row, k) => {
        const s = samples[k];
        console.log(
          `${row.name.padEnd(64)} ${fmt(median(s)).padStart(9)}  (min ${fmt(Math.min(...s))}, max ${fmt(Math.max(...s))})`,
        );
      });
      if (details.length) console.log(`  ${details.join(" | ")}`);
    }
  } finally {
    ctx.target.cleanup();
  }
}

/**
 * `fn(client)` on a fresh database of `target` while one worker runs on it
 * (its handlers registered by `register(worker)`); everything closed and the
 * database released afterwards.
 */
export async function withWorker(pkg, target, label, opts, register, fn) {
  const location = target.fresh(label);
  const client = openClient(pkg, location);
  try {
    await client.connect();
    const worker = openWorker(pkg, location, { pollIntervalMs: 50, ...opts });
    register(worker);
    const running = worker.run();
    try {
      return await fn(client);
    } finally {
      worker.stop();
      await running;
      await worker.close();
    }
  } finally {
    await client.close();
    target.release(location);
  }
}
