// Helpers for the worker tests: workers that are always stopped and drained at
// the end of a test, a gate handlers can wait on, an event-loop blocker, error
// envelopes, and task-status waits.
// Stores of either dialect: dialects.mjs `makeStore`.
import assert from "node:assert/strict";

import { LostLease, Worker } from "../../index.mjs";
import { manageWorker, rejectionOf, waitFor } from "./helpers.mjs";

/** `call` options for a handler that runs in this process: a hang fails, bounded. */
export const CALL = { waitTimeoutMs: 20_000 };

/** An error envelope (docs/api.md, "Errors") with its keys in column order. */
export function envelope(type, code, message, retryable, details = {}) {
  return { type, code, message, retryable, details };
}

/** Assert `promise` rejects with LostLease for `taskId`; returns the error. */
export async function assertLostLease(promise, taskId) {
  const err = await rejectionOf(promise);
  assert.ok(err instanceof LostLease, `expected LostLease, got ${err?.name}: ${err?.message}`);
  assert.equal(err.taskId, taskId);
  return err;
}

/**
 * `Worker.sqlite(dbPath, opts)` (or `new Worker(store, queues, opts)` when
 * `opts.store` is given), managed by `manageWorker`.
 */
export function makeWorker(t, dbPath, opts = {}) {
  const { store, queues = ["default"], ...rest } = opts;
  const worker = store
    ? new Worker(store, queues, { pollIntervalMs: 20, ...rest })
    : Worker.sqlite(dbPath, { queues, pollIntervalMs: 20, ...rest });
  return manageWorker(t, worker);
}

/** A promise with its resolve function exposed; `open` tells whether it was resolved. */
export function makeGate() {
  let resolve;
  const promise = new Promise((r) => (resolve = r));
  const gate = {
    open: false,
    promise,
    release(value) {
      gate.open = true;
      resolve(value);
    },
  };
  return gate;
}

/** Tracks how many handler calls are in flight, and the peak. */
export function makeInFlight() {
  const tracker = {
    now: 0,
    peak: 0,
    enter() {
      tracker.now += 1;
      tracker.peak = Math.max(tracker.peak, tracker.now);
    },
    leave() {
      tracker.now -= 1;
    },
  };
  return tracker;
}

/** Keep the thread (and so the event loop) busy for `ms` milliseconds. */
export function blockEventLoop(ms) {
  const until = Date.now() + ms;
  let spins = 0;
  while (Date.now() < until) spins += 1;
  return spins;
}

/** Resolve once the task is in one of `statuses`; returns the row. */
export function waitForStatus(client, taskId, statuses, { timeoutMs = 20_000 } = {}) {
  const wanted = Array.isArray(statuses) ? statuses : [statuses];
  let last = null;
  return waitFor(
    async () => {
      last = await client.get(taskId);
      return last && wanted.includes(last.status) ? last : null;
    },
    { timeoutMs },
  ).catch((err) => {
    err.message = `task ${taskId} did not reach ${wanted.join("/")} within ${timeoutMs}ms; last row: ${JSON.stringify(last)}`;
    throw err;
  });
}

/** Resolve once every id is terminal; returns the rows in the same order. */
export async function waitAllTerminal(client, ids, opts = {}) {
  const rows = [];
  for (const id of ids) rows.push(await waitForStatus(client, id, ["succeeded", "failed", "canceled"], opts));
  return rows;
}

/** UTF-8 bytes of JSON.stringify(value). */
export function jsonBytes(value) {
  return Buffer.byteLength(JSON.stringify(value), "utf8");
}

/**
 * Negative assertion over a window: poll `predicate` for `windowMs` and
 * return true if it never became truthy.
 */
export async function staysFalse(predicate, windowMs) {
  const deadline = Date.now() + windowMs;
  while (Date.now() < deadline) {
    if (await predicate()) return false;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return !(await predicate());
}

/** Rows of `client` by id, fetched now. */
export async function rowsOf(client, ids) {
  const rows = [];
  for (const id of ids) rows.push(await client.get(id));
  return rows;
}
