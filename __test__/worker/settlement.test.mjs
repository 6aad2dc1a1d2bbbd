// How a handler call ends (docs/api.md, "Errors", "Dispatch and settlement"): a
// returned value, a thrown Error, a TaskError, thrown non-Errors, LostLease,
// and results that are not JSON.

import assert from "node:assert/strict";

import { LostLease, TaskError } from "../../index.mjs";
import { waitFor } from "../support/helpers.mjs";
import { CALL, envelope, makeGate, waitAllTerminal, waitForStatus } from "../support/worker-helpers.mjs";
import { forEachDialect, setupWorker, sqlite, test } from "../support/dialects.mjs";

// ---------------------------------------------------------------------------
forEachDialect("settlement", (dialect) => {
  test("a returned value is the result; undefined and null store no result; falsy values are kept", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect);
    worker
      .task("value", (ctx, payload) => ({ echo: payload, list: [1, "two", null] }))
      .task("asyncValue", async () => {
        await Promise.resolve();
        return 5;
      })
      .task("nothing", () => undefined)
      .task("explicitNull", async () => null)
      .task("zero", () => 0)
      .task("no", () => false)
      .task("empty", () => "");
    handle.start();
    const ids = {};
    for (const name of ["value", "asyncValue", "nothing", "explicitNull", "zero", "no", "empty"]) {
      ids[name] = (await client.submit(name, { n: 1 })).id;
    }
    const rows = Object.fromEntries((await waitAllTerminal(client, Object.values(ids))).map((row) => [row.name, row]));
    const expected = {
      value: { echo: { n: 1 }, list: [1, "two", null] },
      asyncValue: 5,
      nothing: null,
      explicitNull: null,
      zero: 0,
      no: false,
      empty: "",
    };
    for (const [name, result] of Object.entries(expected)) {
      const row = rows[name];
      assert.equal(row.status, "succeeded", name);
      assert.deepEqual(row.result, result, name);
      assert.equal(row.attempt, 1);
      assert.equal(row.error, null);
      assert.equal(row.progress, 1);
      assert.equal(row.lease_until_ms, null);
      assert.ok(row.completed_at_ms != null);
      assert.equal(row.worker_id, worker.id);
    }
  });

  test("a thrown Error is a retryable handler_error typed by the error's name, with backoff", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect, {
      retryBackoffMs: 60_000,
      retryBackoffMaxMs: 60_000,
    });
    class QuotaError extends Error {
      constructor(message) {
        super(message);
        this.name = "QuotaError";
      }
    }
    worker
      .task("sync", () => {
        throw new QuotaError("over quota");
      })
      .task("async", async () => {
        await Promise.resolve();
        throw new TypeError("bad type");
      });
    handle.start();
    const a = await client.submit("sync", {}, { maxAttempts: 3 });
    const b = await client.submit("async", {}, { maxAttempts: 3 });
    for (const [task, expected] of [
      [a, envelope("QuotaError", "handler_error", "over quota", true)],
      [b, envelope("TypeError", "handler_error", "bad type", true)],
    ]) {
      const row = await waitFor(async () => {
        const r = await client.get(task.id);
        return r.attempt === 1 && r.status === "queued" && r.error ? r : null;
      });
      assert.deepEqual(row.error, expected);
      // Postgres stores the envelope as jsonb, which keeps its keys in its own order.
      if (dialect === sqlite)
        assert.deepEqual(Object.keys(row.error), ["type", "code", "message", "retryable", "details"]);
      assert.equal(row.worker_id, null);
      const delay = row.run_at_ms - row.updated_at_ms;
      assert.ok(delay >= 30_000 && delay < 60_000, `backoff ${delay} within [30000, 60000)`);
    }
  });

  test("a TaskError decides its own record: permanent with its code/details, or retryable", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect, {
      retryBackoffMs: 60_000,
      retryBackoffMaxMs: 60_000,
    });
    worker
      .task("permanent", () => {
        throw new TaskError("bad input", { code: "bad_input", details: { field: "email" } });
      })
      .task("typed", () => {
        throw new TaskError("nope", { code: "denied", type: "Validation", retryable: false });
      })
      .task("again", async () => {
        throw new TaskError("try later", { code: "busy", retryable: true });
      })
      .task("bigDetails", () => {
        throw new TaskError("big", { details: { n: 10n } });
      });
    handle.start();
    const permanent = await client.submit("permanent", {}, { maxAttempts: 3 });
    const typed = await client.submit("typed", {}, { maxAttempts: 3 });
    const again = await client.submit("again", {}, { maxAttempts: 3 });
    const big = await client.submit("bigDetails", {}, { maxAttempts: 3 });

    let row = await waitForStatus(client, permanent.id, "failed");
    assert.equal(row.attempt, 1, "not retried although attempts were left");
    assert.deepEqual(row.error, envelope("TaskError", "bad_input", "bad input", false, { field: "email" }));
    assert.ok(row.completed_at_ms != null);
    row = await waitForStatus(client, typed.id, "failed");
    assert.deepEqual(row.error, envelope("Validation", "denied", "nope", false));
    // Unencodable details: the failure is still recorded, details stripped.
    row = await waitForStatus(client, big.id, "failed");
    assert.deepEqual(row.error, envelope("TaskError", "task_error", "big", false));
    row = await waitFor(async () => {
      const r = await client.get(again.id);
      return r.attempt === 1 && r.status === "queued" && r.error ? r : null;
    });
    assert.deepEqual(row.error, envelope("TaskError", "busy", "try later", true));
    assert.ok(row.run_at_ms - row.updated_at_ms >= 30_000);
  });

  test("thrown non-Error values never crash the worker and are recorded as docs/api.md, 'Envelopes' says", async (t) => {
    const reports = [];
    const { client, handle, worker } = await setupWorker(t, dialect, {
      onError: (err, info) => reports.push([err, info]),
    });
    const throwers = {
      aString: () => "plain string",
      anUndefined: () => undefined,
      aNull: () => null,
      aNumber: () => 42,
      aSymbol: () => Symbol("sym"),
      namedObject: () => ({ name: "Weird", message: "object message" }),
      bareObject: () => ({ code: 5 }),
      objectWithMessageOnly: () => ({ message: "only a message" }),
    };
    for (const [name, value] of Object.entries(throwers)) {
      worker.task(name, async () => {
        throw value();
      });
    }
    worker.task("rejectsNumber", () => Promise.reject(7));
    worker.task("fine", () => "still alive");
    handle.start();
    const ids = {};
    for (const name of [...Object.keys(throwers), "rejectsNumber"]) {
      ids[name] = (await client.submit(name, {}, { maxAttempts: 1 })).id;
    }
    const expected = {
      aString: envelope("TaskError", "task_error", "plain string", true),
      anUndefined: envelope("TaskError", "task_error", "undefined", true),
      aNull: envelope("TaskError", "task_error", "null", true),
      aNumber: envelope("TaskError", "task_error", "42", true),
      aSymbol: envelope("TaskError", "task_error", "Symbol(sym)", true),
      namedObject: envelope("Weird", "handler_error", "object message", true),
      bareObject: envelope("Error", "handler_error", "[object Object]", true),
      objectWithMessageOnly: envelope("Error", "handler_error", "only a message", true),
      rejectsNumber: envelope("TaskError", "task_error", "7", true),
    };
    for (const [name, id] of Object.entries(ids)) {
      const row = await waitForStatus(client, id, "failed");
      assert.deepEqual(row.error, expected[name], name);
      assert.equal(row.attempt, 1);
    }
    assert.equal(await client.call("fine", {}, CALL), "still alive");
    assert.deepEqual(reports, [], "task failures go to the database, not to onError");
  });

  test("a handler throwing LostLease records nothing: the task waits for lease expiry", async (t) => {
    const leaseMs = 600;
    const { client, handle, worker } = await setupWorker(t, dialect, { leaseMs, retryBackoffMs: 0, concurrency: 2 });
    const thrown = makeGate();
    worker.task("flaky", (ctx) => {
      if (ctx.attempt === 1) {
        thrown.release();
        throw new LostLease(ctx.taskId);
      }
      return { attempt: ctx.attempt, at: Date.now() };
    });
    const task = await client.submit("flaky", {}, { maxAttempts: 3 });
    handle.start();
    await thrown.promise;
    const afterThrow = await client.get(task.id);
    assert.equal(afterThrow.status, "running", "left running, not failed or re-queued");
    assert.equal(afterThrow.attempt, 1);
    assert.equal(afterThrow.worker_id, worker.id);
    const done = await waitForStatus(client, task.id, "succeeded");
    assert.equal(done.attempt, 2);
    assert.equal(done.error, null, "no failure was ever recorded (error is never cleared)");
    assert.ok(
      done.result.at >= afterThrow.lease_until_ms,
      `redelivered at ${done.result.at}, before the lease ran out at ${afterThrow.lease_until_ms}`,
    );
  });

  test("an unserializable result fails the task permanently with unserializable_result", async (t) => {
    const { client, handle, worker } = await setupWorker(t, dialect);
    const circular = { a: 1 };
    circular.self = circular;
    const engineMessage = (value) => {
      try {
        JSON.stringify(value);
      } catch (err) {
        return err.message;
      }
      throw new Error("expected JSON.stringify to throw");
    };
    const cases = {
      bigint: [() => ({ n: 10n }), engineMessage({ n: 10n })],
      nan: [() => NaN, "non-finite number NaN is not JSON-serializable"],
      nestedInfinity: [() => ({ x: [1, { y: -Infinity }] }), "non-finite number -Infinity is not JSON-serializable"],
      arrayHole: [() => [1, undefined], "undefined inside an array is not JSON-serializable"],
      aFunction: [() => function f() {}, "value of type function is not JSON-serializable"],
      circular: [() => circular, engineMessage(circular)],
    };
    for (const [name, [make]] of Object.entries(cases)) worker.task(name, make);
    handle.start();
    for (const [name, [, detail]] of Object.entries(cases)) {
      const task = await client.submit(name, {}, { maxAttempts: 3 });
      const row = await waitForStatus(client, task.id, "failed");
      assert.equal(row.attempt, 1, `${name}: permanent, not retried`);
      assert.equal(row.result, null);
      assert.deepEqual(
        row.error,
        envelope(
          "SerializationError",
          "unserializable_result",
          `handler result is not JSON-serializable: ${detail}`,
          false,
        ),
        name,
      );
    }
  });
});
