// OpenTelemetry metrics of handler calls (docs/api.md, "OpenTelemetry
// metrics"), read through OpenTelemetry's own SDK: with a meter provider
// registered, each call's duration, each task handed over and its queue wait
// are recorded with the messaging attributes (and the call's outcome).
import { test as nodeTest } from "node:test";
import assert from "node:assert/strict";

import { metrics } from "@opentelemetry/api";
import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";

import { defer, openClient } from "../support/helpers.mjs";
import { makeWorker, waitForStatus } from "../support/worker-helpers.mjs";

const test = (name, fn) => nodeTest(name, { timeout: 120_000 }, fn);

/** A reader collected on demand. */
class CollectingReader extends MetricReader {
  async onForceFlush() {}
  async onShutdown() {}
}

test("handler calls record their duration, and tasks their count and queue wait", async (t) => {
  const reader = new CollectingReader();
  const provider = new MeterProvider({ readers: [reader] });
  metrics.setGlobalMeterProvider(provider);
  defer(t, async () => {
    metrics.disable();
    await provider.shutdown();
  });
  const { client, dbPath } = openClient(t);
  const worker = makeWorker(t, dbPath, { queues: ["jobs"] });
  worker.worker.task("ok", () => "fine");
  worker.worker.task("bad", () => {
    throw new TypeError("no good");
  });
  const ids = [];
  for (const name of ["ok", "ok", "bad"])
    ids.push((await client.submit(name, {}, { queue: "jobs", maxAttempts: 1 })).id);
  // Every task waits at least this long before a handler takes it.
  await new Promise((resolve) => setTimeout(resolve, 300));
  worker.start();
  for (const id of ids) await waitForStatus(client, id, ["succeeded", "failed"]);

  const { resourceMetrics } = await reader.collect();
  const scope = resourceMetrics.scopeMetrics.find((s) => s.scope.name === "cairnq");
  assert.ok(scope, "cairnq's meter recorded");
  const metric = (name) => scope.metrics.find((m) => m.descriptor.name === name);
  const duration = metric("messaging.process.duration");
  assert.equal(duration.descriptor.unit, "s");
  const byName = (points) => Object.fromEntries(points.map((p) => [p.attributes["cairnq.task.name"], p]));
  const durations = byName(duration.dataPoints);
  assert.equal(durations.ok.value.count, 2);
  assert.equal(durations.bad.value.count, 1);
  for (const point of Object.values(durations)) {
    assert.equal(point.attributes["messaging.system"], "cairnq");
    assert.equal(point.attributes["messaging.destination.name"], "jobs");
    assert.equal(point.attributes["messaging.operation.type"], "process");
  }
  assert.equal(durations.ok.attributes["cairnq.task.outcome"], "succeeded");
  assert.equal(durations.ok.attributes["error.type"], undefined);
  assert.equal(durations.bad.attributes["cairnq.task.outcome"], "failed");
  assert.equal(durations.bad.attributes["error.type"], "TypeError");
  const consumed = byName(metric("messaging.client.consumed.messages").dataPoints);
  assert.equal(consumed.ok.value, 2);
  assert.equal(consumed.bad.value, 1);
  const waits = byName(metric("cairnq.task.queue_wait.duration").dataPoints);
  assert.equal(waits.ok.value.count, 2);
  assert.equal(waits.bad.value.count, 1);
  assert.ok(
    waits.ok.value.min >= 0.3 && waits.ok.value.max < 60,
    `waited ${waits.ok.value.min}–${waits.ok.value.max}s`,
  );
});
