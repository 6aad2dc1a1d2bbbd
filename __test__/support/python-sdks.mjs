// The Python SDKs the interop tests share databases with: PyPI cairnq 0.7.0
// (schema_version 6) through CAIRNQ_PYTHON and 0.15.1 (schema_version 10)
// through CAIRNQ_PYTHON_015, each a Python with "cairnq[postgres]==<version>"
// (.ci/run installs both); the steps and the worker process the tests run
// with them (fixtures/python/).
import assert from "node:assert/strict";
import { execFile, spawnSync } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";

import { FIXTURES, spawnProcess } from "./helpers.mjs";

const execFileAsync = promisify(execFile);

export const SDKS = [
  { version: "0.7.0", env: "CAIRNQ_PYTHON", python: process.env.CAIRNQ_PYTHON ?? "python3", schemaVersion: "6" },
  { version: "0.15.1", env: "CAIRNQ_PYTHON_015", python: process.env.CAIRNQ_PYTHON_015, schemaVersion: "10" },
];

/** Why `sdk` cannot run, or null: its interpreter must import that very version. */
export function pythonSdkProblem(sdk) {
  if (!sdk.python) return `${sdk.env} is not set`;
  const probe = spawnSync(sdk.python, ["-c", "import cairnq, sys; sys.stdout.write(cairnq.__version__)"], {
    encoding: "utf8",
    timeout: 60_000,
  });
  if (probe.error) return `cannot run ${sdk.python}: ${probe.error.message}`;
  if (probe.status !== 0) return `${sdk.python} cannot import cairnq: ${probe.stderr.trim().split("\n").pop()}`;
  if (probe.stdout !== sdk.version) return `${sdk.python} has cairnq ${probe.stdout}, not ${sdk.version}`;
  return null;
}

/** The skip reason for `sdk`'s tests (false when it runs); `problem` from pythonSdkProblem. */
export function sdkSkipReason(sdk, problem) {
  return problem
    ? `Python cairnq SDK ${sdk.version} unavailable (${problem}); set ${sdk.env} to a Python with "cairnq[postgres]==${sdk.version}"`
    : false;
}

// UTF-8 argv and stdout whatever the locale of the CI shell; lines flushed as written.
const PYTHON_ENV = { ...process.env, PYTHONUTF8: "1", PYTHONUNBUFFERED: "1" };
const CLI_SCRIPT = path.join(FIXTURES, "python", "cairnq_cli.py");
const WORKER_SCRIPT = path.join(FIXTURES, "python", "worker_proc.py");

/**
 * Run one step of fixtures/python/cairnq_cli.py with `sdk`'s interpreter
 * (`cairnq_cli.py <command> --db <db> ...args`); resolves with its JSON
 * output, which carries `error` when the SDK raised. The bound is for an
 * interpreter start-up plus an SDK connect (and a `call` step's own wait)
 * on a loaded CI box.
 */
export async function pythonStep(sdk, command, db, ...args) {
  try {
    const { stdout } = await execFileAsync(sdk.python, [CLI_SCRIPT, command, "--db", db, ...args], {
      env: PYTHON_ENV,
      timeout: 120_000,
      killSignal: "SIGKILL",
      maxBuffer: 64 * 1024 * 1024,
    });
    return JSON.parse(stdout);
  } catch (err) {
    throw new Error(`python ${sdk.version} helper '${command}' failed: ${err.message}\n${err.stderr ?? ""}`, {
      cause: err,
    });
  }
}

/**
 * A Python Worker process of `sdk` (fixtures/python/worker_proc.py) on `db`,
 * registered for `handlers` (see `spawnProcess`). `ready()` resolves with
 * its worker id once its store is connected; `startedTaskIds()` lists the
 * tasks whose handler started there; `sigterm()` sends SIGTERM once;
 * `terminate()` sends it and asserts a clean, drained exit. A child still
 * alive when the test ends gets SIGTERM, then SIGKILL.
 */
export function spawnPythonWorker(t, sdk, db, { handlers, concurrency, leaseMs, pollMs }) {
  const args = [WORKER_SCRIPT, "--db", db, "--handlers", handlers.join(",")];
  if (concurrency !== undefined) args.push("--concurrency", String(concurrency));
  if (pollMs !== undefined) args.push("--poll-ms", String(pollMs));
  if (leaseMs !== undefined) args.push("--lease-ms", String(leaseMs));
  const proc = spawnProcess(t, sdk.python, args, {
    label: `python ${sdk.version} worker`,
    env: PYTHON_ENV,
    eventTimeoutMs: 60_000,
    endSignal: "SIGTERM",
  });
  let signaled = false;
  return Object.assign(proc, {
    workerId: null,
    async ready() {
      const event = await proc.waitForEvent((e) => e.event === "ready", { what: "ready" });
      proc.workerId = event.worker_id;
      return event.worker_id;
    },
    /** Ids of the tasks whose handler started in this process, in order. */
    startedTaskIds() {
      return proc
        .events()
        .filter((e) => e.event === "started")
        .map((e) => e.task_id);
    },
    sigterm() {
      if (!signaled) {
        signaled = true;
        proc.kill("SIGTERM");
      }
    },
    /** SIGTERM, then assert the worker drained, closed its store and exited 0. */
    async terminate() {
      proc.sigterm();
      const info = await proc.waitExit();
      assert.deepEqual(info, { code: 0, signal: null }, `python worker exit; ${proc.tail()}`);
      const kinds = proc.events().map((e) => e.event);
      assert.ok(kinds.includes("stopping"), `no 'stopping' event; ${proc.tail()}`);
      assert.equal(kinds.at(-1), "stopped", `'stopped' is not the last event; ${proc.tail()}`);
    },
  });
}
