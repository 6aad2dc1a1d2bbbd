"use strict";
// Durable steps (docs/api.md, "Durable steps"): what JS must own of them.
// Running `fn` and the JSON rules of its result, the types of the arguments,
// the encoding of a child's submit, stopping a handler whose task the core
// sent back to the queue (its step returns a promise that never settles),
// and telling when a handler left with waits for signals has nothing else
// under way (the event loop is JS's). Replay, suspension and every check on
// values are the core's.

const { LostLease, SerializationError, TaskCanceled, TaskFailed, fromNative } = require("./errors.js");
const { raise } = require("./native-call.js");
const { dumpOptionalJson, encodeOptions, parseRow } = require("./json.js");
const { taskName } = require("./models.js");
const { childMetadata } = require("./telemetry/trace.js");

/**
 * @typedef {import("./context.js").TaskContext} TaskContext
 * @typedef {import("../index.js").TaskDef} TaskDef
 * @typedef {import("../index.js").CallChildOptions} CallChildOptions
 * @typedef {import("../index.js").TaskSteps} TaskSteps
 * @typedef {import("./native-call.js").NativeHolder} NativeHolder
 */

/**
 * The failures `callChild` threw (a TaskFailed or TaskCanceled of its child),
 * each with its step id: a handler that throws one on ends its task failed
 * for good (the core's `steps::child_failure`).
 * @type {WeakMap<object, string>}
 */
const childFailures = new WeakMap();

/**
 * The step id of the child failure `thrown` is, if it is one.
 * @param {unknown} thrown
 * @returns {string | undefined}
 */
function childStepOf(thrown) {
  return thrown !== null && typeof thrown === "object" ? childFailures.get(thrown) : undefined;
}

/**
 * The run is over (the task is queued again, or ended canceled): the worker
 * ends the call, and the handler waits on this forever. A fresh promise each
 * time, so nothing keeps the handler's frame alive.
 * @param {TaskContext} ctx
 * @returns {Promise<never>}
 */
function stopped(ctx) {
  ctx._suspended();
  return new Promise(() => {});
}

/**
 * What a run's handler has under way (docs/api.md, "Parallel steps"): the
 * step calls not yet answered (`busy`), the rejections of its waits left
 * waiting, and the last wait's answer (waits answer in the order started).
 * @typedef {{ busy: number, waiting: Array<(err: unknown) => void>, ending: boolean, lastWait: Promise<void> }} RunState
 * @type {WeakMap<TaskContext, RunState>}
 */
const runs = new WeakMap();

/**
 * @param {TaskContext} ctx
 * @returns {RunState}
 */
function runOf(ctx) {
  let run = runs.get(ctx);
  if (run === undefined) {
    run = { busy: 0, waiting: [], ending: false, lastWait: Promise.resolve() };
    runs.set(ctx, run);
  }
  return run;
}

/**
 * A step call counted as under way until it answers (with `fn`'s run for
 * `ctx.step`), so a run left with waits is not ended while it goes on.
 * @template T
 * @param {TaskContext} ctx
 * @param {() => Promise<T>} call
 * @returns {Promise<T>}
 */
async function underway(ctx, call) {
  const run = runOf(ctx);
  run.busy += 1;
  try {
    return await call();
  } finally {
    run.busy -= 1;
    endForWaits(ctx, run);
  }
}

/**
 * The handler has nothing under way but waits left waiting: once the turn
 * is over (every promise reaction run, so waits started together are all
 * stored), and if still nothing else started, the core suspends the task
 * for all of them. A failed suspension rejects the waits, so the handler
 * fails rather than hangs.
 * @param {TaskContext} ctx
 * @param {RunState} run
 */
function endForWaits(ctx, run) {
  if (run.ending || run.busy > 0 || run.waiting.length === 0) return;
  run.ending = true;
  setImmediate(() => {
    run.ending = false;
    // A handler that returned (a race won by a wait that answered) has
    // nothing to suspend: its waits left waiting just go unanswered.
    if (run.busy > 0 || run.waiting.length === 0 || !ctx._running()) return;
    const rejects = run.waiting.splice(0);
    native(ctx, () => ctx._native.suspendForWaits()).then(
      (suspended) => {
        if (suspended) ctx._suspended();
      },
      (err) => {
        for (const reject of rejects) reject(err);
      },
    );
  });
}

/**
 * A native step call, its error mapped; a lost lease also aborts `signal`.
 * @template T
 * @param {TaskContext} ctx
 * @param {() => Promise<T>} call
 * @returns {Promise<T>}
 */
async function native(ctx, call) {
  try {
    return await call();
  } catch (err) {
    const mapped = fromNative(err);
    if (mapped instanceof LostLease) ctx._syncAbort();
    throw mapped;
  }
}

/**
 * A step id's type; the core checks the rest with the same words.
 * @param {unknown} id
 */
function checkId(id) {
  if (typeof id !== "string") throw new Error(`step id must be a non-empty string, got ${String(id)}`);
}

/**
 * @param {string | null | undefined} json
 * @returns {unknown}
 */
function parsed(json) {
  return json == null ? null : JSON.parse(json);
}

/**
 * `ctx.step(id, fn)`: the stored result, or `fn`'s, stored before it is
 * returned. Either way the value is what its JSON reads back as.
 * @param {TaskContext} ctx
 * @param {unknown} id
 * @param {unknown} fn
 * @returns {Promise<unknown>}
 */
async function step(ctx, id, fn) {
  checkId(id);
  if (typeof fn !== "function") throw new Error(`fn must be a function, got ${String(fn)}`);
  return underway(ctx, () => runStep(ctx, /** @type {string} */ (id), fn));
}

/**
 * @param {TaskContext} ctx
 * @param {string} id
 * @param {Function} fn
 * @returns {Promise<unknown>}
 */
async function runStep(ctx, id, fn) {
  const half = ctx._native;
  const begun = await native(ctx, () => half.beginStep(id));
  if (begun.suspended) return stopped(ctx);
  if (begun.replay) return parsed(begun.json);
  const value = await fn();
  let json;
  try {
    json = dumpOptionalJson(value);
  } catch (err) {
    throw new SerializationError(`step "${id}" result is not JSON-serializable: ${/** @type {Error} */ (err).message}`);
  }
  const suspended = await native(ctx, () => half.commitStep(id, json));
  return suspended ? stopped(ctx) : parsed(json);
}

/**
 * `ctx.sleep(id, ms)`: resolves when the sleep is over; until then the task
 * waits in the queue, and this run never goes on.
 * @param {TaskContext} ctx
 * @param {unknown} id
 * @param {unknown} ms
 * @returns {Promise<void>}
 */
async function sleep(ctx, id, ms) {
  checkId(id);
  if (typeof ms !== "number") throw new Error(`ms must be a number of milliseconds, got ${String(ms)}`);
  const half = ctx._native;
  if (await underway(ctx, () => native(ctx, () => half.sleep(/** @type {string} */ (id), ms)))) return stopped(ctx);
}

/**
 * `ctx.retryAfter(ms, { limit })` (docs/api.md, "Push-back"): the task back
 * in its queue, to start no sooner than `ms` from now, its attempt given back
 * (with `limit`, nothing drawing from its name's rate-limit budget starts
 * sooner either); the run ends as a suspended one (a promise that never
 * settles).
 * @param {TaskContext} ctx
 * @param {unknown} ms
 * @param {{ limit?: boolean } | undefined} opts
 * @returns {Promise<never>}
 */
async function retryAfter(ctx, ms, opts) {
  if (typeof ms !== "number") throw new Error(`ms must be a number of milliseconds, got ${String(ms)}`);
  const options = encodeOptions(opts ?? {});
  const half = ctx._native;
  await native(ctx, () => half.retryAfter(ms, options));
  return stopped(ctx);
}

/**
 * `ctx.sleepUntil(id, date)`: `sleep` until a `Date` (or epoch milliseconds).
 * @param {TaskContext} ctx
 * @param {unknown} id
 * @param {unknown} date
 * @returns {Promise<void>}
 */
async function sleepUntil(ctx, id, date) {
  checkId(id);
  const at = date instanceof Date ? date.getTime() : date;
  if (typeof at !== "number") throw new Error(`date must be a valid Date or epoch milliseconds, got ${String(date)}`);
  const half = ctx._native;
  if (await underway(ctx, () => native(ctx, () => half.sleepUntil(/** @type {string} */ (id), at))))
    return stopped(ctx);
}

/**
 * `ctx.callChild(id, task, payload, opts)`: the child's result once it has
 * succeeded, or TaskFailed / TaskCanceled as `call()` throws them. The child
 * is submitted once; until it finishes the task waits in the queue.
 * @param {TaskContext} ctx
 * @param {unknown} id
 * @param {string | TaskDef} task
 * @param {unknown} payload
 * @param {CallChildOptions} opts
 * @returns {Promise<unknown>}
 */
async function callChild(ctx, id, task, payload, opts) {
  checkId(id);
  const given = opts ?? {};
  const metadata = childMetadata(given.metadata, ctx._store._propagateBaggage);
  const options = encodeOptions(ctx._store._submitArgs({ ...given, metadata, name: taskName(task), payload }));
  const half = ctx._native;
  const answer = await underway(ctx, () => native(ctx, () => half.callChild(/** @type {string} */ (id), options)));
  if (answer.suspended) return stopped(ctx);
  if (answer.status === "succeeded") return parsed(answer.json);
  const failure =
    answer.status === "failed"
      ? new TaskFailed(parsed(answer.json))
      : new TaskCanceled(/** @type {string} */ (answer.childId));
  childFailures.set(failure, /** @type {string} */ (id));
  throw failure;
}

/**
 * `ctx.waitForSignal(id, name, {timeoutMs})`: the payload of the signal the
 * wait consumed, or `null` once `timeoutMs` passed without one. Until then
 * the task waits in the queue, and this run's promise of it never settles.
 * Waits answer in the order they were started, so a `Promise.race` replays
 * the same winner.
 * @param {TaskContext} ctx
 * @param {unknown} id
 * @param {unknown} name
 * @param {{ timeoutMs?: number } | undefined} opts
 * @returns {Promise<unknown>}
 */
async function waitForSignal(ctx, id, name, opts) {
  checkId(id);
  if (typeof name !== "string") throw new Error(`signal name must be a non-empty string, got ${String(name)}`);
  const options = encodeOptions(opts ?? {});
  const half = ctx._native;
  const run = runOf(ctx);
  const earlier = run.lastWait;
  const answering = underway(ctx, () =>
    native(ctx, () => half.waitForSignal(/** @type {string} */ (id), name, options)),
  );
  run.lastWait = answering.then(
    () => earlier,
    () => earlier,
  );
  const answer = await answering;
  await earlier;
  if (answer.suspended) return stopped(ctx);
  if (!answer.waiting) return parsed(answer.json);
  const left = new Promise((_, reject) => run.waiting.push(reject));
  endForWaits(ctx, run);
  return left;
}

/**
 * `client.signal(taskId, name, payload)` (`byKey` false) and `signalByKey`:
 * true when stored for a task that has not finished, false for a finished
 * one, null for no task. The payload follows the JSON rules of a submit's.
 * @param {NativeHolder} store
 * @param {unknown} target
 * @param {boolean} byKey
 * @param {unknown} name
 * @param {unknown} payload
 * @returns {Promise<boolean | null>}
 */
async function sendSignal(store, target, byKey, name, payload) {
  if (typeof name !== "string") throw new Error(`signal name must be a non-empty string, got ${String(name)}`);
  let json;
  try {
    json = dumpOptionalJson(payload);
  } catch (err) {
    throw new SerializationError(`payload is not JSON-serializable: ${/** @type {Error} */ (err).message}`);
  }
  // An id or key that is not a string names no task (as for `cancel`).
  if (typeof target !== "string") return null;
  return store._native.signal(target, byKey, name, json).catch(raise);
}

/**
 * `client.steps(taskId)`: the task's stored steps and what it is sleeping or
 * waiting for (the core's `steps::view`).
 * @param {NativeHolder} store
 * @param {unknown} taskId
 * @returns {Promise<TaskSteps>}
 */
async function taskSteps(store, taskId) {
  // An id that is not a string names no task (as for `get`).
  if (typeof taskId !== "string") return { steps: [], suspended: null, signals: [] };
  return JSON.parse(await store._native.steps(taskId).catch(raise));
}

/**
 * `retry(id, { fromStep })` and `retryByKey` (`byKey`) with it (docs/api.md,
 * "Restart from a step"): the task requeued with its stored steps from
 * `fromStep` on dropped, or null for no task; the core refuses the rest.
 * @param {NativeHolder} store
 * @param {string} target
 * @param {boolean} byKey
 * @param {{ fromStep?: unknown, resetAttempt?: boolean }} opts
 * @returns {Promise<import("../index.js").Task | null>}
 */
async function restartFromStep(store, target, byKey, opts) {
  const { fromStep } = opts;
  if (typeof fromStep !== "string") throw new Error(`fromStep must be a non-empty string, got ${String(fromStep)}`);
  // An id or key that is not a string names no task (as for `retry`).
  if (typeof target !== "string") return null;
  const row = await store._native.restartFromStep(target, byKey, fromStep, opts.resetAttempt === true).catch(raise);
  return parseRow(row);
}

module.exports = {
  step,
  sleep,
  sleepUntil,
  retryAfter,
  callChild,
  waitForSignal,
  sendSignal,
  childStepOf,
  taskSteps,
  restartFromStep,
};
