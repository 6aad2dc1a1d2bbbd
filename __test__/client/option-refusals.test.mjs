// One way across the JS/Rust line (the core's `input::Options`): every API
// that takes options gets the same bad values (NaN, ±Infinity, a string where
// a number goes, a number where a string goes, null where a value is
// required, an unknown key) and answers each with one wording, a refusal
// naming the field, and writes nothing. On both dialects.
import assert from "node:assert/strict";

import { QueueDepthGate, RetentionSweeper } from "../../index.mjs";
import { forEachDialect, setupWorker, test } from "../support/dialects.mjs";

/** The refusals every option path shares, by the kind of the field. */
const NUMBER_REFUSALS = (field, rule) => [
  [NaN, new RegExp(`^${field} must be ${rule}, got NaN$`)],
  [Infinity, new RegExp(`^${field} must be ${rule}, got Infinity$`)],
  [-Infinity, new RegExp(`^${field} must be ${rule}, got -Infinity$`)],
  ["3", new RegExp(`^${field} must be a number, got "3"$`)],
];
const TEXT_REFUSALS = (field) => [
  [NaN, new RegExp(`^${field} must be a string, got NaN$`)],
  [Infinity, new RegExp(`^${field} must be a string, got Infinity$`)],
  [5, new RegExp(`^${field} must be a string, got 5$`)],
];

/** `[field, bad value, refusal]` for each submit option the core reads. */
const SUBMIT_CASES = [
  ...NUMBER_REFUSALS("maxAttempts", ">= 1").map(([v, r]) => ["maxAttempts", v, r]),
  ...NUMBER_REFUSALS("priority", "a number from -2147483648 to 2147483647").map(([v, r]) => ["priority", v, r]),
  ...NUMBER_REFUSALS("runAtDelayMs", ">= 0")
    .filter(([v]) => v !== Infinity)
    .map(([v, r]) => ["runAtDelayMs", v, r]),
  [
    "runAtDelayMs",
    Infinity,
    /^runAtDelayMs must be a finite number of milliseconds, at most 1e15 \(about 31,700 years\), got Infinity$/,
  ],
  ...TEXT_REFUSALS("queue").map(([v, r]) => ["queue", v, r]),
  ...TEXT_REFUSALS("group").map(([v, r]) => ["group", v, r]),
  ...TEXT_REFUSALS("key").map(([v, r]) => ["key", v, r]),
  ["debounceMs", "5", /^debounceMs must be a number, got "5"$/],
  ["queueName", "q", /^unknown key "queueName" in submit \(known: name, payload, queue, key, conflict, /],
];

forEachDialect("option refusals", (dialect) => {
  test("submit and call refuse each bad option naming it, and write nothing", async (t) => {
    const { client } = await dialect.open(t);
    for (const [field, value, refusal] of SUBMIT_CASES) {
      const opts = { [field]: value };
      await assert.rejects(client.submit("t", {}, opts), { message: refusal }, `submit ${field}: ${String(value)}`);
      await assert.rejects(
        client.call("t", {}, { ...opts, waitTimeoutMs: 1 }),
        { message: refusal },
        `call ${field}: ${String(value)}`,
      );
    }
    // null for an optional option is absent, as undefined is.
    const plain = await client.submit("t", {}, { queue: null, maxAttempts: null, group: null, priority: null });
    assert.equal(plain.queue, "default");
    assert.equal(plain.max_attempts, 3);
    assert.deepEqual(
      (await client.list()).map((task) => task.id),
      [plain.id],
    );
  });

  test("ctx.submit refuses as submit does, and writes nothing", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect);
    const refusals = [];
    worker.task("parent", async (ctx) => {
      for (const [field, value] of SUBMIT_CASES) {
        refusals.push(
          await ctx.submit("child", {}, { [field]: value }).then(
            () => "written",
            (err) => err.message,
          ),
        );
      }
    });
    const parent = await client.submit("parent", {});
    handle.start();
    const done = await client.wait(parent.id, { timeoutMs: 20_000 });
    assert.equal(done.status, "succeeded");
    SUBMIT_CASES.forEach(([field, value, refusal], i) =>
      assert.match(refusals[i], refusal, `ctx.submit ${field}: ${String(value)}`),
    );
    assert.deepEqual(
      (await client.list()).map((task) => task.name),
      ["parent"],
    );
  });

  test("schedule() refuses each bad option naming it, and stores nothing", async (t) => {
    const { client } = await dialect.open(t);
    const base = { task: "t", cron: "* * * * *" };
    const cases = [
      ...NUMBER_REFUSALS("maxAttempts", ">= 1").map(([v, r]) => ["maxAttempts", v, r]),
      ...NUMBER_REFUSALS("priority", "a number from -2147483648 to 2147483647").map(([v, r]) => ["priority", v, r]),
      ...TEXT_REFUSALS("queue").map(([v, r]) => ["queue", v, r]),
      ...TEXT_REFUSALS("group").map(([v, r]) => ["group", v, r]),
      ...TEXT_REFUSALS("tz").map(([v, r]) => ["tz", v, r]),
      ["cron", null, /^cron or every must be given, exactly one, got neither$/],
      ["catchup", "all", /^unknown key "catchup" in schedule options \(known: name, task, cron, /],
    ];
    for (const [field, value, refusal] of cases) {
      await assert.rejects(
        client.schedule("s", { ...base, [field]: value }),
        { message: refusal },
        `schedule ${field}: ${String(value)}`,
      );
    }
    assert.deepEqual(await client.schedules(), []);
    // null for an optional option is absent, as undefined is.
    const stored = await client.schedule("s", { ...base, maxAttempts: null, queue: null });
    assert.equal(stored.maxAttempts, 3);
    assert.equal(stored.queue, "default");
  });

  test("worker.task() refuses bad flow options naming them, and declares nothing", async (t) => {
    const { worker } = await setupWorker(t, dialect);
    const cases = [
      [{ rateLimit: { max: NaN, perMs: 10 } }, /^rateLimit\.max must be an integer >= 1, got NaN$/],
      [{ rateLimit: { max: Infinity, perMs: 10 } }, /^rateLimit\.max must be an integer >= 1, got Infinity$/],
      [{ rateLimit: { max: 1, perMs: -Infinity } }, /^rateLimit\.perMs must be >= 1, got -Infinity$/],
      [{ rateLimit: { max: "3", perMs: 10 } }, /^rateLimit\.max must be a number, got "3"$/],
      [{ rateLimit: { max: 1, perMs: 10, perGroup: 1 } }, /^rateLimit\.perGroup must be a boolean, got 1$/],
      [{ rateLimit: { max: null, perMs: 10 } }, /^rateLimit\.max must be a number, got null$/],
      [
        { rateLimit: { max: 1, perMs: 10, burst: 2 } },
        /^unknown key "burst" in rateLimit \(known: key, max, perMs, perGroup\)$/,
      ],
      [{ groupConcurrency: NaN }, /^groupConcurrency must be an integer >= 1, got NaN$/],
      [{ groupConcurrency: "2" }, /^groupConcurrency must be a number, got "2"$/],
    ];
    for (const [opts, refusal] of cases) {
      assert.throws(() => worker.task("t", opts, async () => {}), { message: refusal }, JSON.stringify(opts));
    }
  });

  test("reads, waits, claims, the gate and the sweeper refuse bad options alike, and write nothing", async (t) => {
    const { client } = await dialect.open(t);
    const store = client.store;
    const task = await client.submit("t", {});
    const rejections = [
      [() => client.wait(task.id, { timeoutMs: "5" }), /^timeoutMs must be a number, got "5"$/],
      [() => client.wait(task.id, { maxPollMs: "x", timeoutMs: 1 }), /^maxPollMs must be a number, got "x"$/],
      [
        () => client.wait(task.id, { timeout: 5 }),
        /^unknown key "timeout" in wait options \(known: timeoutMs, pollMs, maxPollMs\)$/,
      ],
      [() => client.list({ limit: "5" }), /^limit must be a number, got "5"$/],
      [() => client.list({ queue: 5 }), /^queue must be a string, got 5$/],
      [() => client.list({ bodies: "no" }), /^bodies must be a boolean, got "no"$/],
      [() => client.list({ state: "queued" }), /^unknown key "state" in list options /],
      [() => client.purge({ olderThanMs: Infinity }), /^olderThanMs must be >= 0, got Infinity$/],
      [() => client.purge({ olderThanMs: NaN }), /^olderThanMs must be >= 0, got NaN$/],
      [() => client.purge({ status: 5 }), /^status must be a string, got 5$/],
      [() => client.purge({ older: 1 }), /^unknown key "older" in purge options /],
      [
        () => store.claim({ queues: ["default"], workerId: "w", leaseMs: NaN }),
        /^leaseMs must be a finite number of milliseconds, .*got NaN$/,
      ],
      [() => store.claim({ queues: ["default"], workerId: null }), /^workerId must be a string, got null$/],
      [() => store.claim({ queues: [5], workerId: "w" }), /^queues\[0\] must be a string, got 5$/],
      [() => store.claim({ queues: ["default"], workerId: "w", lease: 5 }), /^unknown key "lease" in claim options /],
    ];
    for (const [call, refusal] of rejections) {
      await assert.rejects(Promise.resolve().then(call), { message: refusal }, String(call));
    }
    const throws = [
      [
        () => new QueueDepthGate(store, { maxQueueDepth: NaN }),
        /^maxQueueDepth for \* must be an integer >= 1, got NaN$/,
      ],
      [() => new QueueDepthGate(store, { maxQueueDepth: "5" }), /^maxQueueDepth must be a number, got "5"$/],
      [
        () => new QueueDepthGate(store, { maxQueueDepth: { q: "5" } }),
        /^maxQueueDepth\["q"\] must be a number, got "5"$/,
      ],
      [
        () => new QueueDepthGate(store, { maxQueueDepth: 5, maxDepth: 1 }),
        /^unknown key "maxDepth" in backpressure options /,
      ],
      [() => new RetentionSweeper(store, { olderThanMs: NaN }), /^retention\.olderThanMs must be >= 0, got NaN$/],
      [() => new RetentionSweeper(store, { olderThanMs: "1d" }), /^retention\.olderThanMs must be a number, got "1d"$/],
      [
        () => new RetentionSweeper(store, { olderThanMs: 1, intervalMs: Infinity }),
        /^retention\.intervalMs must be >= 1, got Infinity$/,
      ],
      [
        () => new RetentionSweeper(store, { olderThanMs: [{ status: 5 }] }),
        /^retention\.olderThanMs\[0\]\.status must be a string, got 5$/,
      ],
      [() => new RetentionSweeper(store, { olderThanMs: 1, every: 5 }), /^unknown key "every" in retention options /],
    ];
    for (const [call, refusal] of throws) assert.throws(call, { message: refusal }, String(call));
    assert.deepEqual(
      (await client.list()).map((row) => [row.id, row.status]),
      [[task.id, "queued"]],
    );
  });

  test("worker options refuse bad values naming them", async (t) => {
    const { db } = await dialect.open(t);
    const cases = [
      [{ leaseMs: NaN }, /^leaseMs must be a finite number of milliseconds, .*got NaN$/],
      [{ leaseMs: "5" }, /^leaseMs must be a number, got "5"$/],
      [{ retryBackoffMs: Infinity }, /^retryBackoffMs must be a finite number of milliseconds, .*got Infinity$/],
      [{ resources: { gpu: "1" } }, /^resources\["gpu"\] must be a number, got "1"$/],
      [{ maxQueueDepth: -Infinity }, /^maxQueueDepth for \* must be an integer >= 1, got -Infinity$/],
      [{ pollInterval: 5 }, /^unknown key "pollInterval" in worker options /],
    ];
    for (const [opts, refusal] of cases) {
      assert.throws(() => dialect.worker(db, opts), { message: refusal }, JSON.stringify(opts));
    }
  });
});
