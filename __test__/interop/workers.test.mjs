// Worker interop with the Python SDKs (PyPI cairnq 0.7.0 and 0.15.1, see
// support/python-sdks.mjs), on SQLite and on Postgres: tasks submitted through one SDK's API are run by the other SDK's
// worker, and both SDKs read the outcome (result, failure envelope, row) alike.
//
// The Python side is real processes with the real SDK: fixtures/python/cairnq_cli.py for
// the API side (one process per step) and fixtures/python/worker_proc.py for a long-running
// Python Worker, stopped with SIGTERM. Our workers run in this process and are
// stopped with `worker.stop()` and drained. Every child is killed when its
// test ends (and, as a last resort, when this process exits).
import { describe, test } from "node:test";
import assert from "node:assert/strict";

import { CairnQ, TaskError, Worker } from "../../index.mjs";
import { defer, makeDbPath, manageWorker, rejectionOf, waitFor } from "../support/helpers.mjs";
import { SDKS, pythonSdkProblem, pythonStep, sdkSkipReason, spawnPythonWorker } from "../support/python-sdks.mjs";

const pgDsn = process.env.CAIRNQ_TEST_PG_DSN;

// A `call` step waits for the tasks it submitted within its step's bound
// (support/python-sdks.mjs pythonStep).
const PY_CALL_WAIT_MS = 90_000;
const OUR_CALL_WAIT_MS = 90_000;
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

/** A connected client of ours (connecting migrates a fresh database), closed at the end. */
async function openOurs(t, backend, db) {
  const client = backend.client(db);
  defer(t, () => client.close());
  await client.connect();
  return client;
}

/**
 * Our worker, with handlers added by `register(worker)`, running from now on
 * (support/helpers.mjs manageWorker: stopped, drained and closed when the
 * test ends); `id` is its worker id.
 */
function startOurWorker(t, backend, db, register) {
  const handle = manageWorker(t, backend.worker(db, { pollIntervalMs: 50, concurrency: 4 }));
  register(handle.worker);
  handle.start();
  return { ...handle, id: handle.worker.id };
}

/** The result our handlers return: enough to tell who ran the task. */
function ourEcho(ctx, payload) {
  return {
    by: "js",
    name: ctx.name,
    echo: payload,
    worker_id: ctx.workerId,
    task_id: ctx.taskId,
    attempt: ctx.attempt,
  };
}

/**
 * Waits for `tasks` (submitted with `{ ...RICH_PAYLOAD, i }`, i their place)
 * and asserts the Python worker `pyWorkerId` ran each; answers the rows.
 */
async function ranByPython(ours, tasks, pyWorkerId) {
  const rows = await Promise.all(tasks.map((task) => ours.wait(task.id, { timeoutMs: OUR_CALL_WAIT_MS })));
  for (const [i, row] of rows.entries()) {
    const detail = JSON.stringify(row);
    assert.equal(row.status, "succeeded", detail);
    assert.equal(row.worker_id, pyWorkerId, detail);
    assert.equal(row.result.by, "python", detail);
    assert.deepEqual(row.result.echo, { ...RICH_PAYLOAD, i }, detail);
  }
  return rows;
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

for (const sdk of SDKS) {
  const sdkProblem = pythonSdkProblem(sdk);
  // In CI a missing SDK (or DSN) must fail, not skip.
  const skipReason = sdkProblem && !process.env.CI ? sdkSkipReason(sdk, sdkProblem) : false;

  /** One step of the Python helper; the SDK must not have raised. */
  async function py(command, db, ...args) {
    if (sdkProblem) throw new Error(sdkProblem);
    const out = await pythonStep(sdk, command, db, ...args);
    assert.equal(out.error, undefined, `python ${command} raised ${JSON.stringify(out.error)}`);
    return out;
  }

  /** A Python worker of this SDK, four handler calls at a time, polling every 50 ms. */
  const spawnPyWorker = (t, db, { handlers }) =>
    spawnPythonWorker(t, sdk, db, { handlers, concurrency: 4, pollMs: 50 });

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
          "call",
          db,
          "--name",
          "js.echo",
          "--payload",
          JSON.stringify(RICH_PAYLOAD),
          "--count",
          String(N),
          "--wait-timeout-ms",
          String(PY_CALL_WAIT_MS),
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
        assert.deepEqual(failed.outcomes, [
          { error: { name: "TaskFailed", ...BAD_INPUT_ENVELOPE, envelope: BAD_INPUT_ENVELOPE } },
        ]);

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
          "call",
          db,
          "--name",
          "js.boom",
          "--max-attempts",
          "1",
          "--wait-timeout-ms",
          String(PY_CALL_WAIT_MS),
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

      scenario("a Python worker runs tasks of submitMany and a task our retryAfter pushed back", async (t) => {
        const db = await backend.freshDatabase(t);
        const ours = await openOurs(t, backend, db);
        // Our worker pushes "echo" back once; then only the Python worker serves it.
        const pushed = [];
        const ourWorker = startOurWorker(t, backend, db, (w) =>
          w.task("echo", (ctx) => {
            pushed.push(ctx.taskId);
            return ctx.retryAfter(500);
          }),
        );
        const [pushedBack] = await ours.submitMany([{ task: "echo", payload: { pushed: true } }]);
        await waitFor(async () => (await ours.get(pushedBack.id)).run_at_ms > Date.now(), { timeoutMs: 60_000 });
        await ourWorker.stopAndDrain();
        const refs = await ours.submitMany([
          { task: "echo", payload: { i: 0 } },
          { task: "echo", payload: { i: 1 }, options: { key: "bulk:1", priority: 3 } },
        ]);
        const pyWorker = spawnPyWorker(t, db, { handlers: ["echo"] });
        const pyWorkerId = await pyWorker.ready();
        for (const ref of [pushedBack, ...refs]) {
          const row = await waitFor(
            async () => {
              const task = await ours.get(ref.id);
              return task.status === "succeeded" ? task : null;
            },
            { timeoutMs: 60_000 },
          );
          assert.equal(row.worker_id, pyWorkerId);
          assert.equal(row.attempt, 1, "the push-back gave its attempt back");
        }
        assert.deepEqual(pushed, [pushedBack.id]);
        const { tasks } = await py("list", db, "--name", "echo");
        assert.equal(tasks.length, 3);
        await pyWorker.terminate();
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
        const row = await waitFor(
          async () => {
            const task = await ours.get(id);
            return task.status === "succeeded" ? task : null;
          },
          { timeoutMs: 60_000 },
        );
        assert.equal(row.worker_id, pyWorkerId);
        assert.deepEqual(row.result.echo, { i: 4 });
        assert.ok(row.run_at_ms >= answers.at(-1).updated_at_ms + 500);
        assert.deepEqual(pyWorker.startedTaskIds(), [id]);
        assert.equal((await ours.list()).length, 1);
        await pyWorker.terminate();
      });

      scenario(
        "a debounce follow-up held while a Python worker runs the key's task runs after it, on that worker",
        async (t) => {
          const db = await backend.freshDatabase(t);
          const ours = await openOurs(t, backend, db);
          const pyWorker = spawnPyWorker(t, db, { handlers: ["slow"] });
          const pyWorkerId = await pyWorker.ready();
          // Our worker serves the queue (no "slow" handler): its clock releases follow-ups.
          const ourWorker = startOurWorker(t, backend, db, (w) => w.task("unused", async () => null));
          const opts = { key: "save:2", debounceMs: 200 };
          const first = await ours.submit("slow", { ms: 3_000, v: 1 }, opts);
          await waitFor(async () => (await ours.get(first.id)).status === "running", { timeoutMs: 60_000 });
          const followUp = await ours.submit("slow", { ms: 10, v: 2 }, opts);
          assert.notEqual(followUp.id, first.id);
          // The Python SDK reads the held-back follow-up as an ordinary queued task.
          const listed = (await py("list", db, "--name", "slow")).tasks;
          assert.deepEqual(
            listed.map((task) => [task.id, task.status]).sort(),
            [
              [first.id, "running"],
              [followUp.id, "queued"],
            ].sort(),
          );
          const done = await waitFor(
            async () => {
              const task = await ours.get(followUp.id);
              return task.status === "succeeded" ? task : null;
            },
            { timeoutMs: 60_000 },
          );
          const firstDone = await ours.get(first.id);
          assert.equal(firstDone.status, "succeeded");
          assert.equal(done.worker_id, pyWorkerId);
          assert.deepEqual(done.result.echo, { ms: 10, v: 2 });
          assert.ok(done.run_at_ms >= firstDone.completed_at_ms, "the follow-up was due before the first ended");
          assert.deepEqual(pyWorker.startedTaskIds(), [first.id, followUp.id]);
          await ourWorker.stopAndDrain();
          await pyWorker.terminate();
        },
      );

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
        const started = await pyWorker.waitForEvent((e) => e.event === "started", { what: "the slow task starting" });
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
          const expected =
            row.name === "py_job" ? { by: "python", workerId: pyWorkerId } : { by: "js", workerId: ourWorker.id };
          assert.equal(row.worker_id, expected.workerId, detail);
          assert.equal(row.result.by, expected.by, detail);
          assert.equal(row.result.worker_id, expected.workerId, detail);
          assert.equal(row.result.task_id, row.id, detail);
          assert.deepEqual(row.result.echo, row.payload, detail);
        }

        // Each handler ran exactly its own name's tasks, each once.
        const idsOf = (name) =>
          submitted
            .filter((task) => task.name === name)
            .map((task) => task.id)
            .sort();
        assert.deepEqual([...pyWorker.startedTaskIds()].sort(), idsOf("py_job"));
        assert.deepEqual([...jsRan].sort(), idsOf("js_job"));

        // Python reads the same picture.
        const { tasks: pyRows } = await py("list", db);
        assert.equal(pyRows.length, 2 * N);
        assert.deepEqual(
          pyRows.filter((row) => row.status !== "succeeded" || row.error !== null),
          [],
        );
        assert.deepEqual(pyRows.map((row) => row.id).sort(), submitted.map((task) => task.id).sort());
        for (const row of pyRows)
          assert.deepEqual(
            row,
            finals.find((f) => f.id === row.id),
          );

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

      scenario(
        "a database with schedules: the Python worker opens it and runs the tasks our worker fires",
        async (t) => {
          const db = await backend.freshDatabase(t);
          const ours = await openOurs(t, backend, db);
          await ours.schedule("py-tick", { task: "py.tick", cron: "* * * * * *", payload: RICH_PAYLOAD });
          // Our worker fires the schedule (its queue is "default") but has no
          // handler for py.tick: the Python worker runs every task.
          const ourWorker = startOurWorker(t, backend, db, (w) => w.task("js.unused", () => null));
          const pyWorker = spawnPyWorker(t, db, { handlers: ["py.tick"] });
          const pyWorkerId = await pyWorker.ready();
          await pyWorker.waitForEvent(() => pyWorker.startedTaskIds().length >= 3, {
            what: "three scheduled tasks started",
            timeoutMs: 90_000,
          });
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
          assert.ok(
            migrations.some((m) => m.name === "node_schedules_0001.sql"),
            JSON.stringify(migrations),
          );
          await Promise.all([pyWorker.terminate(), ourWorker.stopAndDrain()]);
        },
      );

      scenario(
        "a database with schedule controls (every, overlap skip, window, limit, a trigger): the Python worker runs their tasks",
        async (t) => {
          const db = await backend.freshDatabase(t);
          const ours = await openOurs(t, backend, db);
          await ours.schedule("py-controlled", {
            task: "py.tick",
            every: 300,
            overlap: "skip",
            startAt: new Date(Date.now() + 500),
            endAt: Date.now() + 3_600_000,
            limit: 3,
            payload: RICH_PAYLOAD,
          });
          const triggered = await ours.triggerSchedule("py-controlled");
          const ourWorker = startOurWorker(t, backend, db, (w) => w.task("js.unused", () => null));
          const pyWorker = spawnPyWorker(t, db, { handlers: ["py.tick"] });
          const pyWorkerId = await pyWorker.ready();
          await pyWorker.waitForEvent(() => pyWorker.startedTaskIds().length >= 4, {
            what: "the triggered task and the three the limit allows started",
            timeoutMs: 90_000,
          });
          const ran = pyWorker.startedTaskIds();
          const rows = await Promise.all(ran.map((id) => ours.wait(id, { timeoutMs: OUR_CALL_WAIT_MS })));
          for (const row of rows) {
            const detail = JSON.stringify(row);
            assert.equal(row.status, "succeeded", detail);
            assert.equal(row.worker_id, pyWorkerId, detail);
            assert.deepEqual(row.result.echo, RICH_PAYLOAD, detail);
            assert.equal(row.metadata["cairnq.schedule"].name, "py-controlled", detail);
          }
          assert.ok(ran.includes(triggered.id), "the Python worker ran the triggered task");
          const [schedule] = await ours.schedules();
          assert.equal(schedule.firedCount, 3);
          assert.equal(schedule.finished, true);
          const listed = await py("list", db, "--name", "py.tick");
          assert.equal(listed.tasks.length, 4, "the limit's three and the trigger");
          const { migrations } = await py("ledger", db);
          for (const name of ["node_schedules_0001.sql", "node_schedules_0002.sql"]) {
            assert.ok(
              migrations.some((m) => m.name === name),
              `${name}: ${JSON.stringify(migrations)}`,
            );
          }
          await Promise.all([pyWorker.terminate(), ourWorker.stopAndDrain()]);
        },
      );

      scenario(
        "a database with steps: Python runs such a task from the top, a child it finishes resumes its parent, its purge takes the steps",
        async (t) => {
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
          await waitFor(async () => (await ours.steps(stepped.id)).suspended?.kind === "sleep", {
            timeoutMs: OUR_CALL_WAIT_MS,
            message: "the task never slept",
          });
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
          assert.ok(
            migrations.some((m) => m.name === "node_steps_0001.sql"),
            JSON.stringify(migrations),
          );
          await new Promise((resolve) => setTimeout(resolve, 5));
          const { ids } = await py("purge", db, "--older-than-ms", "0");
          assert.ok(ids.includes(stepped.id) && ids.includes(parent.id), JSON.stringify(ids));
          assert.deepEqual(await ours.steps(stepped.id), { steps: [], suspended: null, signals: [] });
          assert.deepEqual(await ours.steps(parent.id), { steps: [], suspended: null, signals: [] });
          await Promise.all([pyWorker.terminate(), pyStepper.terminate()]);
        },
      );

      scenario(
        "a signal to a task a Python worker holds breaks nothing; Python runs tasks beside the signals tables",
        async (t) => {
          const db = await backend.freshDatabase(t);
          const ours = await openOurs(t, backend, db);
          const pyWorker = spawnPyWorker(t, db, { handlers: ["slow", "py.after"] });
          const pyWorkerId = await pyWorker.ready();
          const held = await ours.submit("slow", { ms: 1500 });
          await waitFor(async () => (await ours.get(held.id)).status === "running", {
            timeoutMs: OUR_CALL_WAIT_MS,
            message: "the Python worker never took the task",
          });
          // The first signal on the database creates the signals tables.
          assert.equal(await ours.signal(held.id, "go", { n: 1 }), true);
          const done = await ours.wait(held.id, { timeoutMs: OUR_CALL_WAIT_MS });
          assert.equal(done.status, "succeeded", JSON.stringify(done));
          assert.equal(done.worker_id, pyWorkerId);
          assert.equal(done.attempt, 1);
          assert.deepEqual(
            (await ours.steps(held.id)).signals.map((s) => s.name),
            ["go"],
            "a Python run consumes no signal",
          );

          const after = await ours.submit("py.after", RICH_PAYLOAD);
          const ran = await ours.wait(after.id, { timeoutMs: OUR_CALL_WAIT_MS });
          assert.equal(ran.status, "succeeded", JSON.stringify(ran));
          assert.equal(ran.result.by, "python");
          const { task: pyRow } = await py("get", db, held.id);
          assert.equal(pyRow.status, "succeeded");
          const { migrations } = await py("ledger", db);
          assert.ok(
            migrations.some((m) => m.name === "node_signals_0001.sql"),
            JSON.stringify(migrations),
          );
          await new Promise((resolve) => setTimeout(resolve, 5));
          const { ids } = await py("purge", db, "--older-than-ms", "0");
          assert.ok(ids.includes(held.id), JSON.stringify(ids));
          assert.deepEqual(await ours.steps(held.id), { steps: [], suspended: null, signals: [] });
          await pyWorker.terminate();
        },
      );

      scenario(
        "a database with the queue pauses table: the Python worker opens it and runs the paused queue's tasks",
        async (t) => {
          const db = await backend.freshDatabase(t);
          const ours = await openOurs(t, backend, db);
          // The first pause creates the table; a Python worker does not know
          // of pauses (docs/api.md, "Queue pauses"), so it claims as ever.
          assert.equal(await ours.pauseQueue("default"), true);
          const tasks = [];
          for (let i = 0; i < 3; i += 1) tasks.push(await ours.submit("py.export", { ...RICH_PAYLOAD, i }));
          const pyWorker = spawnPyWorker(t, db, { handlers: ["py.export"] });
          await ranByPython(ours, tasks, await pyWorker.ready());
          const read = await py("get", db, tasks[0].id);
          assert.equal(read.task.status, "succeeded");
          const { migrations } = await py("ledger", db);
          assert.ok(
            migrations.some((m) => m.name === "node_pauses_0001.sql"),
            JSON.stringify(migrations),
          );
          assert.deepEqual(
            (await ours.queues()).map((q) => [q.queue, q.paused, q.counts.succeeded]),
            [["default", true, 3]],
          );
          await pyWorker.terminate();
        },
      );

      scenario(
        "a database with flow tables: the Python worker opens it and runs grouped tasks (without the limits)",
        async (t) => {
          const db = await backend.freshDatabase(t);
          const ours = await openOurs(t, backend, db);
          // Our worker declares a group concurrency (creating the flow tables)
          // and runs one grouped task under it.
          const ourWorker = startOurWorker(t, backend, db, (w) =>
            w.task("js.export", { groupConcurrency: 1 }, ourEcho),
          );
          const declared = await ours.submit("js.export", {}, { group: "customer:1" });
          assert.equal((await ours.wait(declared.id, { timeoutMs: OUR_CALL_WAIT_MS })).status, "succeeded");
          const grouped = [];
          for (let i = 0; i < 3; i += 1) {
            grouped.push(
              await ours.submit("py.export", { ...RICH_PAYLOAD, i }, { group: "customer:1", metadata: { i } }),
            );
          }
          const pyWorker = spawnPyWorker(t, db, { handlers: ["py.export"] });
          const rows = await ranByPython(ours, grouped, await pyWorker.ready());
          for (const [i, row] of rows.entries()) {
            assert.deepEqual(row.metadata, { i, "cairnq.group": "customer:1" }, JSON.stringify(row));
          }
          // The Python SDK reads the grouped rows and the ledger as ever.
          const read = await py("get", db, grouped[0].id);
          assert.deepEqual(read.task.metadata, { i: 0, "cairnq.group": "customer:1" });
          const listed = await py("list", db, "--name", "py.export");
          assert.equal(listed.tasks.length, 3);
          const { migrations } = await py("ledger", db);
          assert.ok(
            migrations.some((m) => m.name === "node_flow_0001.sql"),
            JSON.stringify(migrations),
          );
          await Promise.all([pyWorker.terminate(), ourWorker.stopAndDrain()]);
        },
      );

      scenario(
        "a database with a shared rate-limit key and a limit push-back: the Python worker opens it and runs the names (ignoring the budget)",
        async (t) => {
          const db = await backend.freshDatabase(t);
          const ours = await openOurs(t, backend, db);
          // Our worker serves two names of one key; the first task pushes
          // the whole key back for a minute.
          const shared = { rateLimit: { key: "upstream", max: 50, perMs: 1000 } };
          const embedStarts = [];
          const ourWorker = startOurWorker(t, backend, db, (w) => {
            w.task("js.chat", shared, (ctx) => ctx.retryAfter(60_000, { limit: true }));
            w.task("js.embed", shared, (ctx, payload) => {
              embedStarts.push(ctx.taskId);
              return ourEcho(ctx, payload);
            });
          });
          const chat = await ours.submit("js.chat", {});
          await waitFor(async () => (await ours.get(chat.id)).run_at_ms > Date.now() + 30_000, {
            timeoutMs: OUR_CALL_WAIT_MS,
            message: "our worker never pushed the key back",
          });
          const embeds = [];
          for (let i = 0; i < 2; i += 1) embeds.push(await ours.submit("js.embed", { ...RICH_PAYLOAD, i }));
          // Our worker honours the push-back: the other name of the key waits.
          await new Promise((resolve) => setTimeout(resolve, 500));
          assert.deepEqual(embedStarts, []);
          await ourWorker.stopAndDrain();
          // A Python worker reads no flow table: it runs them at once.
          const pyWorker = spawnPyWorker(t, db, { handlers: ["js.embed"] });
          await ranByPython(ours, embeds, await pyWorker.ready());
          // The pushed task waits, queued, its attempt given back.
          const { task: pushed } = await py("get", db, chat.id);
          assert.equal(pushed.status, "queued");
          assert.equal(pushed.attempt, 0);
          const { migrations } = await py("ledger", db);
          for (const name of ["node_flow_0001.sql", "node_flow_0002.sql"]) {
            assert.ok(
              migrations.some((m) => m.name === name),
              `${name}: ${JSON.stringify(migrations)}`,
            );
          }
          await pyWorker.terminate();
        },
      );
    });
  }
}
