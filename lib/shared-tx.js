"use strict";
// The transaction `completeIn` shares with its caller (Postgres stores): the
// core opens it, the caller's function runs its statements in it, and the
// task's settlement commits it; a throw rolls it back.

const { bigints } = require("./executor.js");
const { dumpOptionalJson } = require("./json.js");
const { raise } = require("./native-call.js");

/**
 * Open a shared transaction on `native`, run `fn` with the caller's session
 * in it, then `settle(transaction id, result JSON)`: complete the task in it
 * and commit. A throw from `fn` (or from encoding its result) aborts the
 * transaction and rejects with it.
 * @template T, R
 * @param {import("../binding.js").NativeStore} native
 * @param {(shared: { id: number, session?: number | null }) => import("../index.js").PgSession} sessionOf
 * @param {(session: any) => Promise<T>} fn
 * @param {(id: number, resultJson: string | null) => Promise<R>} settle
 * @returns {Promise<{ task: R, value: T }>}
 */
async function inSharedTransaction(native, sessionOf, fn, settle) {
  const shared = await native.sharedTxOpen().catch(raise);
  let value;
  let resultJson;
  try {
    value = await fn(sessionOf(shared));
    resultJson = dumpOptionalJson(value);
  } catch (err) {
    await native.sharedTxAbort(shared.id).catch(() => {});
    throw err;
  }
  return { task: await settle(shared.id, resultJson), value };
}

/**
 * The caller's session in a shared transaction on the native connection:
 * `query(text, values)` resolves to row objects, `exec(sql)` runs
 * parameterless SQL.
 * @param {import("../binding.js").NativeStore} native
 * @param {{ id: number, session?: number | null }} shared
 * @returns {import("../index.js").PgSession}
 */
function nativeSession(native, shared) {
  return {
    query: (text, values = []) =>
      native.sharedTxQuery(shared.id, text, JSON.stringify(values, bigints)).then((rows) => JSON.parse(rows), raise),
    exec: (sql) => native.sharedTxQuery(shared.id, sql, undefined).then(() => undefined, raise),
  };
}

module.exports = { inSharedTransaction, nativeSession };
