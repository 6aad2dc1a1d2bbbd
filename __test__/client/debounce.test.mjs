// Debounced submit (docs/api.md, "Debounce"; docs/protocol.md, "Debounced
// submit"): a burst of keyed submits makes one task with the last payload,
// started a window after the last submit, bounded by maxDelayMs; real worker
// and submitter processes — on every dialect.

import assert from "node:assert/strict";

import { spawnFixture, waitFor } from "../support/helpers.mjs";
import { forEachDialect, test } from "../support/dialects.mjs";
import { makeGate, staysFalse } from "../support/worker-helpers.mjs";

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
/** A held-back follow-up's start, after its creation (docs/protocol.md, "Debounced submit"). */
const HELD_BACK_MS = 1e15;

forEachDialect("debounced submit", (dialect) => {
  /** A worker process serving "save" on `db`, once it reports serving. */
  async function startWorker(t, db) {
    const proc = spawnFixture(t, "debounce-worker.mjs", { dialect: dialect.name, db });
    await proc.waitForEvent((e) => e.event === "serving", { what: "serving" });
    return proc;
  }

  test("50 submits of one key within 1 s make one task with the last payload, started a window after the last", async (t) => {
    const { client, db } = await dialect.open(t);
    await client.connect();
    const worker = await startWorker(t, db);
    const debounceMs = 1_500;
    const answers = [];
    let lastSubmitAt = 0;
    for (let i = 0; i < 50; i += 1) {
      lastSubmitAt = Date.now();
      answers.push(await client.submit("save", { i }, { key: "save:doc-1", debounceMs, maxDelayMs: 10_000 }));
      await sleep(15);
    }
    assert.ok(Date.now() - answers[0].created_at_ms < 10_000);
    assert.equal(new Set(answers.map((task) => task.id)).size, 1);
    const last = answers.at(-1);
    assert.deepEqual(last.payload, { i: 49 });
    assert.equal(last.run_at_ms - last.updated_at_ms, debounceMs);
    assert.ok(last.run_at_ms >= lastSubmitAt + debounceMs - dialect.clockSlackMs);

    const started = await worker.waitForEvent((e) => e.event === "started", { what: "the start" });
    assert.equal(started.id, last.id);
    assert.deepEqual(started.payload, { i: 49 });
    assert.ok(started.at >= last.run_at_ms - dialect.clockSlackMs, `started ${started.at - last.run_at_ms} ms early`);
    await waitFor(async () => (await client.get(last.id)).status === "succeeded");
    const tasks = await client.list();
    assert.equal(tasks.length, 1);
    assert.equal(worker.events().filter((e) => e.event === "started").length, 1);
  });

  test("maxDelayMs bounds a never-ending burst; later submits go to a new task", async (t) => {
    const { client, db } = await dialect.open(t);
    await client.connect();
    const worker = await startWorker(t, db);
    const opts = { key: "save:doc-2", debounceMs: 500, maxDelayMs: 1_500 };
    const answers = [];
    // Submits every 100 ms until the first task has started and two more went in.
    let i = 0;
    const deadline = Date.now() + 30_000;
    for (;;) {
      answers.push(await client.submit("save", { i }, opts));
      i += 1;
      const starts = worker.events().filter((e) => e.event === "started");
      if (starts.length > 0 && answers.at(-1).id !== answers[0].id && answers.at(-2).id !== answers[0].id) break;
      assert.ok(Date.now() < deadline, `the first task never started; ${worker.tail()}`);
      await sleep(100);
    }
    const first = answers[0];
    assert.ok(
      answers.at(-1).updated_at_ms - first.created_at_ms > opts.maxDelayMs,
      `the burst outlasted maxDelayMs (${answers.length} submits)`,
    );
    const firstStored = await waitFor(async () => {
      const task = await client.get(first.id);
      return task.status === "succeeded" ? task : null;
    });
    assert.equal(firstStored.run_at_ms, first.created_at_ms + opts.maxDelayMs);
    const start = worker.events().find((e) => e.event === "started" && e.id === first.id);
    assert.ok(start.at >= firstStored.run_at_ms - dialect.clockSlackMs);
    const lastForFirst = answers.findLast((task) => task.id === first.id);
    assert.deepEqual(firstStored.payload, lastForFirst.payload);
    // Once another id is answered, the first one never comes back.
    const switched = answers.findIndex((task) => task.id !== first.id);
    assert.ok(answers.slice(switched).every((task) => task.id !== first.id));
    // The first task's answers are bounded; the follow-up, while the first
    // runs, is held back (its start 1e15 ms ahead) until it is released.
    for (const task of answers) {
      const bounded = task.run_at_ms <= task.created_at_ms + opts.maxDelayMs;
      assert.ok(bounded || (task.id !== first.id && task.run_at_ms - task.created_at_ms === HELD_BACK_MS));
    }
    assert.equal((await client.getByKey(opts.key)).id, answers.at(-1).id);
  });

  test("while the key's task runs, submits make one follow-up that starts after it ends, with the last payload", async (t) => {
    const { client, db } = await dialect.open(t);
    const gate = makeGate();
    const runs = [];
    let running = 0;
    let overlapped = false;
    const { worker, start } = dialect.makeWorker(t, db, { concurrency: 4 });
    worker.task("save", async (ctx, payload) => {
      running += 1;
      overlapped ||= running > 1;
      runs.push({ id: ctx.taskId, payload });
      if (runs.length === 1) await gate.promise;
      running -= 1;
    });
    start();
    const opts = { key: "save:doc-3", debounceMs: 50 };
    const first = await client.submit("save", { v: 1 }, opts);
    await waitFor(() => runs.length === 1);
    const answers = [];
    for (let v = 2; v <= 4; v += 1) answers.push(await client.submit("save", { v }, opts));
    const followUp = answers[0];
    assert.notEqual(followUp.id, first.id);
    assert.ok(answers.every((task) => task.id === followUp.id));
    assert.equal(followUp.run_at_ms - followUp.created_at_ms, HELD_BACK_MS);
    assert.equal((await client.getByKey(opts.key)).id, followUp.id);
    // Held while the first runs: workers poll every 20 ms and release every second.
    assert.ok(await staysFalse(() => runs.length > 1, 2_500), "the follow-up started while the first ran");
    gate.release();
    await waitFor(() => runs.length === 2, { timeoutMs: 20_000 });
    assert.deepEqual(runs[1], { id: followUp.id, payload: { v: 4 } });
    await waitFor(async () => (await client.get(followUp.id)).status === "succeeded");
    assert.equal(overlapped, false);
    assert.equal((await client.list()).length, 2);
  });

  test("a task waiting out its retry backoff keeps its payload and start; the submit makes a follow-up", async (t) => {
    const { client, db } = await dialect.open(t);
    const runs = [];
    const { worker, start } = dialect.makeWorker(t, db, { retryBackoffMs: 3_000 });
    worker.task("save", async (ctx, payload) => {
      runs.push({ id: ctx.taskId, attempt: ctx.attempt, payload, at: Date.now() });
      if (runs.length === 1) throw new Error("first attempt fails");
    });
    start();
    const opts = { key: "save:doc-4", debounceMs: 100 };
    const first = await client.submit("save", { v: 1 }, opts);
    const backingOff = await waitFor(async () => {
      const task = await client.get(first.id);
      return task.status === "queued" && task.attempt === 1 ? task : null;
    });
    const followUp = await client.submit("save", { v: 2 }, opts);
    assert.notEqual(followUp.id, first.id);
    const after = await client.get(first.id);
    assert.deepEqual(after.payload, { v: 1 });
    assert.equal(after.run_at_ms, backingOff.run_at_ms);
    await waitFor(() => runs.length === 3, { timeoutMs: 30_000 });
    assert.deepEqual(
      runs.map((run) => [run.id, run.payload.v]),
      [
        [first.id, 1],
        [first.id, 1],
        [followUp.id, 2],
      ],
    );
    assert.ok(runs[1].at >= backingOff.run_at_ms - dialect.clockSlackMs, "the retry ran before its backoff");
  });

  test("debounced submits from 3 processes to one key make one task", async (t) => {
    const { client, db } = await dialect.open(t);
    await client.connect();
    const startAt = Date.now() + 3_000;
    const submitters = [0, 1, 2].map((tag) =>
      spawnFixture(t, "debounce-submitter.mjs", {
        dialect: dialect.name,
        db,
        key: "save:shared",
        count: 30,
        debounceMs: 60_000,
        startAt,
        tag,
      }),
    );
    const reports = await Promise.all(
      submitters.map((proc) =>
        proc.waitForEvent((e) => e.event === "submitted", { timeoutMs: 60_000, what: "its submits" }),
      ),
    );
    const ids = new Set(reports.flatMap((report) => report.ids));
    assert.equal(ids.size, 1);
    const tasks = await client.list();
    assert.equal(tasks.length, 1);
    assert.equal(tasks[0].status, "queued");
    assert.equal(tasks[0].payload.i, 29);
  });

  test("bad debounce input is refused naming the field and writes nothing", async (t) => {
    const { client } = await dialect.open(t);
    const cases = [
      [{ debounceMs: 100 }, /^debounceMs requires a key/],
      [{ key: "k", debounceMs: 0 }, /^debounceMs must be >= 1, got 0/],
      [{ key: "k", debounceMs: -5 }, /^debounceMs must be >= 1, got -5/],
      [{ key: "k", debounceMs: NaN }, /^debounceMs must be >= 1, got NaN/],
      [{ key: "k", debounceMs: Infinity }, /^debounceMs must be >= 1, got Infinity/],
      [{ key: "k", debounceMs: 1e300 }, /^debounceMs must be a finite number of milliseconds/],
      [{ key: "k", maxDelayMs: 100 }, /^maxDelayMs requires debounceMs/],
      [{ key: "k", debounceMs: 100, maxDelayMs: 50 }, /^maxDelayMs must be >= debounceMs \(100\), got 50/],
      [{ key: "k", debounceMs: 100, maxDelayMs: Infinity }, /^maxDelayMs must be >= 1, got Infinity/],
      [{ key: "k", debounceMs: 100, conflict: "replace" }, /^conflict cannot be replace with debounceMs/],
      [{ key: "k", debounceMs: 100, runAtDelayMs: 10 }, /^runAtDelayMs cannot be combined with debounceMs/],
    ];
    for (const [opts, message] of cases) {
      await assert.rejects(client.submit("save", {}, opts), { message }, JSON.stringify(opts));
    }
    assert.deepEqual(await client.list(), []);
    assert.equal(await client.getByKey("k"), null);
  });
});
