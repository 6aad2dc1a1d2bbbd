// OpenTelemetry traces (docs/api.md, "Tracing"), recorded by OpenTelemetry's
// own SDK (in-memory exporter): a submit's producer span and each attempt's
// consumer span form one trace, across processes; failures carry the
// exception and the error status; with no provider nothing is recorded and
// the task carries no trace context.
import { describe, test as nodeTest, afterEach } from "node:test";
import assert from "node:assert/strict";

import { SpanKind, SpanStatusCode, context, propagation } from "@opentelemetry/api";

import { CairnQ, PostgresStore, SQLiteStore, TaskError, Worker } from "../../index.mjs";
import { forEachDialect, setupWorker } from "../support/dialects.mjs";
import { defer, openClient, spawnFixture, waitFor } from "../support/helpers.mjs";
import { SDKS, pythonSdkProblem, sdkSkipReason, spawnPythonWorker } from "../support/python-sdks.mjs";
import { CALL, makeWorker, waitForStatus } from "../support/worker-helpers.mjs";
import tracing from "../support/tracing.cjs";

const test = (name, fn) => nodeTest(name, { timeout: 120_000 }, fn);

/** @type {ReturnType<typeof tracing.installTracing> | null} */
let installed = null;
afterEach(async () => {
  await installed?.uninstall();
  installed = null;
});
const install = (opts) => (installed = tracing.installTracing(opts));

const TRACEPARENT = /^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/;

/** The messaging attributes every cairnq span carries. */
function assertMessaging(span, { queue, operation, name }) {
  assert.equal(span.attributes["messaging.system"], "cairnq");
  assert.equal(span.attributes["messaging.destination.name"], queue);
  assert.equal(span.attributes["messaging.operation.type"], operation);
  assert.equal(span.attributes["cairnq.task.name"], name);
}

describe("tracing with a registered provider", () => {
  test("a call() across two processes is one trace: producer here, consumer in the worker", async (t) => {
    const { client, dbPath } = openClient(t);
    await client.connect();
    const worker = spawnFixture(t, "traced-worker.cjs", { db: dbPath });
    await worker.waitForEvent((e) => e.event === "serving");
    const tracer = install();

    assert.deepEqual(await client.call("echo", { n: 1 }, CALL), { echoed: { n: 1 } });
    const [producer] = tracer.spans();
    assert.ok(producer, "the submit recorded a span");
    assert.equal(producer.name, "submit default");
    assert.equal(producer.kind, SpanKind.PRODUCER);
    assertMessaging(producer, { queue: "default", operation: "send", name: "echo" });
    assert.equal(producer.attributes["messaging.operation.name"], "submit");
    const taskId = producer.attributes["messaging.message.id"];
    const row = await client.get(taskId);
    assert.match(row.metadata.traceparent, TRACEPARENT);
    assert.equal(row.metadata.traceparent.slice(3, 35), producer.traceId);
    assert.equal(row.metadata.traceparent.slice(36, 52), producer.spanId);

    worker.kill("SIGTERM");
    assert.equal((await worker.waitExit()).code, 0, worker.tail());
    const consumers = worker.events().filter((e) => e.event === "span");
    assert.equal(consumers.length, 1, worker.tail());
    const [consumer] = consumers;
    assert.equal(consumer.name, "process default");
    assert.equal(consumer.kind, SpanKind.CONSUMER);
    assert.equal(consumer.traceId, producer.traceId, "one trace");
    assert.equal(consumer.parentSpanId, producer.spanId, "the consumer is the producer's child");
    assertMessaging(consumer, { queue: "default", operation: "process", name: "echo" });
    assert.equal(consumer.attributes["messaging.operation.name"], "process");
    assert.equal(consumer.attributes["messaging.message.id"], taskId);
    assert.equal(consumer.attributes["cairnq.task.attempt"], 1);
    assert.equal(consumer.attributes["cairnq.task.outcome"], "succeeded");
    assert.equal(consumer.status.code, SpanStatusCode.UNSET);
  });

  test("a retried task has one consumer span per attempt, all in the submit's trace", async (t) => {
    const tracer = install();
    const { client, dbPath } = openClient(t);
    const worker = makeWorker(t, dbPath, { queues: ["q1"], retryBackoffMs: 1, retryBackoffMaxMs: 1 });
    worker.worker.task("flaky", (ctx) => {
      if (ctx.attempt < 3) throw new Error(`attempt ${ctx.attempt} failed`);
      return "third time";
    });
    worker.start();
    const task = await client.submit("flaky", {}, { maxAttempts: 3, queue: "q1" });
    assert.equal((await waitForStatus(client, task.id, ["succeeded", "failed"])).status, "succeeded");
    const spans = await waitFor(() => {
      const all = tracer.spans();
      return all.filter((s) => s.kind === SpanKind.CONSUMER).length === 3 ? all : null;
    });
    const producer = spans.find((s) => s.kind === SpanKind.PRODUCER);
    const attempts = spans
      .filter((s) => s.kind === SpanKind.CONSUMER)
      .sort((a, b) => a.attributes["cairnq.task.attempt"] - b.attributes["cairnq.task.attempt"]);
    assert.deepEqual(
      attempts.map((s) => [s.attributes["cairnq.task.attempt"], s.attributes["cairnq.task.outcome"], s.status.code]),
      [
        [1, "failed", SpanStatusCode.ERROR],
        [2, "failed", SpanStatusCode.ERROR],
        [3, "succeeded", SpanStatusCode.UNSET],
      ],
    );
    for (const span of attempts) {
      assert.equal(span.traceId, producer.traceId);
      assert.equal(span.parentSpanId, producer.spanId);
      assert.equal(span.attributes["messaging.message.id"], task.id);
      assertMessaging(span, { queue: "q1", operation: "process", name: "flaky" });
    }
  });

  test("a failing handler's span has the error status and the exception event", async (t) => {
    const tracer = install();
    const { client, dbPath } = openClient(t);
    const worker = makeWorker(t, dbPath);
    worker.worker.task("boom", () => {
      throw new TaskError("no such invoice", { type: "LookupError", code: "not_found", retryable: false });
    });
    worker.start();
    const task = await client.submit("boom", {});
    assert.equal((await waitForStatus(client, task.id, ["failed"])).status, "failed");
    const span = await waitFor(() => tracer.spans().find((s) => s.kind === SpanKind.CONSUMER));
    assert.equal(span.status.code, SpanStatusCode.ERROR);
    assert.equal(span.status.message, "no such invoice");
    assert.equal(span.attributes["cairnq.task.outcome"], "failed");
    assert.equal(span.attributes["error.type"], "TaskError");
    const exception = span.events.find((e) => e.name === "exception");
    assert.ok(exception, JSON.stringify(span.events));
    assert.equal(exception.attributes["exception.message"], "no such invoice");
    // OpenTelemetry's SDK names an error with a `code` by its code.
    assert.equal(exception.attributes["exception.type"], "not_found");
  });

  test("a child submitted from a handler nests under the handler's span", async (t) => {
    const tracer = install();
    const { client, dbPath } = openClient(t);
    const worker = makeWorker(t, dbPath, { concurrency: 2 });
    worker.worker.task("parent", (ctx) => ctx.call("child", {}, CALL));
    worker.worker.task("child", () => "leaf");
    worker.start();
    assert.equal(await client.call("parent", {}, CALL), "leaf");
    const spans = await waitFor(() => (tracer.spans().length === 4 ? tracer.spans() : null));
    const byName = (kind, name) => spans.find((s) => s.kind === kind && s.attributes["cairnq.task.name"] === name);
    const parentConsumer = byName(SpanKind.CONSUMER, "parent");
    const childProducer = byName(SpanKind.PRODUCER, "child");
    const childConsumer = byName(SpanKind.CONSUMER, "child");
    assert.equal(new Set(spans.map((s) => s.traceId)).size, 1, "one trace");
    assert.equal(childProducer.parentSpanId, parentConsumer.spanId);
    assert.equal(childConsumer.parentSpanId, childProducer.spanId);
  });

  test("a batch call's span links every task's submit", async (t) => {
    const tracer = install();
    const { client, dbPath } = openClient(t);
    const a = await client.submit("many", {});
    const b = await client.submit("many", {});
    const worker = makeWorker(t, dbPath);
    worker.worker.task("many", { batch: 2 }, (contexts) => Object.fromEntries(contexts.map((c) => [c.taskId, true])));
    worker.start();
    await waitForStatus(client, a.id, ["succeeded"]);
    await waitForStatus(client, b.id, ["succeeded"]);
    const spans = await waitFor(() => (tracer.spans().length === 3 ? tracer.spans() : null));
    const batch = spans.find((s) => s.kind === SpanKind.CONSUMER);
    assert.equal(batch.attributes["messaging.batch.message_count"], 2);
    const producers = spans.filter((s) => s.kind === SpanKind.PRODUCER).map((s) => s.spanId);
    assert.deepEqual(new Set(batch.links.map((l) => l.spanId)), new Set(producers));
  });
});

/** Run `fn` with baggage carrying a user's e-mail address active. */
function withEmailBaggage(fn) {
  const baggage = propagation.createBaggage({ "user.email": { value: "ada@example.com" } });
  return context.with(propagation.setBaggage(context.active(), baggage), fn);
}

forEachDialect("tracing children and baggage", (dialect) => {
  test("a callChild child's run is a span of its parent's trace, under the parent's run", async (t) => {
    const tracer = install();
    const { client, handle, worker } = await setupWorker(t, dialect);
    worker.task("parent", async (ctx) => ({ got: await ctx.callChild("kid", "child", {}, { pollMs: 120_000 }) }));
    worker.task("child", () => "leaf");
    handle.start();
    const parent = await client.submit("parent", {});
    assert.deepEqual((await waitForStatus(client, parent.id, ["succeeded"])).result, { got: "leaf" });
    const spans = await waitFor(() => {
      const all = tracer.spans();
      return all.filter((s) => s.kind === SpanKind.CONSUMER).length === 3 ? all : null;
    });
    const producer = spans.find((s) => s.kind === SpanKind.PRODUCER);
    const [submitting, resumed] = spans.filter(
      (s) => s.kind === SpanKind.CONSUMER && s.attributes["cairnq.task.name"] === "parent",
    );
    const child = spans.find((s) => s.kind === SpanKind.CONSUMER && s.attributes["cairnq.task.name"] === "child");
    assert.equal(submitting.attributes["cairnq.task.outcome"], "suspended");
    assert.equal(resumed.attributes["cairnq.task.outcome"], "succeeded");
    assert.equal(new Set(spans.map((s) => s.traceId)).size, 1, "one trace");
    assert.equal(child.parentSpanId, submitting.spanId, "the child runs under the parent's run that submitted it");
    assert.equal(submitting.parentSpanId, producer.spanId);
    const { steps } = await client.steps(parent.id);
    const childRow = await client.get(steps[0].childId);
    assert.equal(childRow.metadata.traceparent, `00-${child.traceId}-${submitting.spanId}-01`);
  });

  test("baggage stays out of task metadata unless the store opts in with propagateBaggage", async (t) => {
    install({ baggage: true });
    const submitChild = async (ctx) => ({
      got: await withEmailBaggage(() => ctx.callChild("kid", "child", {}, { pollMs: 120_000 })),
    });
    const { client, handle, worker } = await setupWorker(t, dialect);
    worker.task("parent", submitChild);
    worker.task("child", () => "leaf");
    handle.start();
    const plain = await withEmailBaggage(() => client.submit("parent", {}, { metadata: { tenant: "a" } }));
    assert.deepEqual(Object.keys(plain.metadata).sort(), ["tenant", "traceparent"]);
    await waitForStatus(client, plain.id, ["succeeded"]);
    const plainChild = await client.get((await client.steps(plain.id)).steps[0].childId);
    assert.deepEqual(Object.keys(plainChild.metadata), ["traceparent"]);

    // Through the factories: CairnQ.sqlite/postgres and Worker.sqlite/postgres.
    const optedIn = await setupWorker(t, dialect, { propagateBaggage: true });
    const optedInClient = dialect.client(optedIn.db, { propagateBaggage: true });
    defer(t, () => optedInClient.close());
    optedIn.worker.task("parent", submitChild);
    optedIn.worker.task("child", () => "leaf");
    optedIn.handle.start();
    const carried = await withEmailBaggage(() => optedInClient.submit("parent", {}));
    assert.equal(carried.metadata.baggage, "user.email=ada%40example.com");
    await waitForStatus(optedInClient, carried.id, ["succeeded"]);
    const carriedChild = await optedInClient.get((await optedInClient.steps(carried.id)).steps[0].childId);
    assert.equal(carriedChild.metadata.baggage, "user.email=ada%40example.com");
  });
});

test("propagateBaggage must be a boolean: refused naming it, by every store and factory", () => {
  const expected = { name: "Error", message: 'propagateBaggage must be a boolean, got "yes"' };
  const refused = [
    () => new SQLiteStore(":memory:", { propagateBaggage: "yes" }),
    () => new PostgresStore("postgres://127.0.0.1:1/none", { propagateBaggage: "yes" }),
    () => CairnQ.sqlite(":memory:", { propagateBaggage: "yes" }),
    () => Worker.sqlite(":memory:", { propagateBaggage: "yes" }),
  ];
  for (const open of refused) assert.throws(open, expected);
});

describe("tracing without a provider", () => {
  test("no span is recorded and the task carries no traceparent", async (t) => {
    const tracer = install();
    await tracer.uninstall();
    const { client, dbPath } = openClient(t);
    const worker = makeWorker(t, dbPath);
    worker.worker.task("plain", () => "done");
    worker.start();
    const task = await client.submit("plain", {}, { metadata: { tenant: "a" } });
    assert.deepEqual(task.metadata, { tenant: "a" });
    assert.equal((await waitForStatus(client, task.id, ["succeeded"])).status, "succeeded");
    assert.deepEqual((await client.get(task.id)).metadata, { tenant: "a" });
    assert.deepEqual(tracer.spans(), []);
  });
});

describe("tracing and the Python SDK", () => {
  const sdk = SDKS.find((one) => one.version === "0.15.1");
  const problem = pythonSdkProblem(sdk);
  // In CI a missing SDK must fail, not skip.
  const skip = problem && !process.env.CI ? sdkSkipReason(sdk, problem) : false;

  test("a Python worker runs a traced task and leaves its traceparent as it was", { skip }, async (t) => {
    if (problem) throw new Error(problem);
    const tracer = install();
    const { client, dbPath } = openClient(t);
    await client.connect();
    const pyWorker = spawnPythonWorker(t, sdk, dbPath, { handlers: ["echo"] });
    await pyWorker.ready();

    const result = await client.call("echo", { n: 2 }, CALL);
    assert.equal(result.by, "python");
    const [producer] = tracer.spans();
    const row = await client.get(result.task_id);
    assert.match(row.metadata.traceparent, TRACEPARENT);
    assert.equal(row.metadata.traceparent, `00-${producer.traceId}-${producer.spanId}-01`);
    await pyWorker.terminate();
  });
});
