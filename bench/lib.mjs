// Shared benchmark plumbing: fresh databases, in-flight pools, medians.
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { CairnQ, Worker } from "../index.mjs";

/**
 * Where a benchmark runs: a fresh SQLite file each time, or with
 * `--pg=postgres://…` a fresh database on that server each time (created with
 * psql). `location` is what `open`/`worker` take, so it can cross to a child.
 */
export function benchTarget() {
  const dsn = argValue("pg", process.env.CAIRNQ_BENCH_PG_DSN ?? null);
  if (!dsn) {
    return {
      name: "SQLite",
      fresh(label) {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), `cairnq-bench-${label}-`));
        return path.join(dir, "bench.db");
      },
      release(location) {
        fs.rmSync(path.dirname(location), { recursive: true, force: true });
      },
    };
  }
  return {
    name: "Postgres",
    fresh() {
      const database = `cairnq_bench_${randomBytes(5).toString("hex")}`;
      execFileSync("psql", [dsn, "-qc", `create database ${database}`]);
      const url = new URL(dsn);
      url.pathname = `/${database}`;
      return url.toString();
    },
    release(location) {
      const database = new URL(location).pathname.slice(1);
      execFileSync("psql", [dsn, "-qc", `drop database if exists ${database} with (force)`]);
    },
  };
}

export function openClient(location) {
  return location.startsWith("postgres") ? CairnQ.postgres(location) : CairnQ.sqlite(location);
}

export function openWorker(location, opts) {
  return location.startsWith("postgres") ? Worker.postgres(location, opts) : Worker.sqlite(location, opts);
}

/** Run `op(i)` for i in [0, n) with at most `inFlight` pending; returns ops/s. */
export async function throughput(n, inFlight, op) {
  let next = 0;
  const started = process.hrtime.bigint();
  const lane = async () => {
    while (next < n) await op(next++);
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, n) }, lane));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return n / seconds;
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

/** Repeat a measurement and report the median with the spread. */
export async function repeat(label, reps, measure, unit = "ops/s") {
  const samples = [];
  for (let i = 0; i < reps; i++) samples.push(await measure(i));
  const fmt = (v) => (v >= 100 ? Math.round(v).toLocaleString("en-US") : v.toFixed(2));
  const row = { label, median: median(samples), min: Math.min(...samples), max: Math.max(...samples), unit };
  console.log(
    `${label.padEnd(44)} ${fmt(row.median).padStart(10)} ${unit}  (min ${fmt(row.min)}, max ${fmt(row.max)}, n=${reps})`,
  );
  return row;
}

export function argValue(name, fallback) {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  return hit ? hit.slice(name.length + 3) : fallback;
}
