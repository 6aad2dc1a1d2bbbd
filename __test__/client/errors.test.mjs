// The error classes and the public entry (docs/api.md, "Errors", "Exports"):
// fields, messages, inheritance, the CommonJS entry and the status predicates.
// No database.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";

import * as esm from "../../index.mjs";
import {
  AlreadyExists,
  CairnQError,
  EventLoopBlocked,
  ListenUnavailable,
  LostLease,
  ProtocolVersionMismatch,
  QueueFull,
  STATUSES,
  SchemaMismatch,
  SerializationError,
  TaskCanceled,
  TaskError,
  TaskFailed,
  TaskTimeout,
} from "../../index.mjs";
import { ENVELOPE } from "../support/helpers.mjs";

// ---------------------------------------------------------------------------
describe("error classes", () => {
  const classes = {
    CairnQError,
    AlreadyExists,
    QueueFull,
    TaskTimeout,
    TaskFailed,
    TaskCanceled,
    TaskError,
    LostLease,
    EventLoopBlocked,
    ProtocolVersionMismatch,
    SerializationError,
    SchemaMismatch: esm.SchemaMismatch,
    UnsupportedBackend: esm.UnsupportedBackend,
  };

  test("every class is exported, extends CairnQError and Error, and names itself", () => {
    for (const [name, Cls] of Object.entries(classes)) {
      assert.equal(typeof Cls, "function", `${name} exported`);
      assert.equal(esm[name], Cls);
      const instance = Object.create(Cls.prototype);
      assert.ok(instance instanceof CairnQError, `${name} extends CairnQError`);
      assert.ok(instance instanceof Error, `${name} extends Error`);
    }
    const samples = {
      CairnQError: new CairnQError("m"),
      AlreadyExists: new AlreadyExists("k"),
      QueueFull: new QueueFull("q", 1, 2),
      TaskTimeout: new TaskTimeout("t"),
      TaskFailed: new TaskFailed({}),
      TaskCanceled: new TaskCanceled("t"),
      TaskError: new TaskError("m"),
      LostLease: new LostLease("t"),
      EventLoopBlocked: new EventLoopBlocked(1, 2, 3),
      ProtocolVersionMismatch: new ProtocolVersionMismatch("m"),
      SerializationError: new SerializationError("m"),
      SchemaMismatch: new SchemaMismatch("m"),
      UnsupportedBackend: new esm.UnsupportedBackend("m"),
    };
    for (const [name, err] of Object.entries(samples)) {
      assert.equal(err.name, name);
      assert.ok(err instanceof classes[name]);
      assert.ok(err instanceof CairnQError);
      assert.ok(err instanceof Error);
      assert.equal(typeof err.stack, "string");
    }
  });

  test("constructors set the documented fields and messages", () => {
    assert.equal(new CairnQError("plain").message, "plain");
    assert.equal(new CairnQError().message, "");

    const exists = new AlreadyExists("order-1");
    assert.equal(exists.key, "order-1");
    assert.equal(exists.message, "task with key order-1 already exists");

    const full = new QueueFull("emails", 100, 2500);
    assert.equal(full.queue, "emails");
    assert.equal(full.maxDepth, 100);
    assert.equal(full.waitedMs, 2500);
    assert.equal(
      full.message,
      "queue emails still holds 100 or more queued tasks after 2500ms; refusing to enqueue more",
    );

    const canceled = new TaskCanceled("task_1");
    assert.equal(canceled.taskId, "task_1");
    assert.equal(canceled.message, "task task_1 was canceled");

    const lost = new LostLease("task_2");
    assert.equal(lost.taskId, "task_2");
    assert.equal(lost.message, "lost lease on task task_2");

    const blocked = new EventLoopBlocked(700, 100, 300);
    assert.equal(blocked.lateMs, 700);
    assert.equal(blocked.intervalMs, 100);
    assert.equal(blocked.leaseMs, 300);
    assert.equal(
      blocked.message,
      "heartbeat beat was 700ms late (interval 100ms, lease 300ms): the event loop was blocked long enough to miss a beat, " +
        "so this worker's leases are at risk. Usually synchronous work in a handler (move it off the loop); otherwise " +
        "the worker is oversubscribed for its leaseMs.",
    );
    assert.match(blocked.message, /event loop was blocked/);

    assert.equal(new SchemaMismatch("other schema").message, "other schema");
    assert.equal(new esm.UnsupportedBackend("no tx").message, "no tx");

    assert.equal(
      new ProtocolVersionMismatch("storage protocol_version=9, SDK supports 1").message,
      "storage protocol_version=9, SDK supports 1",
    );
    assert.equal(new SerializationError("nope").message, "nope");
  });

  test("TaskTimeout messages and fields (docs/api.md, 'Errors')", () => {
    const none = new TaskTimeout("t1", { timeoutMs: 5, task: null });
    assert.equal(
      none.message,
      "task t1 did not finish within 5ms: task not found — wrong database file, or already purged?",
    );
    assert.equal(none.taskId, "t1");
    assert.equal(none.task, null);
    assert.equal(none.key, null);

    assert.equal(new TaskTimeout("t1").message, "task t1 did not finish in time");
    assert.equal(new TaskTimeout("t1").task, null);
    const keyed = new TaskTimeout("k", { key: "k" });
    assert.equal(keyed.message, "key k did not finish in time");
    assert.equal(keyed.key, "k");
    assert.equal(
      new TaskTimeout("k", { key: "k", timeoutMs: 10 }).message,
      "key k did not finish within 10ms: no task under this key — never submitted, or already purged?",
    );

    const now = Date.now();
    const base = {
      id: "t9",
      name: "n",
      queue: "q",
      status: "queued",
      attempt: 0,
      max_attempts: 3,
      run_at_ms: now - 10,
      cancel_requested_at_ms: null,
    };
    assert.equal(
      new TaskTimeout("t9", { timeoutMs: 1, task: base }).message,
      "task t9 did not finish within 1ms: never claimed by a worker — is a worker running with a handler for 'n' on queue 'q', against this same database?",
    );
    assert.equal(
      new TaskTimeout("t9", { timeoutMs: 1, task: { ...base, attempt: 2 } }).message,
      "task t9 did not finish within 1ms: still queued (attempt 2/3)",
    );
    assert.match(
      new TaskTimeout("t9", { timeoutMs: 1, task: { ...base, run_at_ms: now + 60_000 } }).message,
      /^task t9 did not finish within 1ms: still queued \(attempt 0\/3\), next run in ~\d+ms$/,
    );
    assert.equal(
      new TaskTimeout("t9", { timeoutMs: 1, task: { ...base, status: "running", attempt: 1 } }).message,
      "task t9 did not finish within 1ms: still running (attempt 1/3)",
    );
    assert.equal(
      new TaskTimeout("t9", {
        timeoutMs: 1,
        task: { ...base, status: "running", attempt: 1, cancel_requested_at_ms: now },
      }).message,
      "task t9 did not finish within 1ms: cancel requested, waiting for the handler to observe it",
    );
    const withTask = new TaskTimeout("t9", { timeoutMs: 1, task: base, key: "kk" });
    assert.equal(withTask.task, base);
    assert.equal(withTask.key, "kk");
    assert.ok(withTask.message.startsWith("key kk did not finish within 1ms: never claimed"));
  });

  test("ListenUnavailable is a plain Error with a default message, not a CairnQError", () => {
    const refused = new ListenUnavailable();
    assert.equal(refused.name, "ListenUnavailable");
    assert.equal(refused.message, "LISTEN is not available on this connection");
    assert.equal(new ListenUnavailable("pooler said no").message, "pooler said no");
    assert.ok(refused instanceof Error);
    assert.equal(refused instanceof CairnQError, false);
    assert.equal(esm.ListenUnavailable, ListenUnavailable);
  });

  test("TaskFailed derives its fields from the envelope, with defaults for missing ones", () => {
    const full = new TaskFailed(ENVELOPE);
    assert.equal(full.message, ENVELOPE.message);
    assert.equal(full.type, ENVELOPE.type);
    assert.equal(full.code, ENVELOPE.code);
    assert.equal(full.retryable, false);
    assert.deepEqual(full.details, ENVELOPE.details);
    assert.equal(full.error, ENVELOPE);

    for (const missing of [null, undefined, {}]) {
      const err = new TaskFailed(missing);
      assert.equal(err.message, "task failed");
      assert.equal(err.type, "TaskError");
      assert.equal(err.code, "task_error");
      assert.equal(err.retryable, false);
      assert.deepEqual(err.details, {});
      assert.equal(err.error, missing);
    }
    assert.equal(new TaskFailed({ retryable: true }).retryable, true);
  });

  test("TaskError defaults and envelope()", () => {
    const plain = new TaskError("bad thing");
    assert.equal(plain.message, "bad thing");
    assert.equal(plain.code, "task_error");
    assert.equal(plain.retryable, false);
    assert.equal(plain.type, "TaskError");
    assert.deepEqual(plain.details, {});
    assert.deepEqual(plain.envelope(), {
      type: "TaskError",
      code: "task_error",
      message: "bad thing",
      retryable: false,
      details: {},
    });
    const custom = new TaskError("quota", {
      code: "rate_limited",
      retryable: true,
      type: "Quota",
      details: { wait: 5 },
    });
    const envelope = custom.envelope();
    assert.deepEqual(Object.keys(envelope), ["type", "code", "message", "retryable", "details"]);
    assert.deepEqual(envelope, {
      type: "Quota",
      code: "rate_limited",
      message: "quota",
      retryable: true,
      details: { wait: 5 },
    });
  });

  test("require('../index.js') (CommonJS) exports the very same objects as the ESM entry", () => {
    const require = createRequire(import.meta.url);
    const cjs = require("../../index.js");
    assert.deepEqual(
      Object.keys(cjs).sort(),
      Object.keys(esm)
        .filter((k) => k !== "default")
        .sort(),
    );
    for (const name of Object.keys(esm)) {
      if (name === "default") continue;
      assert.equal(cjs[name], esm[name], `${name} is the same object in both entries`);
    }
    const err = new cjs.AlreadyExists("k");
    assert.ok(err instanceof AlreadyExists);
    assert.ok(err instanceof CairnQError);
  });

  test("the public entry exports the documented runtime values", () => {
    for (const name of [
      "CairnQ",
      "QueueDepthGate",
      "RetentionSweeper",
      "SQLiteStore",
      "PostgresStore",
      "TaskStore",
      "STATUSES",
      "defineTask",
      "isTerminal",
      "isTerminalStatus",
      "DEFAULT_WATCH_POLL_MS",
      "ListenUnavailable",
      "cancelRequested",
      "isQueued",
      "isRunning",
      "isSucceeded",
      "isFailed",
      "isCanceled",
      ...Object.keys(classes),
    ]) {
      assert.ok(name in esm, `${name} is exported`);
    }
    assert.deepEqual([...STATUSES], ["queued", "running", "succeeded", "failed", "canceled"]);
    assert.ok(Object.isFrozen(STATUSES));
  });

  test("status predicates", () => {
    const row = (status, cancel = null) => ({ status, cancel_requested_at_ms: cancel });
    assert.equal(esm.isTerminal(row("succeeded")), true);
    assert.equal(esm.isTerminal(row("failed")), true);
    assert.equal(esm.isTerminal(row("canceled")), true);
    assert.equal(esm.isTerminal(row("queued")), false);
    assert.equal(esm.isTerminal(row("running")), false);
    assert.equal(esm.isTerminal({ id: "task_x", status: "failed" }), true, "a TaskRef will do");
    assert.deepEqual(
      STATUSES.map((status) => esm.isTerminalStatus(status)),
      [false, false, true, true, true],
    );
    assert.equal(esm.DEFAULT_WATCH_POLL_MS, 2000);
    assert.equal(esm.cancelRequested(row("running", 5)), true);
    assert.equal(esm.cancelRequested(row("running", null)), false);
    assert.equal(esm.cancelRequested({ status: "running" }), false);
    for (const status of STATUSES) {
      const fn = esm[`is${status[0].toUpperCase()}${status.slice(1)}`];
      for (const other of STATUSES) assert.equal(fn(row(other)), other === status);
    }
  });
});
