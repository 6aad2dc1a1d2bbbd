// Each Postgres driver a Node application holds, as the submitIn tests and
// their crash fixture (fixtures/submit-in-app.mjs) use it: `PG_DRIVERS[name](dsn,
// { max, applicationName })` → `{ transaction(body), close() }`, where
// `body({ tx, insertOrder })` runs inside one transaction of that driver,
// which commits unless `body` throws (then it rolls back and the error is
// rethrown). `tx` is what the application hands `submitIn`; `max` sizes the
// driver's pool (1: a pg Client).
import pg from "pg";
import postgres from "postgres";
import { CompiledQuery, Kysely, PostgresDialect, sql } from "kysely";

import { createPoolExecutor } from "../../index.mjs";

export const PG_DRIVERS = {
  "pg Client": async (dsn, { applicationName } = {}) => {
    const client = new pg.Client({ connectionString: dsn, application_name: applicationName });
    await client.connect();
    return { transaction: (body) => pgTransaction(client, body), close: () => client.end() };
  },
  "pg PoolClient": async (dsn, { max = 2, applicationName } = {}) => {
    const pool = new pg.Pool({ connectionString: dsn, max, application_name: applicationName });
    return {
      async transaction(body) {
        const client = await pool.connect();
        try {
          return await pgTransaction(client, body);
        } finally {
          client.release();
        }
      },
      close: () => pool.end(),
    };
  },
  "postgres.js": async (dsn, { max = 2, applicationName } = {}) => {
    const conn = postgres(dsn, {
      max,
      onnotice: () => {},
      connection: applicationName ? { application_name: applicationName } : {},
    });
    return {
      transaction: (body) =>
        conn.begin((tx) => body({ tx, insertOrder: (total) => tx`insert into orders (total) values (${total})` })),
      close: () => conn.end(),
    };
  },
  "PgSession (PgExecutor tx)": async (dsn, { max = 2, applicationName } = {}) => {
    const executor = await createPoolExecutor(withApplicationName(dsn, applicationName), { max });
    return {
      transaction: (body) =>
        executor.tx((session) =>
          body({
            tx: session,
            insertOrder: (total) => session.query("insert into orders (total) values ($1)", [total]),
          }),
        ),
      close: () => executor.close(),
    };
  },
  "Kysely over pg": async (dsn, { max = 2, applicationName } = {}) => {
    const pool = new pg.Pool({ connectionString: dsn, max, application_name: applicationName });
    const db = new Kysely({ dialect: new PostgresDialect({ pool }) });
    return {
      transaction: (body) =>
        db.transaction().execute((trx) =>
          body({
            // The PgSession shape over Kysely's transaction (docs/api.md).
            tx: { query: (text, values) => trx.executeQuery(CompiledQuery.raw(text, values)).then((r) => r.rows) },
            insertOrder: (total) => sql`insert into orders (total) values (${total})`.execute(trx),
          }),
        ),
      close: () => db.destroy(),
    };
  },
};

async function pgTransaction(client, body) {
  await client.query("begin");
  try {
    const value = await body({
      tx: client,
      insertOrder: (total) => client.query("insert into orders (total) values ($1)", [total]),
    });
    await client.query("commit");
    return value;
  } catch (err) {
    await client.query("rollback");
    throw err;
  }
}

function withApplicationName(dsn, name) {
  if (!name) return dsn;
  const url = new URL(dsn);
  url.searchParams.set("application_name", name);
  return url.toString();
}
