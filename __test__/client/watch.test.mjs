// watch (docs/api.md, "Watch"): notify-accelerated polling. A signal means
// "read again now": poll ticks on every dialect, and on Postgres a signal per
// LISTEN notification — on every dialect.

import assert from "node:assert/strict";

import { DEFAULT_WATCH_POLL_MS } from "../../index.mjs";
import { claimTask, makeDbPath, runProcess, submitAndSucceed, waitFor } from "../support/helpers.mjs";
import { forEachDialect, postgres, sqlite, test } from "../support/dialects.mjs";

/** A subscription recording its signals; unsubscribed when the test ends. */
function record(t, client, opts, { throwing = false } = {}) {
  const signals = [];
  const stop = client.watch(opts, (signal) => {
    signals.push(signal);
    if (throwing) throw new Error("a consumer's own failure");
  });
  t.after(stop);
  return { signals, stop, polls: () => signals.filter((s) => s.reason === "poll").length };
}

// ---------------------------------------------------------------------------
forEachDialect("watch", (dialect) => {
  test("the poll timer ticks every pollMs, a throwing consumer keeps its ticks, and unsubscribe ends delivery", async (t) => {
    const { client } = await dialect.open(t);
    await client.connect();
    const thrower = record(t, client, { pollMs: 10 }, { throwing: true });
    const first = record(t, client, { pollMs: 10 });
    await waitFor(() => thrower.polls() >= 3 && first.polls() >= 3, { timeoutMs: 20_000, message: "no poll ticks" });
    assert.deepEqual(
      first.signals.find((s) => s.reason === "poll"),
      { reason: "poll" },
    );

    first.stop();
    const seen = first.signals.length;
    // Another subscription keeps ticking meanwhile; the stopped one hears nothing more.
    const witness = record(t, client, { pollMs: 10 });
    await waitFor(() => witness.polls() >= 5, { timeoutMs: 20_000, message: "the witness never ticked" });
    assert.equal(first.signals.length, seen);
    first.stop();
  });

  test("DEFAULT_WATCH_POLL_MS is 2000", () => {
    assert.equal(DEFAULT_WATCH_POLL_MS, 2000);
  });
});

forEachDialect("watch push", (dialect) => {
  if (dialect === sqlite) {
    test("SQLite has no push: only poll signals", async (t) => {
      const { client } = await dialect.open(t);
      const watched = record(t, client, { pollMs: 10 });
      await submitAndSucceed(client, "job");
      await waitFor(() => watched.polls() >= 3, { timeoutMs: 20_000 });
      assert.deepEqual(new Set(watched.signals.map((s) => s.reason)), new Set(["poll"]));
    });
    return;
  }
  assert.equal(dialect, postgres);

  test("queued and done notifications arrive as signals; queues filters the queued ones only", async (t) => {
    const { client } = await dialect.open(t);
    await client.connect();
    const all = record(t, client, { pollMs: 60_000 });
    const onlyA = record(t, client, { queues: ["a"], pollMs: 60_000 });
    // LISTEN starts in the background after connect: resubmit until it delivers.
    await waitFor(
      async () => {
        await client.submit("probe", {}, { queue: "warmup" });
        return all.signals.some((s) => s.reason === "queued" && s.queue === "warmup");
      },
      { timeoutMs: 20_000, intervalMs: 100, message: "no queued signal: LISTEN never came up" },
    );
    const inB = await client.submit("job", {}, { queue: "b" });
    await client.submit("job", {}, { queue: "a" });
    await claimTask(client.store, inB);
    await client.store.complete({ taskId: inB.id, workerId: "w1", result: null });
    await waitFor(
      () =>
        all.signals.some((s) => s.reason === "done" && s.taskId === inB.id) &&
        onlyA.signals.some((s) => s.reason === "done" && s.taskId === inB.id) &&
        onlyA.signals.some((s) => s.reason === "queued" && s.queue === "a"),
      { timeoutMs: 20_000, message: "push signals missing" },
    );
    assert.ok(all.signals.some((s) => s.reason === "queued" && s.queue === "b"));
    assert.deepEqual(
      onlyA.signals.filter((s) => s.reason === "queued").map((s) => s.queue),
      ["a"],
      "queued signals of other queues are filtered out",
    );
    assert.deepEqual(
      all.signals.find((s) => s.reason === "done"),
      { reason: "done", taskId: inB.id },
    );
  });
});

// A child process of its own: a forgotten subscription must not keep it alive.
test("an open watch does not keep the process alive", async (t) => {
  const entry = JSON.stringify(new URL("../../index.mjs", import.meta.url).href);
  const dbPath = JSON.stringify(makeDbPath(t));
  const script = `
    const { CairnQ } = await import(${entry});
    const client = CairnQ.sqlite(${dbPath});
    await client.connect();
    client.watch({ pollMs: 5 }, () => {});
    console.log("subscribed");
  `;
  const out = await runProcess(process.execPath, ["--input-type=module", "-e", script], { timeoutMs: 20_000 });
  assert.equal(out.code, 0, out.stderr);
  assert.equal(out.stdout.trim(), "subscribed");
});
