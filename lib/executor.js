"use strict";
// The application's PgExecutor as the native executor store reaches it: each
// request arrives as one JSON text (crates/core/src/store/postgres/executor.rs
// lists them) and is answered with one. Statements, transactions and LISTEN
// run on the executor's own objects; nothing here decides anything.

const { ListenUnavailable } = require("./errors.js");
const { quoteSchema } = require("./native.js");
const { nativeSync } = require("./native-call.js");

const CHANNELS = ["cairnq_queued", "cairnq_done", "cairnq_events"];

/**
 * JSON cannot carry a bigint: it crosses as its decimal text, which the row
 * boundary reads as a number (docs/api.md, "Row normalization").
 * @param {string} _key
 * @param {unknown} value
 */
function bigints(_key, value) {
  return typeof value === "bigint" ? value.toString() : value;
}

/** @param {unknown} value */
function ok(value) {
  return JSON.stringify({ ok: value ?? null }, bigints);
}

/**
 * A refusal: the server's SQLSTATE when the driver gives one.
 * @param {any} err
 * @param {boolean} [unavailable]
 */
function refusal(err, unavailable = false) {
  const code = typeof err?.code === "string" && /^[0-9A-Z]{5}$/.test(err.code) ? err.code : null;
  const message = err instanceof Error ? err.message : String(err);
  return JSON.stringify({ error: { code, message, unavailable } });
}

/** @param {unknown} executor */
function isExecutor(executor) {
  const e = /** @type {any} */ (executor);
  return e != null && typeof e === "object" && typeof e.query === "function" && typeof e.tx === "function";
}

/** The sentinel a rollback rejects `tx`'s callback with. */
const ROLLBACK = Symbol("cairnq.rollback");

class ExecutorBridge {
  /** @param {import("../index.js").PgExecutor} executor */
  constructor(executor) {
    this.executor = executor;
    /** @type {Map<number, { session: import("../index.js").PgSession, release: { resolve: () => void, reject: (e: unknown) => void }, ended: Promise<unknown> }>} */
    this.txs = new Map();
    this.nextTx = 1;
    /** @type {import("../binding.js").NativeStore | null} set once the native store exists */
    this.native = null;
    /** @type {(() => unknown) | null} */
    this.stopListen = null;
    /** @type {Set<(channel: string, payload: string) => void>} the store's watches */
    this.hearers = new Set();
  }

  /**
   * Hand every notification of the executor's `listen` to `onNotify`.
   * @param {(channel: string, payload: string) => void} onNotify
   * @returns {() => void} the stop function
   */
  hear(onNotify) {
    this.hearers.add(onNotify);
    return () => this.hearers.delete(onNotify);
  }

  /**
   * @param {string} channel
   * @param {string} payload
   */
  notified(channel, payload) {
    /** @type {import("../binding.js").NativeStore} */ (this.native).notify(channel, payload);
    for (const onNotify of this.hearers) onNotify(channel, payload);
  }

  /**
   * @param {string} text
   * @returns {Promise<string>}
   */
  async handle(text) {
    const request = JSON.parse(text);
    try {
      switch (request.op) {
        case "query":
          return ok(rowsOf(await this.session(request.tx).query(request.sql, request.params)));
        case "exec":
          await this.session(request.tx).exec(request.sql);
          return ok(null);
        case "begin":
          return ok(await this.begin());
        case "end":
          await this.end(request.tx, request.commit);
          return ok(null);
        case "listen":
          return await this.listen();
        case "unlisten":
          await this.unlisten();
          return ok(null);
        default:
          return refusal(new Error(`unknown executor request ${request.op}`));
      }
    } catch (err) {
      return refusal(err);
    }
  }

  /**
   * @param {number | null} tx
   * @returns {import("../index.js").PgSession}
   */
  session(tx) {
    if (tx == null) return this.executor;
    const entry = this.txs.get(tx);
    if (!entry) throw new Error(`transaction ${tx} has ended`);
    return entry.session;
  }

  /**
   * Enter `executor.tx` and hold its callback open until `end`.
   * @returns {Promise<number>}
   */
  begin() {
    return new Promise((opened, failed) => {
      const id = this.nextTx++;
      /** @type {any} */
      const entry = {};
      const held = new Promise((resolve, reject) => {
        entry.release = { resolve, reject };
      });
      entry.ended = Promise.resolve().then(() =>
        this.executor.tx((session) => {
          entry.session = session;
          this.txs.set(id, entry);
          opened(id);
          return held;
        }),
      );
      // A BEGIN that failed never reached the callback.
      entry.ended.catch((/** @type {unknown} */ err) => {
        if (entry.session === undefined) failed(err);
      });
    });
  }

  /**
   * @param {number} id
   * @param {boolean} commit
   */
  async end(id, commit) {
    const entry = this.txs.get(id);
    if (!entry) throw new Error(`transaction ${id} has ended`);
    this.txs.delete(id);
    if (commit) {
      entry.release.resolve();
      await entry.ended;
    } else {
      entry.release.reject(ROLLBACK);
      await entry.ended.catch((err) => {
        if (err !== ROLLBACK) throw err;
      });
    }
  }

  /** The executor's LISTEN, its notifications handed to the native store. */
  async listen() {
    const listen = this.executor.listen;
    if (typeof listen !== "function") return ok(false);
    const native = /** @type {import("../binding.js").NativeStore} */ (this.native);
    try {
      const stop = await listen.call(
        this.executor,
        CHANNELS,
        (channel, payload) => this.notified(channel, payload ?? ""),
        () => native.listenClosed(),
      );
      this.stopListen = typeof stop === "function" ? stop : null;
      return ok(true);
    } catch (err) {
      return refusal(err, err instanceof ListenUnavailable);
    }
  }

  async unlisten() {
    const stop = this.stopListen;
    this.stopListen = null;
    if (stop) await stop();
  }
}

/**
 * Row objects as the column names once and each row's values in that order
 * (the core reads task rows by name, other statements' named columns by
 * position).
 * @param {unknown} rows
 */
function rowsOf(rows) {
  if (!Array.isArray(rows)) throw new TypeError("PgExecutor.query must resolve to an array of row objects");
  const columns = rows.length === 0 ? [] : Object.keys(rows[0]);
  return { columns, rows: rows.map((row) => columns.map((column) => row[column])) };
}

/**
 * `schema` double-quoted; a name quoting could not keep a name is refused
 * (the native check a DSN store applies).
 * @param {unknown} schema
 * @returns {string}
 */
function quotedSchema(schema) {
  if (typeof schema !== "string") throw new TypeError(`schema must be a string, got ${typeof schema}`);
  return nativeSync(() => quoteSchema(schema));
}

/**
 * A PgExecutor over a node-postgres pool (the application's `pg`, loaded
 * only here). With `schema`, the schema is created if absent and every
 * pooled connection's search_path is that schema only. No global type
 * parser is installed. LISTEN uses a client of its own.
 * @param {string} dsn
 * @param {{ max?: number, schema?: string }} [opts]
 * @returns {Promise<import("../index.js").PgExecutor>}
 */
async function createPoolExecutor(dsn, opts = {}) {
  const quoted = opts.schema === undefined ? null : quotedSchema(opts.schema);
  /** @type {any} */
  let pg;
  // A computed name: `pg` is the application's optional driver, never ours.
  const driver = "pg";
  try {
    pg = require(driver);
  } catch {
    throw new Error("PostgresStore requires the 'pg' package — install it (e.g. `npm i pg`)");
  }
  const pool = new pg.Pool({ connectionString: dsn, max: opts.max });
  // An idle connection the server ends (a restart, an administrator) is
  // dropped from the pool and replaced on demand: not a process-killing
  // 'error' event.
  pool.on("error", () => {});
  if (quoted !== null) {
    // Before the first connection, so every one (that one too) gets it; a
    // connection that cannot take it is ended, failing its first statement.
    pool.on("connect", (/** @type {any} */ client) => {
      client.query(`set search_path to ${quoted}`).catch(() => client.end());
    });
    try {
      await pool.query(`create schema if not exists ${quoted}`);
    } catch (err) {
      await pool.end();
      throw err;
    }
  }
  /** @param {any} client @returns {import("../index.js").PgSession} */
  const session = (client) => ({
    query: (text, values) => client.query(text, values).then((/** @type {any} */ r) => r.rows),
    exec: (sql) => client.query(sql).then(() => undefined),
  });
  return {
    ...session(pool),
    async tx(fn) {
      const client = await pool.connect();
      /** @type {unknown} */
      let broken;
      // A connection lost between statements must fail this transaction,
      // not surface as an unhandled 'error' event.
      const lost = (/** @type {unknown} */ err) => {
        broken = err;
      };
      client.on("error", lost);
      try {
        await client.query("begin");
        const value = await fn(session(client));
        await client.query("commit");
        return value;
      } catch (err) {
        await client.query("rollback").catch((/** @type {unknown} */ e) => {
          broken = e;
        });
        throw err;
      } finally {
        client.off("error", lost);
        client.release(broken);
      }
    },
    async listen(channels, onNotify, onClose) {
      const client = new pg.Client({ connectionString: dsn });
      let closed = false;
      const close = () => {
        if (!closed) {
          closed = true;
          onClose();
        }
      };
      client.on("notification", (/** @type {any} */ n) => onNotify(n.channel, n.payload ?? ""));
      client.on("error", close);
      client.on("end", close);
      try {
        await client.connect();
        for (const channel of channels) await client.query(`listen ${channel}`);
      } catch (err) {
        closed = true;
        await client.end().catch(() => {});
        // The server's refusal (a pooler in transaction mode) is for good.
        if (err instanceof pg.DatabaseError) throw new ListenUnavailable(/** @type {Error} */ (err).message);
        throw err;
      }
      return async () => {
        closed = true;
        await client.end().catch(() => {});
      };
    },
    close: () => pool.end(),
  };
}
module.exports = { ExecutorBridge, isExecutor, bigints, createPoolExecutor, ok, refusal, rowsOf };
