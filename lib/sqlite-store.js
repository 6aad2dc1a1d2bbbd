"use strict";
// SQLiteStore: the store face over one SQLite file (docs/api.md, "Stores").

const { NativeStore } = require("./native.js");
const { nativeSync } = require("./native-call.js");
const { TaskStore } = require("./store.js");
const { encodeOptions } = require("./json.js");
const { submitInSqliteTransaction } = require("./submit-in.js");

class SQLiteStore extends TaskStore {
  /**
   * `existing` (not part of the 0.7.0 API; the command line and dashboard set
   * it): open only an existing cairnq database, never creating or migrating
   * one; anything else rejects with a plain Error whose `code` is
   * `CAIRNQ_NO_DATABASE` or `CAIRNQ_NOT_CAIRNQ`. `ownOnly` (the command
   * line's `submit`): create or migrate, but refuse (`CAIRNQ_NOT_CAIRNQ`) a
   * file holding another application's tables and no cairnq installation.
   * `propagateBaggage`: a traced submit stores OpenTelemetry baggage in the
   * task's metadata too (docs/api.md, "Tracing"). `testClockMs` (not part of
   * the 0.7.0 API; cairnq/testing sets it): the store's clock is a test clock
   * standing at that time (docs/api.md, "Testing").
   * @param {string} path
   * @param {{ busyTimeoutMs?: number, existing?: boolean, ownOnly?: boolean, propagateBaggage?: boolean, testClockMs?: number }} [opts]
   */
  constructor(path, opts = {}) {
    super(nativeSync(() => NativeStore.sqlite(path, encodeOptions(opts))));
    this.path = path;
  }

  /**
   * @internal `submitIn` on SQLite: the core's statement run by `db`, the
   * application's own connection to the database file, at once.
   * @template R
   * @param {unknown} db
   * @param {boolean} many
   * @param {() => string} encode
   * @param {(refs: import("../index.js").TaskRef[]) => R} answer
   * @returns {R}
   */
  _submitIn(db, many, encode, answer) {
    return answer(submitInSqliteTransaction(db, many, encode(), this._native));
  }
}

module.exports = { SQLiteStore };
