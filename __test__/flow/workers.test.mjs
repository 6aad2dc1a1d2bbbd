// Flow control held by real worker processes (docs/api.md, "Flow control"):
// three workers share one rate limit (of one name, or of two names sharing a
// key) and one group concurrency through the database alone — on every
// dialect.
import assert from "node:assert/strict";

import { forEachDialect, test } from "../support/dialects.mjs";
import { spawnFixture, waitFor } from "../support/helpers.mjs";

/** Three worker processes serving `name` (a name or a list) with `options`, once all report serving. */
async function startWorkers(t, dialect, db, name, options, extra = {}) {
  const names = Array.isArray(name) ? name : [name];
  const workers = [0, 1, 2].map(() =>
    spawnFixture(t, "flow-worker.mjs", { dialect: dialect.name, db, names, options, ...extra }),
  );
  for (const worker of workers) await worker.waitForEvent((e) => e.event === "serving", { what: "serving" });
  return workers;
}

const events = (workers, kind) => workers.flatMap((w) => w.events()).filter((e) => e.event === kind);

/** The most claims (epoch ms) any window of `perMs` holds. */
function busiestWindow(claims, perMs) {
  const sorted = [...claims].sort((a, b) => a - b);
  let busiest = 0;
  for (let i = 0; i < sorted.length; i += 1) {
    busiest = Math.max(busiest, sorted.slice(i).filter((at) => at < sorted[i] + perMs).length);
  }
  return busiest;
}

/**
 * Wait until `count` tasks succeeded and the workers' reports of their
 * handlers' ends (written before each success commits, read from the pipes
 * after it) have all arrived; a timeout names the workers' output.
 */
async function allSucceeded(client, count, workers, timeoutMs) {
  try {
    await waitFor(async () => (await client.stats()).default?.succeeded === count, { timeoutMs, intervalMs: 50 });
    await waitFor(() => new Set(events(workers, "ended").map((e) => e.id)).size >= count, { timeoutMs });
  } catch (err) {
    throw new Error(`${err.message}; ${workers.map((w) => w.tail()).join("\n")}`, { cause: err });
  }
}

forEachDialect("flow control across three worker processes", (dialect) => {
  test("rateLimit {max: 20, perMs: 1000}: no second holds more than 20 starts; 200 tasks finish within 12 s", async (t) => {
    const { client, db } = await dialect.open(t);
    const workers = await startWorkers(
      t,
      dialect,
      db,
      "summarize",
      { rateLimit: { max: 20, perMs: 1000 } },
      { concurrency: 5 },
    );
    const began = Date.now();
    for (let i = 0; i < 200; i += 1) await client.submit("summarize", { i });
    await allSucceeded(client, 200, workers, 30_000);
    const tookMs = Date.now() - began;
    t.diagnostic(`200 tasks in ${tookMs} ms`);
    assert.ok(tookMs < 12_000, `200 tasks took ${tookMs} ms`);

    const started = events(workers, "started");
    assert.equal(new Set(started.map((e) => e.id)).size, 200);
    // The limit holds the starts the database records (a task's claim); a
    // handler's own clock reading trails its claim by its process's dispatch,
    // which no database can bound, so the windows are counted on the claims.
    const claims = started.map((e) => e.claimedAt);
    const busiest = busiestWindow(claims, 1000);
    t.diagnostic(`busiest second: ${busiest} starts`);
    assert.ok(busiest <= 20, `a second held ${busiest} starts: ${claims.join(",")}`);
    // Every process started some: the limit is shared, not per process.
    for (const worker of workers)
      assert.ok(
        worker.events().some((e) => e.event === "started"),
        worker.tail(),
      );
    for (const worker of workers) worker.kill("SIGTERM");
  });

  test("rateLimit {key, max: 15, perMs: 1000} on two names: no second holds more than 15 starts of both", async (t) => {
    const { client, db } = await dialect.open(t);
    const workers = await startWorkers(
      t,
      dialect,
      db,
      ["chat", "embed"],
      { rateLimit: { key: "openai", max: 15, perMs: 1000 } },
      { concurrency: 5 },
    );
    // Each name alone could start 15 a second: only one budget keeps both to 15.
    for (let i = 0; i < 45; i += 1) {
      await client.submit("chat", { i });
      await client.submit("embed", { i });
    }
    await allSucceeded(client, 90, workers, 40_000);
    const started = events(workers, "started");
    assert.equal(new Set(started.map((e) => e.id)).size, 90);
    const busiest = busiestWindow(
      started.map((e) => e.claimedAt),
      1000,
    );
    t.diagnostic(`busiest second: ${busiest} starts of both names`);
    assert.ok(busiest <= 15, `a second held ${busiest} starts of both names`);
    for (const name of ["chat", "embed"]) {
      assert.ok(
        started.some((e) => e.name === name),
        name,
      );
    }
    for (const worker of workers)
      assert.ok(
        worker.events().some((e) => e.event === "started"),
        worker.tail(),
      );
    for (const worker of workers) worker.kill("SIGTERM");
  });

  test("groupConcurrency: 1 over 50 groups x 10 tasks: never two of a group at once, and no group waits behind a busy one", async (t) => {
    const { client, db } = await dialect.open(t);
    const concurrency = 4;
    const workers = await startWorkers(
      t,
      dialect,
      db,
      "export",
      { groupConcurrency: 1 },
      { concurrency, handlerMs: 50 },
    );
    // Group by group, all in one commit: with head-of-line blocking, group 0
    // (every task at the head of the queue) would hold every worker back.
    const submits = [];
    for (let g = 0; g < 50; g += 1) {
      for (let i = 0; i < 10; i += 1) submits.push(client.submit("export", { g, i }, { group: `customer:${g}` }));
    }
    await Promise.all(submits);
    await allSucceeded(client, 500, workers, 50_000);

    const started = events(workers, "started");
    const ended = new Map(events(workers, "ended").map((e) => [e.id, e.at]));
    assert.equal(new Set(started.map((e) => e.id)).size, 500);
    const runs = new Map();
    for (const start of started) {
      assert.ok(ended.has(start.id), `task ${start.id} never ended`);
      const group = runs.get(start.group) ?? [];
      group.push([start.at, ended.get(start.id), start.pid]);
      runs.set(start.group, group);
    }
    assert.equal(runs.size, 50);
    for (const [group, intervals] of runs) {
      assert.equal(intervals.length, 10, group);
      intervals.sort((a, b) => a[0] - b[0]);
      for (let i = 1; i < intervals.length; i += 1) {
        assert.ok(intervals[i][0] >= intervals[i - 1][1], `${group} ran two at once: ${JSON.stringify(intervals)}`);
      }
    }
    // Past a busy group: every slot of every process busy at once (behind
    // a blocking head, one task would run at a time).
    const slots = 3 * concurrency;
    const edges = [...started.map((e) => [e.at, 1]), ...started.map((e) => [ended.get(e.id), -1])].sort(
      (a, b) => a[0] - b[0] || a[1] - b[1],
    );
    let running = 0;
    let peak = 0;
    for (const [, step] of edges) {
      running += step;
      peak = Math.max(peak, running);
    }
    t.diagnostic(`peak running: ${peak} of ${slots} slots`);
    assert.equal(peak, slots);
    for (const worker of workers) worker.kill("SIGTERM");
  });
});
