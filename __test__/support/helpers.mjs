// Shared test helpers: fresh temp dirs and databases, condition waits,
// plain-Error assertions, the pieces of a "worker" the tests drive by hand
// through the public store methods, and child processes (fixtures/) whose
// JSON output lines can be awaited. Both dialects behind one interface:
// dialects.mjs.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { CairnQ, CairnQError } from "../../index.mjs";

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");

/**
 * The protocol's migration ledger names of both dialects, in order
 * (`{sqlite, postgres}`): the one fixture the Rust tests pin the core against too.
 */
export function migrationLedger() {
  return JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "crates/core/tests/fixtures/migration-ledger.json"), "utf8"));
}
export const PYTHON = process.env.CAIRNQ_PYTHON ?? "python3";

/**
 * The columns of `cairnq_tasks` in table order (docs/protocol.md, "Schema"):
 * the one fixture the core's `task::COLUMNS` is pinned against too.
 */
export const TASK_COLUMNS = JSON.parse(
  fs.readFileSync(path.join(REPO_ROOT, "crates/core/tests/fixtures/task-columns.json"), "utf8"),
).columns;

/** A task id: "task_" + a 26-character ULID. */
export const TASK_ID = /^task_[0-7][0-9ABCDEFGHJKMNPQRSTVWXYZ]{25}$/;

/** A complete error envelope (docs/api.md, "Errors"), as a worker would record it. */
export const ENVELOPE = {
  type: "ValidationError",
  code: "bad_input",
  message: "field x is required",
  retryable: false,
  details: { field: "x", hints: ["add x"] },
};

/** Assert `err` is a plain Error (not a CairnQError) with exactly `message`. */
export function assertPlainError(err, message) {
  assert.ok(err instanceof Error, `expected an Error, got ${err}`);
  assert.equal(err instanceof CairnQError, false, `${err.name} should be a plain Error`);
  assert.equal(err.message, message);
}

/** Assert `fn` throws a plain Error (not a CairnQError) with exactly `message`. */
export function assertThrowsPlainError(fn, message) {
  assert.throws(fn, (err) => {
    assert.equal(err.constructor, Error, `expected a plain Error, got ${err?.name}`);
    assert.ok(!(err instanceof CairnQError));
    assert.equal(err.message, message);
    return true;
  });
}

/** Sort the way `list` promises: created_at_ms descending, then id descending. */
export function newestFirst(tasks) {
  return [...tasks].sort((a, b) =>
    a.created_at_ms !== b.created_at_ms ? b.created_at_ms - a.created_at_ms : a.id < b.id ? 1 : -1,
  );
}

const deferred = new WeakMap();

/**
 * Run `fn` when test `t` ends. Unlike `t.after` (first registered runs first),
 * these run last-registered-first, so a client opened on a temp dir is closed
 * before that dir is removed.
 */
export function defer(t, fn) {
  let stack = deferred.get(t);
  if (!stack) {
    stack = [];
    deferred.set(t, stack);
    t.after(async () => {
      const errors = [];
      while (stack.length > 0) {
        try {
          await stack.pop()();
        } catch (err) {
          errors.push(err);
        }
      }
      if (errors.length > 0) throw errors[0];
    });
  }
  stack.push(fn);
}

/**
 * A fresh directory under the OS temp dir, removed when the test ends (after
 * everything registered on it later has been closed): the one way the tests
 * make a temp dir.
 */
export function makeTempDir(t, prefix = "cairnq-") {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  defer(t, () => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A database path inside a fresh temp dir (the file does not exist yet). */
export function makeDbPath(t, fileName = "queue.db") {
  return path.join(makeTempDir(t), fileName);
}

/**
 * A `CairnQ.sqlite` client on a fresh database (or on `dbPath`), closed when the
 * test ends, before its temp dir is removed.
 */
export function openClient(t, opts = {}, dbPath = undefined) {
  const file = dbPath ?? makeDbPath(t);
  const client = CairnQ.sqlite(file, opts);
  defer(t, () => client.close());
  return { client, dbPath: file };
}

/**
 * Resolve once `predicate()` (sync or async) returns a truthy value; reject with
 * `message` if that has not happened within `timeoutMs`.
 */
export async function waitFor(predicate, { timeoutMs = 10_000, intervalMs = 10, message } = {}) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await predicate();
    if (value) return value;
    if (Date.now() >= deadline) {
      throw new Error(message ?? `condition not met within ${timeoutMs}ms: ${predicate.toString()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/**
 * Observe `promise` for `windowMs` and report whether it settled in that window.
 * Only for negative assertions ("still blocked"), which need some window.
 */
export async function settlesWithin(promise, windowMs) {
  let timer;
  const outcome = await Promise.race([
    promise.then(
      () => "settled",
      () => "settled",
    ),
    new Promise((resolve) => {
      timer = setTimeout(() => resolve("pending"), windowMs);
    }),
  ]);
  clearTimeout(timer);
  return outcome === "settled";
}

/** Promise that rejects, captured so the test can assert on the error itself. */
export async function rejectionOf(promise) {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error("expected the promise to reject, it resolved");
}

/** Claim exactly the task `taskId` (which must be the only claimable one on its queue). */
export async function claimTask(store, task, { workerId = "w1", leaseMs = 30_000 } = {}) {
  const claimed = await store.claim({
    queues: [task.queue],
    workerId,
    leaseMs,
    names: [task.name],
    limit: 1,
  });
  if (claimed.length !== 1 || claimed[0].id !== task.id) {
    throw new Error(`expected to claim ${task.id}, got ${JSON.stringify(claimed.map((t) => t.id))}`);
  }
  return claimed[0];
}

/** Submit a task and finish it as `succeeded` through the worker-side store methods. */
export async function submitAndSucceed(client, name, result = { ok: true }, opts = {}) {
  const task = await client.submit(name, {}, opts);
  await claimTask(client.store, task);
  return client.store.complete({ taskId: task.id, workerId: "w1", result });
}

/** Submit a task and fail it permanently through the worker-side store methods. */
export async function submitAndFail(client, name, opts = {}) {
  const task = await client.submit(name, {}, opts);
  await claimTask(client.store, task);
  return client.store.fail({
    taskId: task.id,
    workerId: "w1",
    error: { type: "TaskError", code: "boom", message: "boom", retryable: false, details: {} },
    retryable: false,
  });
}

/** Total rows per status over all queues, e.g. {succeeded: 5, queued: 0, …}. */
export async function statusTotals(client) {
  const totals = { queued: 0, running: 0, succeeded: 0, failed: 0, canceled: 0 };
  for (const counts of Object.values(await client.stats())) {
    for (const [status, n] of Object.entries(counts)) totals[status] += n;
  }
  return totals;
}

/** Wait until `Date.now()` is strictly past `ms` (for strict `<` cutoffs). */
export function waitUntilPast(ms) {
  return waitFor(() => Date.now() > ms, { timeoutMs: 5_000, intervalMs: 1 });
}

/** One JSON object per line of `file` ([] if the file does not exist). */
export function readJsonLines(file) {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

export function sha256OfFile(file) {
  return createHash("sha256").update(fs.readFileSync(file)).digest("hex");
}

/**
 * Run a command to completion; resolves `{code, signal, stdout, stderr, elapsedMs}`.
 * Kills the child (by its own pid) and rejects if it outlives `timeoutMs`.
 */
export function runProcess(command, args, { timeoutMs = 30_000, cwd = REPO_ROOT, input, env } = {}) {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const child = spawn(command, args, { cwd, env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${command} did not exit within ${timeoutMs}ms; stderr: ${stderr}`));
    }, timeoutMs);
    child.on("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, elapsedMs: Date.now() - started });
    });
    child.stdin.end(input ?? "");
  });
}

/** Run a Python snippet with `sys.argv[1:] = args`; rejects on a non-zero exit. */
export async function runPython(code, args = [], opts = {}) {
  const out = await runProcess(PYTHON, ["-c", code, ...args], opts);
  if (out.code !== 0) {
    throw new Error(`python exited with ${out.code}: ${out.stderr}`);
  }
  return out.stdout;
}

/**
 * A separate process that holds SQLite's write lock on `dbPath` (BEGIN
 * IMMEDIATE) until `release()` is called. Resolves once the lock is held.
 */
export async function holdWriteLock(dbPath) {
  const code = [
    "import sqlite3, sys",
    "c = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)",
    "c.execute('BEGIN IMMEDIATE')",
    "sys.stdout.write('locked\\n'); sys.stdout.flush()",
    "sys.stdin.read()",
    "c.execute('COMMIT')",
    "c.close()",
  ].join("\n");
  const child = spawn(PYTHON, ["-c", code, dbPath], { stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => (stdout += d));
  child.stderr.on("data", (d) => (stderr += d));
  const exited = new Promise((resolve) => child.on("exit", (exitCode) => resolve(exitCode)));
  let exitCode = null;
  exited.then((c) => (exitCode = c));
  await waitFor(() => stdout.includes("locked") || exitCode !== null, {
    timeoutMs: 30_000,
    message: "the lock-holding python process never reported the lock",
  });
  if (!stdout.includes("locked")) throw new Error(`lock holder exited early: ${stderr}`);
  return {
    async release() {
      child.stdin.end();
      const c = await exited;
      if (c !== 0) throw new Error(`lock holder exited with ${c}: ${stderr}`);
    },
  };
}

/** The scripts the tests run as child processes. */
export const FIXTURES = path.join(REPO_ROOT, "__test__", "fixtures");

// Last resort: whatever a test's cleanup missed, no child outlives this process.
const liveChildren = new Set();
process.on("exit", () => {
  for (const child of liveChildren) {
    try {
      child.kill("SIGKILL");
    } catch {}
  }
});

/**
 * Spawn `command ...args` with piped output: the one child-process handle of
 * the tests. It exposes the output so far, the parsed JSON lines (`events()`,
 * `waitForEvent(pred)`), `exited` and `waitExit(ms)` (resolve `{code, signal}`),
 * and `kill(signal)` (this child only). A child still alive when the test ends
 * gets `endSignal`, then SIGKILL if it has not exited 10 s later.
 */
export function spawnProcess(
  t,
  command,
  args,
  { label = command, env, cwd = REPO_ROOT, eventTimeoutMs = 30_000, endSignal = "SIGKILL" } = {},
) {
  const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
  liveChildren.add(child);
  const proc = {
    child,
    pid: child.pid,
    stdout: "",
    stderr: "",
    exitInfo: null,
    exited: null,
    /** The end of the output, for failure messages. */
    tail() {
      return `${label} stdout: ${proc.stdout.slice(-4000)}; stderr: ${proc.stderr.slice(-4000)}`;
    },
    /** Every complete stdout line that parses as JSON. */
    events() {
      const out = [];
      for (const line of proc.stdout.split("\n")) {
        if (!line.startsWith("{")) continue;
        try {
          out.push(JSON.parse(line));
        } catch {}
      }
      return out;
    },
    async waitForEvent(predicate, { timeoutMs = eventTimeoutMs, what = "event" } = {}) {
      return waitFor(
        () => {
          const found = proc.events().find(predicate);
          if (found) return found;
          if (proc.exitInfo) {
            throw new Error(`${label} exited (${JSON.stringify(proc.exitInfo)}) before ${what}; ${proc.tail()}`);
          }
          return null;
        },
        {
          timeoutMs,
          intervalMs: 20,
          message: `${label} did not report ${what} within ${timeoutMs}ms; ${proc.tail()}`,
        },
      );
    },
    kill(signal) {
      if (proc.exitInfo === null) child.kill(signal);
    },
    /** Resolve with `{code, signal}`; SIGKILL the child and reject after `timeoutMs`. */
    async waitExit(timeoutMs = 30_000) {
      let timer;
      const timeout = new Promise((_, reject) => {
        timer = setTimeout(() => {
          proc.kill("SIGKILL");
          reject(new Error(`${label} did not exit within ${timeoutMs}ms; ${proc.tail()}`));
        }, timeoutMs);
      });
      try {
        return await Promise.race([proc.exited, timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
  child.stdout.setEncoding("utf8").on("data", (d) => (proc.stdout += d));
  child.stderr.setEncoding("utf8").on("data", (d) => (proc.stderr += d));
  proc.exited = new Promise((resolve) =>
    // "close", not "exit": all output has been read by then.
    child.on("close", (code, signal) => {
      liveChildren.delete(child);
      proc.exitInfo = { code, signal };
      resolve(proc.exitInfo);
    }),
  );
  defer(t, async () => {
    if (proc.exitInfo !== null) return;
    child.kill(endSignal);
    try {
      await proc.waitExit(10_000);
    } catch {
      // waitExit has SIGKILLed it; wait for the exit itself.
      await proc.exited;
    }
  });
  return proc;
}

/**
 * Spawn `node __test__/fixtures/<fixture> <json config>` (see `spawnProcess`);
 * any child still alive when the test ends is SIGKILLed.
 */
export function spawnFixture(t, fixture, config, { eventTimeoutMs } = {}) {
  return spawnProcess(t, process.execPath, [path.join(FIXTURES, fixture), JSON.stringify(config)], {
    label: fixture,
    eventTimeoutMs,
  });
}

/**
 * A worker the test runs: `start()` begins `run()` and remembers the promise,
 * `stopAndDrain()` stops it and waits. When the test ends it is stopped,
 * drained (bounded: a test that failed while a handler waits on a gate must
 * not hang its cleanup) and closed.
 */
export function manageWorker(t, worker) {
  let running = null;
  const handle = {
    worker,
    start(runOpts) {
      running = worker.run(runOpts);
      // Surface a rejection through `stopAndDrain` instead of as unhandled.
      running.catch(() => {});
      return running;
    },
    async stopAndDrain() {
      worker.stop();
      if (running) await running;
    },
  };
  defer(t, async () => {
    worker.stop();
    if (running) {
      let timer;
      const drained = await Promise.race([
        running.then(
          () => true,
          () => true,
        ),
        new Promise((resolve) => {
          timer = setTimeout(() => resolve(false), 20_000);
        }),
      ]);
      clearTimeout(timer);
      if (!drained) {
        // Close anyway: a handler still looping on the store then fails and
        // ends, instead of keeping the test process alive for good.
        await worker.close().catch(() => {});
        throw new Error("the worker did not drain within 20 s of stop()");
      }
    }
    await worker.close();
  });
  return handle;
}
