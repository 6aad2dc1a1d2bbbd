// Prometheus metrics (docs/api.md, "Metrics") on every dialect, read through
// a Prometheus text-format parser: `/metrics` of the dashboard and `cairnq
// metrics` show what `stats()` shows of the same database, the queue age and
// the finished counters follow the tasks, a worker's histograms count its
// calls, and `/metrics` answers to the dashboard's token and read-only rules.
import assert from "node:assert/strict";

import parsePrometheus from "parse-prometheus-text-format";

import { createDashboard, createMetrics } from "../index.mjs";
import { claimTask, defer, submitAndFail, submitAndSucceed, waitFor } from "./support/helpers.mjs";
import { forEachDialect, test } from "./support/dialects.mjs";
import { waitAllTerminal } from "./support/worker-helpers.mjs";
import { cli, cliOk, spawnCli } from "./support/cli-helpers.mjs";

/** name → its parsed family (`type`, `metrics`), after checking every family is typed. */
function families(text) {
  const parsed = parsePrometheus(text);
  for (const family of parsed) assert.notEqual(family.type, "UNTYPED", `${family.name} has no TYPE`);
  return Object.fromEntries(parsed.map((f) => [f.name, f]));
}

/** The samples of a family as `{labels…} → number`, keyed by `key(labels)`. */
function samples(family, key) {
  return Object.fromEntries(family.metrics.map((m) => [key(m.labels), Number(m.value)]));
}

/** `cairnq_tasks` as stats() shapes it: queue → status → count. */
function asStats(family) {
  const out = {};
  for (const { labels, value } of family.metrics) (out[labels.queue] ??= {})[labels.status] = Number(value);
  return out;
}

/**
 * A histogram family's series by task name: `{ buckets: {le: n}, sum, count }`.
 * The parser folds the series of a labelled histogram into one, so after its
 * TYPE line is checked, its sample lines are parsed as the samples they are.
 */
function histogram(text, family) {
  assert.match(text, new RegExp(`^# TYPE ${family} histogram$`, "m"));
  const lines = text.split("\n").filter((line) => line.startsWith(`${family}_`));
  const out = {};
  for (const { name, metrics } of parsePrometheus(`${lines.join("\n")}\n`)) {
    for (const { labels, value } of metrics) {
      const series = (out[labels.name] ??= { buckets: {} });
      if (name === `${family}_bucket`) series.buckets[labels.le] = Number(value);
      else if (name === `${family}_sum`) series.sum = Number(value);
      else if (name === `${family}_count`) series.count = Number(value);
      else assert.fail(`unexpected series ${name}`);
    }
  }
  return out;
}

/** A database holding every status, in three queues, and one delayed task; resolves the due queued one. */
async function fillDatabase(client) {
  await submitAndSucceed(client, "a");
  await submitAndFail(client, "b");
  const running = await client.submit("c", {}, { queue: "busy" });
  await claimTask(client.store, running);
  await client.cancel((await client.submit("d", {}, { queue: "busy" })).id);
  const due = await client.submit("e", {}, { queue: "busy" });
  await client.submit("f", {}, { queue: "later", runAtDelayMs: 3_600_000 });
  return due;
}

forEachDialect("metrics", (dialect) => {
  test("/metrics and `cairnq metrics` show what stats() shows, and the queues' ages", async (t) => {
    const { client, db } = await dialect.open(t);
    const due = await fillDatabase(client);
    // Let the due task wait a while, so its age tells.
    await waitFor(() => Date.now() >= due.run_at_ms + 1500, { timeoutMs: 5_000 });
    const dash = createDashboard({ client });
    defer(t, () => dash.close());
    const response = await dash(new Request("http://localhost/metrics"));
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("content-type"), "text/plain; version=0.0.4; charset=utf-8");
    const served = families(await response.text());
    const stats = await client.stats();
    assert.equal(served.cairnq_tasks.type, "GAUGE");
    assert.deepEqual(asStats(served.cairnq_tasks), stats);
    assert.deepEqual(Object.keys(stats).sort(), ["busy", "default", "later"]);

    const ages = samples(served.cairnq_queue_oldest_due_age_seconds, (l) => l.queue);
    assert.equal(ages.default, 0, "nothing queued");
    assert.equal(ages.later, 0, "queued, but not due for an hour");
    const waited = (Date.now() - due.run_at_ms) / 1000;
    assert.ok(
      ages.busy >= 1.5 - dialect.clockSlackMs / 1000 && ages.busy <= waited + 0.1,
      `busy's due task waited ${ages.busy}s of ${waited}s`,
    );

    // The CLI prints the same families from the same renderer, once.
    const printed = families(await cliOk(["metrics", db]));
    assert.deepEqual(asStats(printed.cairnq_tasks), stats);
    assert.deepEqual(Object.keys(printed).sort(), Object.keys(served).sort());
    assert.ok(printed.cairnq_tasks_finished_total.metrics.every((m) => m.value === "0"));
    assert.equal((await cli(["metrics", `${db}-missing`])).code, 3);
  });

  test("the finished counters count what finished since the first scrape, and only rise", async (t) => {
    const { client } = await dialect.open(t);
    const failed = await submitAndFail(client, "x");
    const metrics = createMetrics({ client });
    const finished = async () =>
      samples(families(await metrics.render()).cairnq_tasks_finished_total, (l) => `${l.queue}/${l.status}`);
    assert.deepEqual(await finished(), { "default/succeeded": 0, "default/failed": 0, "default/canceled": 0 });
    await submitAndSucceed(client, "x");
    await submitAndSucceed(client, "x", null, { queue: "other" });
    const after = {
      "default/succeeded": 1,
      "default/failed": 0,
      "default/canceled": 0,
      "other/succeeded": 1,
      "other/failed": 0,
      "other/canceled": 0,
    };
    assert.deepEqual(await finished(), after);
    // A retry shrinks the failed count and a purge the succeeded: neither counts down.
    await client.retry(failed.id);
    await new Promise((resolve) => setTimeout(resolve, 5));
    assert.equal((await client.purge({ olderThanMs: 0, queue: "default", status: "succeeded" })).length, 1);
    assert.deepEqual(await finished(), after);
  });

  test("a worker's queue waits and run times, per task name", async (t) => {
    const { client, db } = await dialect.open(t);
    const handle = dialect.makeWorker(t, db);
    handle.worker.task("quick", () => "ok");
    handle.worker.task("slow", async () => {
      await new Promise((resolve) => setTimeout(resolve, 30));
      return "ok";
    });
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await client.submit("quick", {})).id);
    ids.push((await client.submit("slow", {})).id);
    handle.start();
    await waitAllTerminal(client, ids);
    const dash = createDashboard({ client, workers: [handle.worker] });
    defer(t, () => dash.close());
    // The last run time is recorded when its handler's end is handed back.
    const text = await waitFor(async () => {
      const served = await (await dash(new Request("http://localhost/metrics"))).text();
      const runs = Object.values(histogram(served, "cairnq_task_run_seconds"));
      return runs.reduce((n, series) => n + series.count, 0) === 4 ? served : null;
    });
    assert.equal(families(text).cairnq_task_run_seconds.type, "HISTOGRAM");
    const waits = histogram(text, "cairnq_task_queue_wait_seconds");
    const runs = histogram(text, "cairnq_task_run_seconds");
    assert.deepEqual(Object.keys(waits).sort(), ["quick", "slow"]);
    assert.equal(waits.quick.count, 3);
    assert.equal(waits.quick.buckets["+Inf"], 3);
    assert.equal(waits.slow.count, 1);
    assert.equal(runs.quick.count, 3);
    assert.equal(runs.slow.count, 1);
    assert.ok(runs.slow.sum >= 0.025, `slow ran ${runs.slow.sum}s`);
    assert.equal(runs.slow.buckets["0.01"], 0, "30 ms is above the 10 ms bucket");
    assert.equal(runs.slow.buckets["+Inf"], 1);
    // Without the worker, no histograms.
    assert.equal(families(await createMetrics({ client }).render()).cairnq_task_run_seconds, undefined);
    assert.throws(() => createDashboard({ client, workers: [{}] }), {
      name: "TypeError",
      message: /workers must be an array of Worker instances/,
    });
  });

  test("/metrics answers to the token and read-only rules", async (t) => {
    const { client, db } = await dialect.open(t);
    await client.submit("a", {});
    const dash = createDashboard({ client, token: "s3cret-metrics-token", readOnly: true, basePath: "/admin" });
    defer(t, () => dash.close());
    const scrape = (headers = {}, method = "GET") =>
      dash(new Request("http://localhost/admin/metrics", { method, headers }));
    assert.equal((await scrape()).status, 401);
    assert.equal((await scrape({ authorization: "Bearer wrong" })).status, 401);
    const ok = await scrape({ authorization: "Bearer s3cret-metrics-token" });
    assert.equal(ok.status, 200, "a read-only dashboard serves its metrics");
    assert.equal(asStats(families(await ok.text()).cairnq_tasks).default.queued, 1);
    assert.equal(
      (await scrape({ authorization: "Bearer s3cret-metrics-token", "content-type": "application/json" }, "POST"))
        .status,
      403,
    );

    // `cairnq ui` beyond loopback generates a token, and /metrics needs it.
    const ui = spawnCli(t, ["ui", db, "--host", "0.0.0.0", "--port", "0", "--read-only", "--json"]);
    const started = JSON.parse((await ui.until((s) => s.includes("\n"), "the dashboard's JSON line")).split("\n")[0]);
    assert.ok(started.token, "a token was generated");
    const local = started.url.replace("0.0.0.0", "127.0.0.1");
    assert.equal((await fetch(`${local}metrics`)).status, 401);
    const authorized = await fetch(`${local}metrics`, { headers: { authorization: `Bearer ${started.token}` } });
    assert.equal(authorized.status, 200);
    assert.equal(asStats(families(await authorized.text()).cairnq_tasks).default.queued, 1);
    ui.child.kill("SIGINT");
    assert.equal((await ui.exited).code, 0);
  });
});
