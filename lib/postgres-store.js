"use strict";
// PostgresStore: the store face over Postgres, through a native pool (a DSN)
// or the application's PgExecutor (docs/api.md, "Stores").

const { NativeStore } = require("./native.js");
const { nativeSync, raise } = require("./native-call.js");
const { ExecutorBridge, isExecutor } = require("./executor.js");
const { TaskStore } = require("./store.js");
const { encodeOptions } = require("./json.js");
const { submitInPgTransaction } = require("./submit-in.js");

class PostgresStore extends TaskStore {
  /**
   * `source`: a DSN (the store opens and owns a native pool) or the
   * application's `PgExecutor` (every statement, transaction and LISTEN runs
   * through it; the store never closes it, and `max` does not apply).
   * `schema`: the installation's schema. A DSN store creates it if absent
   * and resolves every connection to it alone; an executor must set its own
   * search_path to it. Either way connect refuses with SchemaMismatch when
   * the connection resolves elsewhere, or (without `schema`) when it would
   * start a second installation beside an existing one.
   * `existing`, `propagateBaggage`: as for SQLiteStore.
   * @param {string | import("../index.js").PgExecutor} source
   * @param {{ max?: number, schema?: string, existing?: boolean, ownOnly?: boolean, propagateBaggage?: boolean }} [opts]
   */
  constructor(source, opts = {}) {
    const options = encodeOptions(opts);
    if (typeof source === "string") {
      super(nativeSync(() => NativeStore.postgres(source, options)));
      /** @type {ExecutorBridge | null} */
      this._bridge = null;
    } else if (isExecutor(source)) {
      const bridge = new ExecutorBridge(/** @type {import("../index.js").PgExecutor} */ (source));
      super(nativeSync(() => NativeStore.executor((/** @type {string} */ text) => bridge.handle(text), options)));
      bridge.native = this._native;
      this._bridge = bridge;
      // Its notifications reach watch callbacks inside its `onNotify` (as in 0.12).
      this._notifications = bridge;
    } else {
      throw new TypeError(
        "PostgresStore needs a connection string or a PgExecutor (an object with query, exec and tx functions)",
      );
    }
    // Every Postgres write crosses the network: none can run inline.
    this._writes.inline = false;
  }

  /**
   * @internal The caller's session in a shared transaction: the executor's
   * own one, or the native transaction's `query`/`exec`.
   * @param {{ id: number, session?: number | null }} shared
   * @returns {import("../index.js").PgSession}
   */
  _sessionOf(shared) {
    if (this._bridge && shared.session != null) return this._bridge.session(shared.session);
    return super._sessionOf(shared);
  }

  /**
   * @internal `submitIn` on Postgres: once the store has migrated the
   * database, the submits through `tx` (lib/submit-in.js).
   * @template R
   * @param {unknown} tx
   * @param {boolean} many
   * @param {() => string} encode
   * @param {(refs: import("../index.js").TaskRef[]) => R} answer
   * @returns {Promise<R>}
   */
  async _submitIn(tx, many, encode, answer) {
    const json = encode();
    await this.connect();
    return answer(await submitInPgTransaction(tx, many, json));
  }

  /**
   * @param {string[]} queues
   * @param {number} timeoutMs
   * @returns {Promise<void>}
   */
  claimWake(queues, timeoutMs) {
    return this._native.claimWake(queues, timeoutMs).catch(raise);
  }

  /**
   * @param {string} taskId
   * @param {number} timeoutMs
   * @returns {Promise<void>}
   */
  taskDoneWake(taskId, timeoutMs) {
    return this._native.taskDoneWake(taskId, timeoutMs).catch(raise);
  }
}

module.exports = { PostgresStore };
