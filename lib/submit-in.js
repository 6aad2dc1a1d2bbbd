"use strict";
// submitIn / submitManyIn (docs/api.md, "The task and your rows in one
// transaction"): the application's own connection writes the task rows
// inside its transaction. The core checks the submits and knows the
// statements; here each driver's transaction object is only made to run them.

const { submitInPostgres } = require("./native.js");
const { nativeSync, raise } = require("./native-call.js");
const { ok, refusal, rowsOf } = require("./executor.js");

/**
 * @typedef {import("../index.js").TaskRef} TaskRef
 * @typedef {(text: string, values?: unknown[]) => Promise<unknown>} RunQuery
 */

const NOT_A_PG_TX =
  "submitIn needs your transaction: a pg Client or PoolClient inside BEGIN, a postgres.js transaction " +
  "(the sql that sql.begin hands you), or a PgSession ({ query(text, values) → rows })";
const NOT_A_SQLITE_CONNECTION =
  "submitIn needs your SQLite connection inside its transaction: a better-sqlite3 Database, " +
  "a node:sqlite DatabaseSync or a bun:sqlite Database";

/**
 * One statement on the caller's Postgres transaction, resolving to row
 * objects: postgres.js through `unsafe` (its tagged template cannot take
 * statement text), pg's `query` (a Result with `rows`) and a PgSession
 * (rows already) through `query`.
 * @param {any} tx
 * @returns {RunQuery}
 */
function pgQueryOf(tx) {
  const t = /** @type {any} */ (tx);
  // What runs each statement on a connection of its own, outside any
  // transaction of the caller's: the rows would commit alone.
  if (typeof t?.begin === "function" || typeof t?.tx === "function" || typeof t?.totalCount === "number") {
    throw new TypeError(`${NOT_A_PG_TX}; got a pool or an executor, not a transaction on it`);
  }
  if (typeof tx === "function" && typeof tx.unsafe === "function") {
    return (text, values) => tx.unsafe(text, values ?? []);
  }
  if (tx !== null && typeof tx === "object" && typeof tx.query === "function") {
    return (text, values) =>
      Promise.resolve(tx.query(text, values ?? [])).then((/** @type {any} */ r) => (Array.isArray(r) ? r : r?.rows));
  }
  throw new TypeError(NOT_A_PG_TX);
}

/**
 * The core's requests (crates/core/src/store/postgres/executor.rs) answered
 * on the caller's transaction.
 * @param {RunQuery} query
 * @returns {(text: string) => Promise<string>}
 */
function answering(query) {
  return async (text) => {
    const request = JSON.parse(text);
    try {
      return ok(rowsOf(await query(request.sql, request.params ?? [])));
    } catch (err) {
      return refusal(err);
    }
  };
}

/**
 * Postgres: the submits through the caller's transaction; their task refs.
 * @param {unknown} tx
 * @param {boolean} many
 * @param {string} json the submit's options, or the items, encoded
 * @returns {Promise<TaskRef[]>}
 */
function submitInPgTransaction(tx, many, json) {
  const query = pgQueryOf(tx);
  return submitInPostgres(answering(query), many, json).then((/** @type {string} */ refs) => JSON.parse(refs), raise);
}

/** @type {WeakMap<object, Map<string, any>>} each connection's prepared statements of the core's */
const prepared = new WeakMap();

/**
 * @param {any} db
 * @param {string} sql
 */
function statementOn(db, sql) {
  let statements = prepared.get(db);
  if (!statements) prepared.set(db, (statements = new Map()));
  let statement = statements.get(sql);
  if (!statement) {
    try {
      statement = db.prepare(sql);
    } catch (err) {
      if (!/no such table: cairnq_/.test(String(/** @type {any} */ (err)?.message))) throw err;
      throw Object.assign(
        new Error("submitIn: this database has no cairnq tables; open it once with a SQLiteStore, which creates them", {
          cause: err,
        }),
        { code: "CAIRNQ_NOT_CAIRNQ" },
      );
    }
    statements.set(sql, statement);
  }
  return statement;
}

/**
 * One statement of the core's on the caller's connection (see
 * `RunOnCaller` in crates/core/src/store/sqlite/submit_in.rs), its rows as
 * objects. What the driver throws is kept in `failures` and the core told
 * `null`: when that ends the submit, the caller gets the driver's own error.
 * @param {any} db
 * @param {unknown[]} failures
 * @returns {(request: string) => string | null}
 */
function runningOn(db, failures) {
  return (text) => {
    const { sql, values, mode } = JSON.parse(text);
    try {
      if (mode === "script") {
        db.exec(sql);
        return "[]";
      }
      const statement = statementOn(db, sql);
      if (mode === "write") {
        statement.run(...values);
        return "[]";
      }
      return JSON.stringify(statement.all(...values));
    } catch (err) {
      failures.push(err);
      return null;
    }
  };
}

/**
 * SQLite: the submits the core runs on the caller's connection, inside its
 * open transaction (refused outside one: the rows would commit alone).
 * @param {any} db
 * @param {boolean} many
 * @param {string} json
 * @param {import("./native.js").NativeStore} store the store whose clock the rows take their times from
 * @returns {TaskRef[]}
 */
function submitInSqliteTransaction(db, many, json, store) {
  if (db === null || typeof db !== "object" || typeof db.prepare !== "function") {
    throw new TypeError(NOT_A_SQLITE_CONNECTION);
  }
  // better-sqlite3 and bun:sqlite say `inTransaction`, node:sqlite `isTransaction`.
  const open = db.inTransaction ?? db.isTransaction;
  if (open === false) {
    throw new Error("submitIn must run inside your open transaction on this connection (BEGIN, or db.transaction)");
  }
  /** @type {unknown[]} */
  const failures = [];
  try {
    return JSON.parse(nativeSync(() => store.submitInSqlite(runningOn(db, failures), many, json)));
  } catch (err) {
    // src/submit_in.rs: a statement the driver refused, not a decision of the core's.
    const refused =
      failures.length > 0 && /refused a statement of submitIn/.test(String(/** @type {any} */ (err)?.message));
    throw refused ? failures[0] : err;
  }
}

module.exports = { submitInPgTransaction, submitInSqliteTransaction };
