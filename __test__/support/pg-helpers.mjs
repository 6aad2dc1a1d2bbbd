// Helpers for the Postgres tests: a database of its own per test (created and
// dropped through psql), clients and workers that are closed when the test
// ends, and a private cluster for the tests that restart the server.
//
// The tests read CAIRNQ_TEST_PG_DSN (`scripts/test/postgres.sh start` prints one).
// Without it they skip with a reason, unless CI is set: then they fail.
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { promisify } from "node:util";

import { CairnQ, Worker } from "../../index.mjs";
import { REPO_ROOT, defer, makeTempDir, manageWorker, migrationLedger, waitFor } from "./helpers.mjs";

const execFileAsync = promisify(execFile);

export const BASE_DSN = process.env.CAIRNQ_TEST_PG_DSN || null;
const IN_CI = Boolean(process.env.CI);

/**
 * The `skip` option for every Postgres suite: a reason when the DSN is unset
 * outside CI; `false` otherwise, so in CI a missing DSN fails every test (in
 * `requireDsn`) instead of passing silently.
 */
export const PG_SKIP =
  BASE_DSN || IN_CI ? false : "CAIRNQ_TEST_PG_DSN is not set (scripts/test/postgres.sh start prints one)";

/** The Postgres migration ledger's names, in order (docs/protocol.md, "Migration ledger"). */
export const POSTGRES_MIGRATIONS = migrationLedger().postgres;

export function requireDsn() {
  if (!BASE_DSN) throw new Error("CAIRNQ_TEST_PG_DSN must be set when CI is set: the Postgres tests cannot run");
  return BASE_DSN;
}

/** The newest PostgreSQL client/server binary directory, or null. */
export function serverBinDir() {
  const root = "/usr/lib/postgresql";
  if (!fs.existsSync(root)) return null;
  const versions = fs
    .readdirSync(root)
    .filter((v) => fs.existsSync(path.join(root, v, "bin", "pg_ctl")))
    .sort((a, b) => Number(a) - Number(b));
  return versions.length ? path.join(root, versions.at(-1), "bin") : null;
}

function psqlBinary() {
  if (process.env.PSQL) return process.env.PSQL;
  const dir = serverBinDir();
  if (dir && fs.existsSync(path.join(dir, "psql"))) return path.join(dir, "psql");
  return "psql";
}
export const PSQL = psqlBinary();

/** Run one SQL string through psql against `dsn`; resolves with trimmed unaligned output. */
export async function psql(dsn, sql, { timeoutMs = 60_000 } = {}) {
  try {
    const { stdout } = await execFileAsync(
      PSQL,
      ["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", dsn, "-c", sql],
      {
        timeout: timeoutMs,
        maxBuffer: 64 * 1024 * 1024,
      },
    );
    return stdout.trim();
  } catch (err) {
    throw new Error(`psql failed for ${JSON.stringify(sql)}: ${err.stderr || err.message}`, { cause: err });
  }
}

/** `dsn` with its database name replaced (URL or key=value form). */
export function dsnWithDatabase(dsn, database) {
  if (/^postgres(ql)?:\/\//.test(dsn)) {
    const url = new URL(dsn);
    url.pathname = `/${database}`;
    return url.toString();
  }
  return `${dsn.replace(/\bdbname=\S+/, "")} dbname=${database}`;
}

/** `dsn` with user and/or password replaced (URL form). */
export function dsnWithCredentials(dsn, { user, password }) {
  const url = new URL(dsn);
  if (user !== undefined) url.username = encodeURIComponent(user);
  if (password !== undefined) url.password = encodeURIComponent(password);
  return url.toString();
}

export function dsnWithPort(dsn, port) {
  const url = new URL(dsn);
  url.port = String(port);
  return url.toString();
}

/** The password in a URL DSN (to check messages never contain it). */
export function passwordOf(dsn) {
  return decodeURIComponent(new URL(dsn).password);
}

export function randomName(prefix = "cq") {
  return `${prefix}_${randomBytes(6).toString("hex")}`;
}

/**
 * A fresh, empty database on the test server (or on `adminDsn`'s server),
 * dropped WITH (FORCE) when the test ends — after everything registered
 * later (clients, workers, processes) has been closed.
 */
export async function createDatabase(t, adminDsn = requireDsn()) {
  const database = randomName("cq");
  await psql(adminDsn, `create database ${database}`);
  defer(t, () => psql(adminDsn, `drop database if exists ${database} with (force)`));
  return { database, dsn: dsnWithDatabase(adminDsn, database), adminDsn };
}

/** Backends connected to `database` right now (psql connects to the admin database). */
export async function connectionCount(adminDsn, database) {
  return Number(await psql(adminDsn, `select count(*) from pg_stat_activity where datname = '${database}'`));
}

/** The last query of each backend connected to `database`, on one line each. */
export async function backendQueries(adminDsn, database) {
  const out = await psql(
    adminDsn,
    `select regexp_replace(coalesce(query, ''), '\\s+', ' ', 'g') from pg_stat_activity where datname = '${database}'`,
  );
  return out === "" ? [] : out.split("\n");
}

export const isListenQuery = (query) => /^\s*listen\s/i.test(query);

/**
 * Resolve once `count` backends on `database` have subscribed with LISTEN
 * (push wakeups are live), so a test that times a wake does not race the
 * listener's background start.
 */
export async function waitForListeners(adminDsn, database, count, { timeoutMs = 20_000 } = {}) {
  let last = [];
  await waitFor(
    async () => {
      last = await backendQueries(adminDsn, database);
      return last.filter(isListenQuery).length >= count;
    },
    {
      timeoutMs,
      intervalMs: 20,
      message: `fewer than ${count} LISTEN connections on ${database}; backends: ${JSON.stringify(last)}`,
    },
  );
}

/** A `CairnQ.postgres` client closed when the test ends. */
export function openPgClient(t, dsn, opts = {}) {
  const client = CairnQ.postgres(dsn, opts);
  defer(t, () => client.close());
  return client;
}

/**
 * `Worker.postgres(dsn, opts)` (or `new Worker(store, queues, opts)` with
 * `opts.store`), managed by `manageWorker`.
 */
export function makePgWorker(t, dsn, opts = {}) {
  const { store, queues = ["default"], ...rest } = opts;
  const worker = store
    ? new Worker(store, queues, { pollIntervalMs: 50, ...rest })
    : Worker.postgres(dsn, { queues, pollIntervalMs: 50, ...rest });
  return manageWorker(t, worker);
}

/** A TCP port on 127.0.0.1 that nothing listens on right now. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

const POSTGRES_SH = path.join(REPO_ROOT, "scripts", "test", "postgres.sh");

async function postgresSh(args, timeoutMs = 180_000) {
  try {
    const { stdout } = await execFileAsync("bash", [POSTGRES_SH, ...args], {
      timeout: timeoutMs,
      maxBuffer: 16 * 1024 * 1024,
    });
    return stdout.trim();
  } catch (err) {
    throw new Error(`scripts/test/postgres.sh ${args.join(" ")} failed: ${err.stderr || err.message}`, { cause: err });
  }
}

/**
 * A private cluster (its own data dir and port, through scripts/test/postgres.sh),
 * so restarting it disturbs no other test. Stopped and removed at the end.
 * Returns {dsn, start(), stop()}.
 */
export async function privateCluster(t) {
  const port = await freePort();
  // Removed after the cluster is stopped (deferred cleanups run last-first).
  const dir = makeTempDir(t, "cairnq-pg-own-");
  const cluster = {
    dir,
    port,
    dsn: null,
    async start() {
      cluster.dsn = await postgresSh(["start", dir, String(port)]);
      return cluster.dsn;
    },
    stop() {
      return postgresSh(["stop", dir]);
    },
  };
  defer(t, () => cluster.stop());
  await cluster.start();
  return cluster;
}
