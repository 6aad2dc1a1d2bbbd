// The storage dialects the shared suites run on, behind one interface, so a
// dialect-neutral suite is written once and defined once per dialect:
//
//   forEachDialect("submit", (dialect) => {
//     test("…", async (t) => {
//       const { client } = await dialect.open(t);
//       …
//     });
//   });
//
// defines `describe("submit on sqlite")` always and `describe("submit on
// postgres")`, which skips (with the reason) when CAIRNQ_TEST_PG_DSN is unset
// outside CI, like every Postgres suite (pg-helpers.mjs `PG_SKIP`).
//
// A database ("db") is a SQLite file path or a Postgres DSN: each test gets a
// fresh one of its own, removed (file) or dropped (database) when it ends.
// Tests that only hold on one dialect (SQLite files, write locks, child
// processes) sit in the same suite under `if (dialect === sqlite)`.
//
// The shared suites use this module's `test` (bounded by TEST_TIMEOUT_MS), so
// the runner reports a test's location here; the stack of a failure points at
// the test itself.
import { describe, test as nodeTest } from "node:test";

import { CairnQ, PostgresStore, SQLiteStore, Worker } from "../../index.mjs";
import { defer, makeDbPath, openClient, runPython } from "./helpers.mjs";
import { PG_SKIP, createDatabase, makePgWorker, openPgClient, psql } from "./pg-helpers.mjs";
import { makeWorker } from "./worker-helpers.mjs";

/** The per-test bound of the shared suites: a hang fails that test, not the whole run. */
export const TEST_TIMEOUT_MS = 60_000;

export const sqlite = {
  name: "sqlite",
  skip: false,
  /**
   * How far (ms) a time the store stamps may read past `Date.now()` taken just
   * after: 0 here, where the store reads this process's clock.
   */
  clockSlackMs: 0,
  /** A fresh, empty database (a file path; the file does not exist yet). */
  async createDatabase(t) {
    return makeDbPath(t);
  },
  /** A client on a fresh database (or on `db`), closed when the test ends: `{client, db}` (`dbPath` too). */
  async open(t, opts = {}, db = undefined) {
    const { client, dbPath } = openClient(t, opts, db);
    return { client, db: dbPath, dbPath };
  },
  /** `CairnQ.sqlite(db, opts)`; the caller closes it. */
  client(db, opts) {
    return CairnQ.sqlite(db, opts);
  },
  /** `new SQLiteStore(db, opts)`; the caller closes it. */
  store(db, opts) {
    return new SQLiteStore(db, opts);
  },
  /** `Worker.sqlite(db, opts)`: the factory, unmanaged. */
  worker(db, opts) {
    return Worker.sqlite(db, opts);
  },
  /** A worker on `db` (worker-helpers.mjs `makeWorker`): stopped, drained and closed when the test ends. */
  makeWorker(t, db, opts = {}) {
    return makeWorker(t, db, opts);
  },
};

/** The same members as `sqlite`, on a database of the test's own on CAIRNQ_TEST_PG_DSN's server. */
export const postgres = {
  name: "postgres",
  skip: PG_SKIP,
  // The database clock stamps times, rounded to the millisecond (Date.now()
  // truncates): a stamp may read 1 ms past ours.
  clockSlackMs: 1,
  async createDatabase(t) {
    return (await createDatabase(t)).dsn;
  },
  async open(t, opts = {}, db = undefined) {
    const dsn = db ?? (await createDatabase(t)).dsn;
    return { client: openPgClient(t, dsn, opts), db: dsn };
  },
  client(db, opts) {
    return CairnQ.postgres(db, opts);
  },
  store(db, opts) {
    return new PostgresStore(db, opts);
  },
  worker(db, opts) {
    return Worker.postgres(db, opts);
  },
  makeWorker(t, db, opts = {}) {
    return makePgWorker(t, db, opts);
  },
};

export const DIALECTS = [sqlite, postgres];

/** Whether `table` exists in `db`, read by another program (Python's sqlite3 read-only, or psql). */
export async function tableExists(dialect, db, table) {
  if (dialect === sqlite) {
    const code = [
      "import sqlite3, sys",
      "c = sqlite3.connect('file:' + sys.argv[1] + '?mode=ro', uri=True)",
      "print(c.execute('select count(*) from sqlite_master where name = ?', (sys.argv[2],)).fetchone()[0])",
    ].join("\n");
    return (await runPython(code, [db, table])).trim() === "1";
  }
  return (await psql(db, `select to_regclass('${table}') is not null`)).trim() === "t";
}

/** A store on `db` the test owns (closed when it ends), for `new Worker(store, …)` or `new CairnQ(store)`. */
export function makeStore(t, dialect, db, opts) {
  const store = dialect.store(db, opts);
  defer(t, () => store.close());
  return store;
}

/**
 * A client and a worker (not started) on one fresh database:
 * `{client, db, handle, worker}` (plus `dbPath` on SQLite).
 */
export async function setupWorker(t, dialect, opts = {}) {
  const opened = await dialect.open(t);
  const handle = dialect.makeWorker(t, opened.db, opts);
  return { ...opened, handle, worker: handle.worker };
}

/**
 * `describe(\`${suite} on ${dialect.name}\`, …)` for every dialect, with
 * `define(dialect)` as its body.
 */
export function forEachDialect(suite, define) {
  for (const dialect of DIALECTS) {
    describe(`${suite} on ${dialect.name}`, { skip: dialect.skip }, () => define(dialect));
  }
}

/** `test(name, fn)` bounded by TEST_TIMEOUT_MS. */
export function test(name, fn) {
  return nodeTest(name, { timeout: TEST_TIMEOUT_MS }, fn);
}
