// Connection strings mean what they mean to node-postgres (docs/api.md,
// "Stores"): each DSN of the table resolves as `pg-connection-string` (the
// parser node-postgres uses, a devDependency pinned to the version `pg`
// brings) parses it; and on a real server, `options` reaches the session (a
// search_path there is what the split guard sees) and `application_name` too.
import { createRequire } from "node:module";
import { describe, test } from "node:test";
import assert from "node:assert/strict";

import { parse } from "pg-connection-string";

import { CairnQ, SchemaMismatch } from "../../index.mjs";
import { defer, rejectionOf } from "../support/helpers.mjs";
import { PG_SKIP, backendQueries, createDatabase, psql, dsnWithDatabase } from "../support/pg-helpers.mjs";

const { dsnFields } = createRequire(import.meta.url)("../../binding.js");

const SUITE_TIMEOUT_MS = 180_000;

const TABLE = [
  "postgres://user:pass@db.example:5432/app",
  "postgresql://user:pass@db.example:6543/app",
  "postgres://us%40er:p%40ss%2Fw%3Ard%25@db.example/app",
  "postgres://user:p@ss@db.example/app",
  "postgres://user:pa ss@db.example/app",
  "postgres://user:p+ss@db.example/app",
  "postgres://user:p%C3%A4ss@db.example/app",
  "postgres://db.example/app?options=-c+search_path%3Dfoo",
  "postgres://db.example/app?options=-c%20search_path%3Dfoo%20-c%20statement_timeout%3D5000",
  "postgres://db.example/app?options=first&options=-c+search_path%3Dlast",
  "postgres://db.example/app?application_name=my+app",
  "postgres://db.example/app?fallback_application_name=fallback",
  "postgres://db.example/app?sslmode=no-verify",
  "postgres://db.example/app?sslmode=disable",
  "postgres://db.example/app?sslmode=require",
  "postgres://db.example/app?sslmode=verify-full",
  "postgres://db.example/app?sslmode=verify-ca",
  "postgres://db.example/app?ssl=true",
  "postgres://db.example/app?ssl=1",
  "postgres://db.example/app?ssl=0",
  "postgres://db.example/app?ssl=no-verify",
  "postgres://db.example/app?ssl=true&sslmode=disable",
  "postgres:///app?host=/var/run/postgresql",
  "postgres://me@/app?host=/tmp/pg%20sockets",
  "postgres://%2Fvar%2Frun%2Fpostgresql/app",
  "postgres://db.example/app?host=other.example&port=7000",
  "postgres://db.example/app?user=other&password=se%26cret+x",
  "postgres://db.example/my%20app",
  "postgres://db.example/my%2Fapp",
  "postgres://[::1]:5433/app",
  "postgres://db.example/app#fragment",
  "postgres://db.example",
  "/var/run/postgresql app",
];

/**
 * What node-postgres makes of a DSN, in the fields this package resolves it
 * to. TLS in libpq's terms: a `pg` config of `ssl: false` is `disable`, `true`
 * (`ssl=true`) and the verifying modes check the certificate, `no-verify`
 * encrypts without; `require` and `prefer` keep libpq's meanings here
 * (docs/api.md, "Differences of a native worker").
 * @param {string} dsn
 */
function asNodePostgres(dsn) {
  const c = parse(dsn);
  const sslmode =
    c.sslmode === "disable" || c.ssl === false
      ? "disable"
      : c.sslmode === "no-verify" || c.sslmode === "require" || c.ssl === "no-verify"
        ? "require"
        : c.sslmode === "verify-full" || c.sslmode === "verify-ca" || c.ssl === true
          ? "verify-full"
          : "prefer";
  return {
    hosts: [c.host || "localhost"],
    ports: c.port ? [Number(c.port)] : [],
    user: c.user || null,
    password: c.password || null,
    database: c.database ?? null,
    options: c.options ?? null,
    application_name: c.application_name ?? c.fallback_application_name ?? null,
    sslmode,
  };
}

describe("DSNs as node-postgres reads them", () => {
  for (const dsn of TABLE) {
    test(dsn, () => {
      assert.deepEqual(JSON.parse(dsnFields(dsn)), asNodePostgres(dsn));
    });
  }

  test("a malformed DSN is refused without echoing it", () => {
    for (const dsn of ["postgres://me:s3cret@db.example:99999/app", "postgres://me:s3cret@[::1/app"]) {
      assert.throws(
        () => dsnFields(dsn),
        (err) => {
          assert.match(err.message, /invalid Postgres connection string/);
          assert.ok(!err.message.includes("s3cret"), err.message);
          return true;
        },
      );
    }
    assert.throws(() => dsnFields("postgres://db.example/app?sslmode=sometimes"), /sslmode must be one of/);
  });
});

describe("DSN parameters on a real server", { skip: PG_SKIP, timeout: SUITE_TIMEOUT_MS }, () => {
  const withParams = (dsn, params) => `${dsn}${dsn.includes("?") ? "&" : "?"}${params}`;

  test("options=-c+search_path%3DX resolves to X: SchemaMismatch beside an installation elsewhere, joined when X is it", async (t) => {
    const { dsn, adminDsn, database } = await createDatabase(t);
    const owner = CairnQ.postgres(dsn, { schema: "billing" });
    defer(t, () => owner.close());
    const task = await owner.submit("job", null);
    await psql(dsnWithDatabase(adminDsn, database), "create schema elsewhere");

    const split = CairnQ.postgres(withParams(dsn, "options=-c+search_path%3Delsewhere"));
    defer(t, () => split.close());
    const err = await rejectionOf(split.connect());
    assert.ok(err instanceof SchemaMismatch, String(err));
    assert.match(
      err.message,
      /^cairnq tables already exist in schema "billing" of this database, but this connection resolves to "elsewhere"/,
    );

    const joined = CairnQ.postgres(
      withParams(dsn, "options=-c+search_path%3Dbilling&application_name=cairnq+dsn+test"),
    );
    defer(t, () => joined.close());
    assert.equal((await joined.get(task.id)).id, task.id);
    const names = await psql(
      adminDsn,
      `select distinct application_name from pg_stat_activity where datname = '${database}' and application_name like 'cairnq%'`,
    );
    assert.equal(names, "cairnq dsn test");
    assert.ok((await backendQueries(adminDsn, database)).length > 0);
  });

  test("sslmode=no-verify encrypts without checking the certificate; ssl=true checks it", async (t) => {
    const { dsn, adminDsn, database } = await createDatabase(t);
    const encrypted = CairnQ.postgres(withParams(dsn, "sslmode=no-verify&application_name=cairnq_no_verify"));
    defer(t, () => encrypted.close());
    await encrypted.connect();
    const ssl = await psql(
      adminDsn,
      `select distinct s.ssl from pg_stat_ssl s join pg_stat_activity a using (pid) where a.datname = '${database}' and a.application_name = 'cairnq_no_verify'`,
    );
    assert.equal(ssl, "t");
    // The test server's certificate is self-signed: a checked one is refused.
    const checked = CairnQ.postgres(withParams(dsn, "ssl=true"));
    defer(t, () => checked.close());
    assert.match((await rejectionOf(checked.connect())).message, /certificate/i);
  });
});
