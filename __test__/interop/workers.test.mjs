// Worker interop with the Python SDKs (PyPI cairnq 0.7.0 and 0.15.1, see
// sdks.mjs), on SQLite and on Postgres: tasks submitted through one SDK's API are run by the other SDK's
// worker, and both SDKs read the outcome (result, failure envelope, row) alike.
//
// The Python side is real processes with the real SDK: py/cairnq_cli.py for
// the API side (one process per step) and py/worker_proc.py for a long-running
// Python Worker, stopped with SIGTERM. Our workers run in this process and are
// stopped with `worker.stop()` and drained. Every child is killed when its
// test ends (and, as a last resort, when this process exits).
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

import { CairnQ, TaskError, Worker } from "../../index.mjs";
import { defer, makeDbPath, waitFor } from "../helpers.mjs";
import { SDKS, pythonSdkProblem, sdkSkipReason } from "./sdks.mjs";

const execFileAsync = promisify(execFile);
const here = path.dirname(fileURLToPath(import.meta.url));
const cliScript = path.join(here, "py", "cairnq_cli.py");
const workerScript = path.join(here, "py", "worker_proc.py");
const pgDsn = process.env.CAIRNQ_TEST_PG_DSN;
const PY_ENV = { ...process.env, PYTHONUTF8: "1", PYTHONUNBUFFERED: "1" };

// Interpreter start-up plus an SDK connect, on a loaded CI box; a `call` step
// also waits for the tasks it submitted (its own wait timeout is shorter).
const PYTHON_STEP_TIMEOUT_MS = 120_000;
const PY_CALL_WAIT_MS = 90_000;
const OUR_CALL_WAIT_MS = 90_000;
const PROCESS_EXIT_TIMEOUT_MS = 30_000;
const SCENARIO_TIMEOUT_MS = 240_000;

// Non-ASCII (Python stores \uXXXX escapes, we raw UTF-8), an astral character,
// nesting and JSON escapes: the payload must survive both SDKs' round trips.
const RICH_PAYLOAD = {
  text: "Grüße, 世界 — naïve café 🌲𝄞",
  nested: [[1, [2, [3, { deep: ["ünïcödé", null] }]]], [], [true, false, null, 1.5, -7, 0]],
  empty: {},
  escapes: 'a "quoted" \\ backslash\n\ttab',
};
const BAD_INPUT_ENVELOPE = {
  type: "TaskError",
  code: "bad_input",
  message: "m",
  retryable: false,
  details: { field: "x" },
};

// Last resort: whatever test bookkeeping missed, no child outlives this process.
const liveChildren = new Set();
process.on("exit", () => {
  for (const child of liveChildren) {
    try {
      child.kill("SIGKILL");
    } catch {}
  }
});

/** A connected client of ours (connecting migrates a fresh database), closed at the end. */
async function openOurs(t, backend, db) {
  const client = backend.client(db);
  defer(t, () => client.close());
  await client.connect();
  return client;
}

/**
 * Our worker, with handlers added by `register(worker)`, running from now on.
 * `stopAndDrain()` stops it and waits for its in-flight calls; the same
 * happens (bounded) when the test ends, followed by `close()`.
 */
function startOurWorker(t, backend, db, register, opts = {}) {
  const worker = backend.worker(db, { pollIntervalMs: 50, concurrency: 4, ...opts });
  register(worker);
  const running = worker.run();
  running.catch(() => {});
  defer(t, async () => {
    worker.stop();
    let timer;
    const drained = await Promise.race([
      running.then(
        () => true,
        () => true,
      ),
      new Promise((resolve) => {
        timer = setTimeout(() => resolve(false), 30_000);
      }),
    ]);
    clearTimeout(timer);
    await worker.close();
    if (!drained) throw new Error("our worker did not drain within 30 s of stop()");
  });
  return {
    worker,
    id: worker.id,
    async stopAndDrain() {
      worker.stop();
      await running;
    },
  };
}

/** The result our handlers return: enough to tell who ran the task. */
function ourEcho(ctx, payload) {
  return { by: "js", name: ctx.name, echo: payload, worker_id: ctx.workerId, task_id: ctx.taskId, attempt: ctx.attempt };
}

/** Asserts `err` is our TaskFailed carrying exactly `envelope`. */
function assertTaskFailed(err, envelope) {
  assert.equal(err?.name, "TaskFailed", `expected TaskFailed, got ${err?.stack ?? err}`);
  assert.equal(err.code, envelope.code);
  assert.equal(err.retryable, envelope.retryable);
  assert.deepEqual(err.details, envelope.details);
  assert.equal(err.message, envelope.message);
  assert.equal(err.type, envelope.type);
  assert.deepEqual(err.error, envelope);
}

async function rejectionOf(promise) {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error("expected the promise to reject, it resolved");
}

for (const sdk of SDKS) {
  const python = sdk.python;
  const sdkProblem = pythonSdkProblem(sdk);
  // In CI a missing SDK (or DSN) must fail, not skip.
  const skipReason = sdkProblem && !process.env.CI ? sdkSkipReason(sdk, sdkProblem) : false;

  /** Runs one subcommand of the Python CLI helper and returns its JSON output. */
  async function py(command, db, ...args) {
    if (sdkProblem) throw new Error(sdkProblem);
    try {
      const { stdout } = await execFileAsync(python, [cliScript, command, "--db", db, ...args], {
        env: PY_ENV,
        timeout: PYTHON_STEP_TIMEOUT_MS,
        killSignal: "SIGKILL",
        maxBuffer: 64 * 1024 * 1024,
      });
      const out = JSON.parse(stdout);
      assert.equal(out.error, undefined, `python ${command} raised ${JSON.stringify(out.error)}`);
      return out;
    } catch (err) {
      throw new Error(`python ${sdk.version} helper '${command}' failed: ${err.message}\n${err.stderr ?? ""}`, {
        cause: err,
      });
    }
  }

  /**
   * A Python Worker process (py/worker_proc.py) registered for `handlers`.
   * `ready()` resolves with its worker id once its store is connected;
   * `terminate()` sends SIGTERM and asserts a clean, drained exit. A child still
   * alive when the test ends gets SIGTERM, then SIGKILL.
   */
  function spawnPyWorker(t, db, { handlers, concurrency = 4, leaseMs, pollMs = 50 }) {
    const args = [workerScript, "--db", db, "--handlers", handlers.join(","), "--concurrency", String(concurrency)];
    args.push("--poll-ms", String(pollMs));
    if (leaseMs !== undefined) args.push("--lease-ms", String(leaseMs));
    const child = spawn(python, args, { env: PY_ENV, stdio: ["ignore", "pipe", "pipe"] });
    liveChildren.add(child);
    const proc = {
      child,
      stdout: "",
      stderr: "",
      exitInfo: null,
      workerId: null,
      signaled: false,
      events() {
        return proc.stdout
          .split("\n")
          .filter((line) => line.startsWith("{"))
          .flatMap((line) => {
            try {
              return [JSON.parse(line)];
            } catch {
              return [];
            }
          });
      },
      tail() {
        return `python worker stdout: ${proc.stdout.slice(-3000)}\nstderr: ${proc.stderr.slice(-3000)}`;
      },
      waitForEvent(predicate, what, timeoutMs = 60_000) {
        return waitFor(
          () => {
            const found = proc.events().find(predicate);
            if (found) return found;
            if (proc.exitInfo) throw new Error(`python worker exited (${JSON.stringify(proc.exitInfo)}) before ${what}; ${proc.tail()}`);
            return null;
          },
          { timeoutMs, intervalMs: 20, message: `python worker did not report ${what} within ${timeoutMs}ms; ${proc.tail()}` },
        );
      },
      async ready() {
        const event = await proc.waitForEvent((e) => e.event === "ready", "ready");
        proc.workerId = event.worker_id;
        return event.worker_id;
      },
      /** Ids of the tasks whose handler started in this process, in order. */
      startedTaskIds() {
        return proc.events().filter((e) => e.event === "started").map((e) => e.task_id);
      },
      async waitExit(timeoutMs = PROCESS_EXIT_TIMEOUT_MS) {
        let timer;
        try {
          return await Promise.race([
            proc.exited,
            new Promise((_, reject) => {
              timer = setTimeout(() => {
                if (proc.exitInfo === null) child.kill("SIGKILL");
                reject(new Error(`python worker did not exit within ${timeoutMs}ms; ${proc.tail()}`));
              }, timeoutMs);
            }),
          ]);
        } finally {
          clearTimeout(timer);
        }
      },
      /** Sends SIGTERM (once). */
      sigterm() {
        if (proc.exitInfo === null && !proc.signaled) {
          proc.signaled = true;
          child.kill("SIGTERM");
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
    };
    child.stdout.setEncoding("utf8").on("data", (d) => (proc.stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d) => (proc.stderr += d));
    proc.exited = new Promise((resolve) =>
      child.on("exit", (code, signal) => {
        liveChildren.delete(child);
        proc.exitInfo = { code, signal };
        resolve(proc.exitInfo);
      }),
    );
    defer(t, async () => {
      if (proc.exitInfo !== null) return;
      child.kill("SIGTERM");
      try {
        await proc.waitExit(10_000);
      } catch {
        // waitExit has SIGKILLed it; wait for the exit itself.
        await proc.exited;
      }
    });
    return proc;
  }

  const backends = [
    {
      label: "SQLite",
      skip: skipReason,
      async freshDatabase(t) {
        return makeDbPath(t, "tasks.db");
      },
      client: (db) => CairnQ.sqlite(db),
      worker: (db, opts) => Worker.sqlite(db, opts),
    },
    {
      label: "Postgres",
      skip: skipReason || (pgDsn || process.env.CI ? false : "CAIRNQ_TEST_PG_DSN is not set"),
      // A database of its own per scenario, dropped (WITH FORCE) after every
      // client, worker and process of the scenario has been closed.
      async freshDatabase(t) {
        if (!pgDsn) throw new Error("CAIRNQ_TEST_PG_DSN must be set when CI is set");
        const { dsn, database } = await py("pg-create-database", pgDsn, "--prefix", "cairnq_wk");
        defer(t, () => py("pg-drop-database", pgDsn, database));
        return dsn;
      },
      client: (db) => CairnQ.postgres(db, { max: 4 }),
      worker: (db, opts) => Worker.postgres(db, { max: 4, ...opts }),
    },
  ];

  test(`the Python cairnq SDK ${sdk.version} is importable`, { skip: skipReason }, () => {
    assert.equal(sdkProblem, null, `CI must provide the Python SDK ${sdk.version} (${sdk.env})`);
  });

  for (const backend of backends) {
    describe(`worker interop with the Python SDK ${sdk.version} on ${backend.label}`, { skip: backend.skip }, () => {
      const scenario = (name, fn) => test(name, { timeout: SCENARIO_TIMEOUT_MS }, fn);

      scenario("Python call()s are served by our worker; Python reads the results and rows", async (t) => {
        const db = await backend.freshDatabase(t);
        const ours = await openOurs(t, backend, db);
        const ran = [];
        const ourWorker = startOurWorker(t, backend, db, (w) =>
          w.task("js.echo", (ctx, payload) => {
            ran.push(ctx.taskId);
            return ourEcho(ctx, payload);
          }),
        );

        const N = 6;
        const { outcomes } = await py(
          "call", db,
          "--name", "js.echo",
          "--payload", JSON.stringify(RICH_PAYLOAD),
          "--count", String(N),
          "--wait-timeout-ms", String(PY_CALL_WAIT_MS),
        );
        assert.equal(outcomes.length, N);
        for (const outcome of outcomes) {
          assert.equal(outcome.error, undefined, `python call failed: ${JSON.stringify(outcome.error)}`);
          assert.equal(outcome.result.by, "js");
          assert.equal(outcome.result.worker_id, ourWorker.id);
          assert.equal(outcome.result.attempt, 1);
          assert.deepEqual(outcome.result.echo, RICH_PAYLOAD);
        }
        const resultById = new Map(outcomes.map((o) => [o.result.task_id, o.result]));
        assert.equal(resultById.size, N, "every call ran its own task");
        assert.deepEqual([...ran].sort(), [...resultById.keys()].sort(), "each task ran once, in our worker");

        const { tasks } = await py("list", db, "--name", "js.echo");
        assert.equal(tasks.length, N);
        for (const row of tasks) {
          assert.equal(row.status, "succeeded");
          assert.deepEqual(row.result, resultById.get(row.id));
          assert.deepEqual(row.payload, RICH_PAYLOAD);
          assert.equal(row.worker_id, ourWorker.id);
          assert.equal(row.attempt, 1);
          assert.equal(row.error, null);
          assert.equal(row.progress, 1);
          assert.equal(row.lease_until_ms, null);
          assert.equal(typeof row.completed_at_ms, "number");
          // The whole row reads the same through both SDKs.
          assert.deepEqual(await ours.get(row.id), row);
        }
        await ourWorker.stopAndDrain();
      });

      scenario("our worker's TaskError reaches Python's call as TaskFailed with the same envelope", async (t) => {
        const db = await backend.freshDatabase(t);
        const ours = await openOurs(t, backend, db);
        const ourWorker = startOurWorker(t, backend, db, (w) =>
          w
            .task("js.fail", () => {
              throw new TaskError("m", { code: "bad_input", details: { field: "x" } });
            })
            .task("js.boom", () => {
              throw new Error("boom");
            }),
        );

        const failed = await py("call", db, "--name", "js.fail", "--wait-timeout-ms", String(PY_CALL_WAIT_MS));
        assert.deepEqual(failed.outcomes, [{ error: { name: "TaskFailed", ...BAD_INPUT_ENVELOPE, envelope: BAD_INPUT_ENVELOPE } }]);

        const [failedRow] = (await py("list", db, "--name", "js.fail")).tasks;
        assert.equal(failedRow.status, "failed");
        assert.deepEqual(failedRow.error, BAD_INPUT_ENVELOPE);
        assert.equal(failedRow.attempt, 1, "a non-retryable TaskError is not retried");
        assert.equal(failedRow.max_attempts, 3);
        assert.equal(failedRow.worker_id, ourWorker.id);
        assert.equal(failedRow.lease_until_ms, null);
        assert.equal(failedRow.result, null);
        assert.deepEqual(await ours.get(failedRow.id), failedRow);

        // A plain Error is a retryable handler_error; with one attempt it fails for good.
        const boom = await py(
          "call", db,
          "--name", "js.boom",
          "--max-attempts", "1",
          "--wait-timeout-ms", String(PY_CALL_WAIT_MS),
        );
        const boomError = boom.outcomes[0].error;
        assert.equal(boomError?.name, "TaskFailed", JSON.stringify(boom));
        assert.equal(boomError.code, "handler_error");
        assert.equal(boomError.retryable, true);
        assert.equal(boomError.message, "boom");
        assert.deepEqual(boomError.details, {});
        assert.equal(boomError.type, "Error");
        const [boomRow] = (await py("list", db, "--name", "js.boom")).tasks;
        assert.equal(boomRow.status, "failed");
        assert.equal(boomRow.attempt, 1);
        assert.deepEqual(boomRow.error, boomError.envelope);
        await ourWorker.stopAndDrain();
      });

      scenario("a Python worker runs a debounced task once, with the burst's last payload", async (t) => {
        const db = await backend.freshDatabase(t);
        const ours = await openOurs(t, backend, db);
        const pyWorker = spawnPyWorker(t, db, { handlers: ["echo"] });
        const pyWorkerId = await pyWorker.ready();

        const answers = [];
        for (let i = 0; i < 5; i += 1) {
          answers.push(await ours.submit("echo", { i }, { key: "save:1", debounceMs: 500, maxDelayMs: 5_000 }));
        }
        assert.equal(new Set(answers.map((task) => task.id)).size, 1);
        const id = answers[0].id;
        const row = await waitFor(async () => {
          const task = await ours.get(id);
          return task.status === "succeeded" ? task : null;
        }, { timeoutMs: 60_000 });
        assert.equal(row.worker_id, pyWorkerId);
        assert.deepEqual(row.result.echo, { i: 4 });
        assert.ok(row.run_at_ms >= answers.at(-1).updated_at_ms + 500);
        assert.deepEqual(pyWorker.startedTaskIds(), [id]);
        assert.equal((await ours.list()).length, 1);
        await pyWorker.terminate();
      });

      scenario("our call()s are served by a Python worker: results and TaskError envelopes", async (t) => {
        const db = await backend.freshDatabase(t);
        const ours = await openOurs(t, backend, db);
        const pyWorker = spawnPyWorker(t, db, { handlers: ["echo", "fail_task_error", "fail_generic"] });
        const pyWorkerId = await pyWorker.ready();

        const N = 6;
        const results = await Promise.all(
          Array.from({ length: N }, () => ours.call("echo", RICH_PAYLOAD, { waitTimeoutMs: OUR_CALL_WAIT_MS })),
        );
        for (const result of results) {
          assert.equal(result.by, "python");
          assert.equal(result.name, "echo");
          assert.equal(result.worker_id, pyWorkerId);
          assert.equal(result.attempt, 1);
          assert.deepEqual(result.echo, RICH_PAYLOAD);
          const row = await ours.get(result.task_id);
          assert.equal(row.status, "succeeded");
          assert.deepEqual(row.result, result);
          assert.equal(row.worker_id, pyWorkerId);
          assert.equal(row.progress, 1);
          assert.equal(row.lease_until_ms, null);
        }
        assert.equal(new Set(results.map((r) => r.task_id)).size, N);

        const err = await rejectionOf(ours.call("fail_task_error", { n: 1 }, { waitTimeoutMs: OUR_CALL_WAIT_MS }));
        assertTaskFailed(err, BAD_INPUT_ENVELOPE);
        const [failedRow] = await ours.list({ name: "fail_task_error" });
        assert.equal(failedRow.status, "failed");
        assert.equal(failedRow.attempt, 1, "a non-retryable TaskError is not retried");
        assert.equal(failedRow.worker_id, pyWorkerId);
        assert.deepEqual(failedRow.error, BAD_INPUT_ENVELOPE);

        // A generic exception: code/retryable/message/details cross; `type` is
        // the language's class name (docs/protocol.md, "Differences between
        // SDKs"), so only its presence is checked.
        const generic = await rejectionOf(
          ours.call("fail_generic", {}, { maxAttempts: 1, waitTimeoutMs: OUR_CALL_WAIT_MS }),
        );
        assert.equal(generic?.name, "TaskFailed", `expected TaskFailed, got ${generic?.stack ?? generic}`);
        assert.equal(generic.code, "handler_error");
        assert.equal(generic.retryable, true);
        assert.equal(generic.message, "boom");
        assert.deepEqual(generic.details, {});
        assert.equal(typeof generic.type, "string");
        // (Key order is not compared: Postgres jsonb does not keep it.)
        assert.deepEqual(Object.keys(generic.error).sort(), ["code", "details", "message", "retryable", "type"]);

        await pyWorker.terminate();
        assert.equal(pyWorker.events().filter((e) => e.event === "error").length, 0, pyWorker.tail());
      });

      scenario("SIGTERM lets the Python worker finish its in-flight task; our call still resolves", async (t) => {
        const db = await backend.freshDatabase(t);
        const ours = await openOurs(t, backend, db);
        const pyWorker = spawnPyWorker(t, db, { handlers: ["slow"] });
        const pyWorkerId = await pyWorker.ready();

        const called = ours.call("slow", { ms: 1500 }, { waitTimeoutMs: OUR_CALL_WAIT_MS });
        called.catch(() => {});
        const started = await pyWorker.waitForEvent((e) => e.event === "started", "the slow task starting");
        // Its progress write is what we see from our side while it runs.
        const running = await waitFor(
          async () => {
            const row = await ours.get(started.task_id);
            return row?.message === "sleeping" ? row : null;
          },
          { timeoutMs: 30_000, intervalMs: 20, message: "the slow task never reported progress" },
        );
        assert.equal(running.status, "running");
        assert.equal(running.progress, 0.5);
        assert.equal(running.worker_id, pyWorkerId);

        pyWorker.sigterm();
        const result = await called;
        assert.equal(result.by, "python");
        assert.equal(result.task_id, started.task_id);
        assert.deepEqual(result.echo, { ms: 1500 });
        await pyWorker.terminate();

        const row = await ours.get(started.task_id);
        assert.equal(row.status, "succeeded");
        assert.equal(row.attempt, 1);
        assert.equal(row.progress, 1);
        assert.equal(row.worker_id, pyWorkerId);
      });

      scenario("Python and our workers split one queue by task name; none fails with no_handler", async (t) => {
        const db = await backend.freshDatabase(t);
        const ours = await openOurs(t, backend, db);
        const pyWorker = spawnPyWorker(t, db, { handlers: ["py_job"] });
        const jsRan = [];
        const ourWorker = startOurWorker(t, backend, db, (w) =>
          w.task("js_job", (ctx, payload) => {
            jsRan.push(ctx.taskId);
            return ourEcho(ctx, payload);
          }),
        );
        const pyWorkerId = await pyWorker.ready();

        // 2×N tasks on queue "default", names alternating; half submitted by
        // us and half by Python, both at once, while both workers poll.
        const N = 20;
        const specs = (from) =>
          Array.from({ length: N }, (_, i) => ({ name: i % 2 === 0 ? "js_job" : "py_job", payload: { n: i, from } }));
        const [oursSubmitted, pySubmitted] = await Promise.all([
          (async () => {
            const out = [];
            for (const spec of specs("js")) out.push(await ours.submit(spec.name, spec.payload));
            return out;
          })(),
          py("submit-many", db, "--tasks", JSON.stringify(specs("python"))).then((o) => o.tasks),
        ]);
        const submitted = [...oursSubmitted, ...pySubmitted];
        assert.equal(submitted.length, 2 * N);
        for (const task of submitted) assert.equal(task.queue, "default");

        const finals = await Promise.all(submitted.map((task) => ours.wait(task.id, { timeoutMs: OUR_CALL_WAIT_MS })));
        for (const row of finals) {
          const detail = JSON.stringify(row);
          assert.equal(row.status, "succeeded", detail);
          assert.equal(row.error, null, detail);
          assert.equal(row.attempt, 1, detail);
          const expected = row.name === "py_job" ? { by: "python", workerId: pyWorkerId } : { by: "js", workerId: ourWorker.id };
          assert.equal(row.worker_id, expected.workerId, detail);
          assert.equal(row.result.by, expected.by, detail);
          assert.equal(row.result.worker_id, expected.workerId, detail);
          assert.equal(row.result.task_id, row.id, detail);
          assert.deepEqual(row.result.echo, row.payload, detail);
        }

        // Each handler ran exactly its own name's tasks, each once.
        const idsOf = (name) => submitted.filter((task) => task.name === name).map((task) => task.id).sort();
        assert.deepEqual([...pyWorker.startedTaskIds()].sort(), idsOf("py_job"));
        assert.deepEqual([...jsRan].sort(), idsOf("js_job"));

        // Python reads the same picture.
        const { tasks: pyRows } = await py("list", db);
        assert.equal(pyRows.length, 2 * N);
        assert.deepEqual(pyRows.filter((row) => row.status !== "succeeded" || row.error !== null), []);
        assert.deepEqual(
          pyRows.map((row) => row.id).sort(),
          submitted.map((task) => task.id).sort(),
        );
        for (const row of pyRows) assert.deepEqual(row, finals.find((f) => f.id === row.id));

        await Promise.all([pyWorker.terminate(), ourWorker.stopAndDrain()]);
      });

      scenario("Python and our workers compete for one name: every task runs exactly once", async (t) => {
        const db = await backend.freshDatabase(t);
        const ours = await openOurs(t, backend, db);
        const pyWorker = spawnPyWorker(t, db, { handlers: ["shared_job"] });
        const jsRan = [];
        const ourWorker = startOurWorker(t, backend, db, (w) =>
          w.task("shared_job", async (ctx, payload) => {
            jsRan.push(ctx.taskId);
            // A little work, so both workers get a share of the backlog.
            await new Promise((resolve) => setTimeout(resolve, 5));
            return ourEcho(ctx, payload);
          }),
        );
        const pyWorkerId = await pyWorker.ready();

        const N = 30;
        const specs = (from) => Array.from({ length: N }, (_, i) => ({ name: "shared_job", payload: { n: i, from } }));
        const [oursSubmitted, pySubmitted] = await Promise.all([
          Promise.all(specs("js").map((spec) => ours.submit(spec.name, spec.payload))),
          py("submit-many", db, "--tasks", JSON.stringify(specs("python"))).then((o) => o.tasks),
        ]);
        const submitted = [...oursSubmitted, ...pySubmitted];
        const finals = await Promise.all(submitted.map((task) => ours.wait(task.id, { timeoutMs: OUR_CALL_WAIT_MS })));
        for (const row of finals) {
          const detail = JSON.stringify(row);
          assert.equal(row.status, "succeeded", detail);
          assert.equal(row.attempt, 1, detail);
          const by = row.worker_id === pyWorkerId ? "python" : row.worker_id === ourWorker.id ? "js" : null;
          assert.ok(by, `run by an unknown worker: ${detail}`);
          assert.equal(row.result.by, by, detail);
          assert.equal(row.result.task_id, row.id, detail);
        }

        const pyRan = pyWorker.startedTaskIds();
        const all = [...pyRan, ...jsRan];
        assert.equal(new Set(all).size, all.length, "no task ran twice (in one worker or across both)");
        assert.deepEqual(all.sort(), submitted.map((task) => task.id).sort());
        t.diagnostic(`python ran ${pyRan.length}, ours ran ${jsRan.length} of ${submitted.length}`);
        const pyErrors = pyWorker.events().filter((e) => e.event === "error");
        if (pyErrors.length > 0) t.diagnostic(`python worker survived errors: ${JSON.stringify(pyErrors)}`);

        await Promise.all([pyWorker.terminate(), ourWorker.stopAndDrain()]);
      });

      scenario("a database with schedules: the Python worker opens it and runs the tasks our worker fires", async (t) => {
        const db = await backend.freshDatabase(t);
        const ours = await openOurs(t, backend, db);
        await ours.schedule("py-tick", { task: "py.tick", cron: "* * * * * *", payload: RICH_PAYLOAD });
        // Our worker fires the schedule (its queue is "default") but has no
        // handler for py.tick: the Python worker runs every task.
        const ourWorker = startOurWorker(t, backend, db, (w) => w.task("js.unused", () => null));
        const pyWorker = spawnPyWorker(t, db, { handlers: ["py.tick"] });
        const pyWorkerId = await pyWorker.ready();
        await pyWorker.waitForEvent(
          () => pyWorker.startedTaskIds().length >= 3,
          "three scheduled tasks started",
          90_000,
        );
        await ours.pauseSchedule("py-tick");
        const ran = pyWorker.startedTaskIds();
        const rows = await Promise.all(ran.map((id) => ours.wait(id, { timeoutMs: OUR_CALL_WAIT_MS })));
        const occurrences = new Set();
        for (const row of rows) {
          const detail = JSON.stringify(row);
          assert.equal(row.status, "succeeded", detail);
          assert.equal(row.worker_id, pyWorkerId, detail);
          assert.equal(row.result.by, "python", detail);
          assert.deepEqual(row.result.echo, RICH_PAYLOAD, detail);
          assert.equal(row.metadata["cairnq.schedule"].name, "py-tick", detail);
          occurrences.add(row.metadata["cairnq.schedule"].occurrenceAtMs);
        }
        assert.equal(occurrences.size, rows.length, "one task per occurrence");
        // The Python SDK reads the database as ever; its ledger holds our entry.
        const listed = await py("list", db, "--name", "py.tick");
        assert.ok(listed.tasks.length >= rows.length);
        const { migrations } = await py("ledger", db);
        assert.ok(migrations.some((m) => m.name === "node_schedules_0001.sql"), JSON.stringify(migrations));
        await Promise.all([pyWorker.terminate(), ourWorker.stopAndDrain()]);
      });

      scenario("a database with steps: Python runs such a task from the top, a child it finishes resumes its parent, its purge takes the steps", async (t) => {
        const db = await backend.freshDatabase(t);
        const ours = await openOurs(t, backend, db);
        const ourWorker = startOurWorker(t, backend, db, (w) => {
          // Waits on a child only the Python worker runs: no completion of
          // ours wakes it, its recheck (pollMs) does.
          w.task("js.parent", async (ctx, payload) => {
            const before = await ctx.step("before", () => ({ by: "js" }));
            const child = await ctx.callChild("kid", "py.kid", payload, { pollMs: 300 });
            return { before, child };
          });
          w.task("stepped", async (ctx) => {
            await ctx.step("a", () => 1);
            await ctx.sleep("nap", 2000);
            return { by: "js" };
          });
        });
        const pyWorker = spawnPyWorker(t, db, { handlers: ["py.kid"] });
        await pyWorker.ready();
        const parent = await ours.submit("js.parent", RICH_PAYLOAD);
        const done = await ours.wait(parent.id, { timeoutMs: OUR_CALL_WAIT_MS });
        assert.equal(done.status, "succeeded", JSON.stringify(done));
        assert.equal(done.attempt, 1);
        assert.deepEqual(done.result.before, { by: "js" });
        assert.equal(done.result.child.by, "python");
        assert.deepEqual(done.result.child.echo, RICH_PAYLOAD);

        // Our worker stops while "stepped" sleeps; a Python worker takes it
        // when it is due and runs it from the top, as any task.
        const stepped = await ours.submit("stepped", {});
        await waitFor(
          async () => (await ours.steps(stepped.id)).suspended?.kind === "sleep",
          { timeoutMs: OUR_CALL_WAIT_MS, message: "the task never slept" },
        );
        await ourWorker.stopAndDrain();
        const pyStepper = spawnPyWorker(t, db, { handlers: ["stepped"] });
        const pyStepperId = await pyStepper.ready();
        const ran = await ours.wait(stepped.id, { timeoutMs: OUR_CALL_WAIT_MS });
        assert.equal(ran.status, "succeeded", JSON.stringify(ran));
        assert.equal(ran.worker_id, pyStepperId);
        assert.equal(ran.result.by, "python");
        assert.deepEqual(
          (await ours.steps(stepped.id)).steps.map((step) => step.id),
          ["a", "nap"],
        );

        // The Python SDK reads the database as ever; its ledger holds our
        // entry; its purge deletes the tasks and, by the key, their steps.
        const { task: pyRow } = await py("get", db, stepped.id);
        assert.equal(pyRow.status, "succeeded");
        const { migrations } = await py("ledger", db);
        assert.ok(migrations.some((m) => m.name === "node_steps_0001.sql"), JSON.stringify(migrations));
        await new Promise((resolve) => setTimeout(resolve, 5));
        const { ids } = await py("purge", db, "--older-than-ms", "0");
        assert.ok(ids.includes(stepped.id) && ids.includes(parent.id), JSON.stringify(ids));
        assert.deepEqual(await ours.steps(stepped.id), { steps: [], suspended: null });
        assert.deepEqual(await ours.steps(parent.id), { steps: [], suspended: null });
        await Promise.all([pyWorker.terminate(), pyStepper.terminate()]);
      });
    });
  }
}
