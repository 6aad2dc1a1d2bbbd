// The JSON boundary (docs/api.md, "Values and JSON"; docs/protocol.md, "JSON
// columns"): what may cross into a JSON column, the exact errors for what may
// not, and that a refused value leaves the database untouched.
import { describe, test } from "node:test";
import assert from "node:assert/strict";

import { CairnQError, SerializationError } from "../index.mjs";
import { claimTask, openClient, rejectionOf, runPython } from "./support/helpers.mjs";

async function assertNothingWritten(client) {
  assert.deepEqual(await client.stats(), {});
  assert.deepEqual(await client.list(), []);
}

async function assertSerializationError(promise, message) {
  const err = await rejectionOf(promise);
  assert.ok(err instanceof SerializationError, `expected SerializationError, got ${err?.name}: ${err?.message}`);
  assert.ok(err instanceof CairnQError);
  assert.equal(err.name, "SerializationError");
  if (message instanceof RegExp) assert.match(err.message, message);
  else assert.equal(err.message, message);
  return err;
}

describe("payload and metadata defaults", () => {
  test("an omitted, undefined or null payload is stored as {}", async (t) => {
    const { client } = openClient(t);
    const omitted = await client.submit("job");
    const undef = await client.submit("job", undefined);
    const nul = await client.submit("job", null);
    for (const task of [omitted, undef, nul]) {
      assert.deepEqual(task.payload, {});
      assert.deepEqual((await client.get(task.id)).payload, {});
    }
  });

  test("undefined or null metadata is stored as {}", async (t) => {
    const { client } = openClient(t);
    const a = await client.submit("job", {}, { metadata: undefined });
    const b = await client.submit("job", {}, { metadata: null });
    assert.deepEqual(a.metadata, {});
    assert.deepEqual(b.metadata, {});
  });

  test("store.submit applies the same defaults as the client", async (t) => {
    const { client } = openClient(t);
    const task = await client.store.submit({ name: "direct", payload: undefined });
    assert.deepEqual(task.payload, {});
    assert.deepEqual(task.metadata, {});
  });
});

describe("non-finite numbers are refused at any depth", () => {
  const cases = [
    ["NaN at the top of an object", { n: NaN }, "non-finite number NaN is not JSON-serializable"],
    [
      "Infinity deep inside objects",
      { a: { b: { c: Infinity } } },
      "non-finite number Infinity is not JSON-serializable",
    ],
    ["-Infinity inside an array", { xs: [1, [2, -Infinity]] }, "non-finite number -Infinity is not JSON-serializable"],
    ["NaN as the whole payload", NaN, "non-finite number NaN is not JSON-serializable"],
  ];
  for (const [label, payload, message] of cases) {
    test(`payload: ${label}`, async (t) => {
      const { client } = openClient(t);
      await assertSerializationError(client.submit("job", payload), message);
      await assertNothingWritten(client);
    });
  }

  test("metadata: NaN is refused like in a payload", async (t) => {
    const { client } = openClient(t);
    await assertSerializationError(
      client.submit("job", {}, { metadata: { score: NaN } }),
      "non-finite number NaN is not JSON-serializable",
    );
    await assertNothingWritten(client);
  });

  test("a toJSON result that contains NaN is refused", async (t) => {
    const { client } = openClient(t);
    const sneaky = { toJSON: () => ({ n: NaN }) };
    await assertSerializationError(client.submit("job", { sneaky }), "non-finite number NaN is not JSON-serializable");
    await assertNothingWritten(client);
  });

  test("encoding comes before option validation", async (t) => {
    const { client } = openClient(t);
    await assertSerializationError(
      client.submit("job", { n: NaN }, { conflict: "bogus", maxAttempts: 0 }),
      "non-finite number NaN is not JSON-serializable",
    );
    await assertNothingWritten(client);
  });

  test("a string that merely contains 'null' or 'NaN' is accepted", async (t) => {
    const { client } = openClient(t);
    const task = await client.submit("job", { s: "null", t: "NaN", xs: [null] });
    assert.deepEqual(task.payload, { s: "null", t: "NaN", xs: [null] });
  });
});

describe("values JSON.stringify throws on", () => {
  test("a BigInt anywhere is a SerializationError carrying the engine's message", async (t) => {
    const { client } = openClient(t);
    let engineMessage;
    try {
      JSON.stringify({ deep: [{ n: 10n }] });
    } catch (err) {
      engineMessage = err.message;
    }
    assert.ok(engineMessage, "JSON.stringify should throw on a BigInt");
    await assertSerializationError(client.submit("job", { deep: [{ n: 10n }] }), engineMessage);
    await assertSerializationError(client.submit("job", {}, { metadata: { n: 1n } }), engineMessage);
    await assertNothingWritten(client);
  });

  test("a circular structure is a SerializationError carrying the engine's message", async (t) => {
    const { client } = openClient(t);
    const cyclic = { name: "loop" };
    cyclic.self = cyclic;
    const err = await assertSerializationError(client.submit("job", cyclic), /circular/i);
    let engineMessage;
    try {
      JSON.stringify(cyclic);
    } catch (e) {
      engineMessage = e.message;
    }
    assert.equal(err.message, engineMessage);
    await assertNothingWritten(client);
  });
});

describe("values that encode to nothing", () => {
  test("a function payload is refused with its typeof", async (t) => {
    const { client } = openClient(t);
    await assertSerializationError(
      client.submit("job", () => 1),
      "value of type function is not JSON-serializable",
    );
    await assertNothingWritten(client);
  });

  test("a symbol payload is refused with its typeof", async (t) => {
    const { client } = openClient(t);
    await assertSerializationError(client.submit("job", Symbol("s")), "value of type symbol is not JSON-serializable");
    await assertNothingWritten(client);
  });

  test("a function or symbol as metadata is refused with its typeof", async (t) => {
    const { client } = openClient(t);
    await assertSerializationError(
      client.submit("job", {}, { metadata: function named() {} }),
      "value of type function is not JSON-serializable",
    );
    await assertSerializationError(
      client.submit("job", {}, { metadata: Symbol("m") }),
      "value of type symbol is not JSON-serializable",
    );
    await assertNothingWritten(client);
  });

  test("a toJSON that returns undefined at the top level is refused", async (t) => {
    const { client } = openClient(t);
    await assertSerializationError(
      client.submit("job", { toJSON: () => undefined }),
      "value of type object is not JSON-serializable",
    );
    await assertNothingWritten(client);
  });

  for (const [kind, element] of [
    ["undefined", undefined],
    ["function", () => 1],
    ["symbol", Symbol("x")],
  ]) {
    test(`${kind} inside an array is refused`, async (t) => {
      const { client } = openClient(t);
      await assertSerializationError(
        client.submit("job", { items: [1, { nested: [element] }] }),
        `${kind} inside an array is not JSON-serializable`,
      );
      await assertNothingWritten(client);
    });
  }

  test("a hole in a sparse array counts as undefined inside an array", async (t) => {
    const { client } = openClient(t);
    await assertSerializationError(
      // eslint-disable-next-line no-sparse-arrays
      client.submit("job", { xs: [1, , 3] }),
      "undefined inside an array is not JSON-serializable",
    );
    await assertNothingWritten(client);
  });
});

describe("what crosses the boundary, and how it comes back", () => {
  test("{xs: [null, 1], absent: undefined} round-trips as {xs: [null, 1]}", async (t) => {
    const { client } = openClient(t);
    const task = await client.submit("job", { xs: [null, 1], absent: undefined });
    assert.deepEqual(task.payload, { xs: [null, 1] });
    assert.deepEqual((await client.get(task.id)).payload, { xs: [null, 1] });
    assert.equal(Object.hasOwn((await client.get(task.id)).payload, "absent"), false);
  });

  test("object properties holding functions or symbols are omitted", async (t) => {
    const { client } = openClient(t);
    const task = await client.submit("job", { keep: 1, fn: () => 1, sym: Symbol("s") });
    assert.deepEqual(task.payload, { keep: 1 });
  });

  test("toJSON is honored: Dates and custom classes", async (t) => {
    const { client } = openClient(t);
    class Money {
      constructor(cents) {
        this.cents = cents;
      }
      toJSON() {
        return { amount: this.cents / 100, currency: "EUR" };
      }
    }
    const task = await client.submit("job", { when: new Date(0), price: new Money(1250) });
    assert.deepEqual(task.payload, {
      when: "1970-01-01T00:00:00.000Z",
      price: { amount: 12.5, currency: "EUR" },
    });
  });

  test("non-ASCII text, emoji, escapes and deep nesting round-trip exactly", async (t) => {
    const { client } = openClient(t);
    const payload = {
      text: "Grüße, 世界 — naïve café 🌲𝄞 👩‍👩‍👧",
      nested: [[1, [2, [3, { deep: ["ünïcödé", null, { emptyObj: {}, emptyArr: [] }] }]]]],
      numbers: [0, -7, 1.5, 1e21, -0.000001, Number.MAX_SAFE_INTEGER],
      flags: [true, false, null],
      escapes: 'a "quoted" \\ backslash\n\ttab \u2028 end',
    };
    const metadata = { owner: "Zoë", tags: ["α", "β"], emoji: "🚀" };
    const task = await client.submit("job", payload, { metadata });
    const read = await client.get(task.id);
    assert.deepEqual(task.payload, payload);
    assert.deepEqual(read.payload, payload);
    assert.deepEqual(read.metadata, metadata);
    const [listed] = await client.list({ name: "job" });
    assert.deepEqual(listed.payload, payload);
  });

  test("scalars and arrays are valid payloads too", async (t) => {
    const { client } = openClient(t);
    for (const payload of [0, "text", true, false, [1, "two", null], []]) {
      const task = await client.submit("job", payload);
      assert.deepEqual((await client.get(task.id)).payload, payload);
    }
  });

  test("the stored text is compact JSON with raw UTF-8, and a null result is SQL NULL", async (t) => {
    const { client, dbPath } = openClient(t);
    const task = await client.submit("job", { text: "café 🌲", xs: [1, 2] });
    await claimTask(client.store, task);
    const done = await client.store.complete({ taskId: task.id, workerId: "w1", result: null });
    assert.equal(done.result, null);
    await client.close();
    const out = await runPython(
      [
        "import sqlite3, sys, json",
        "c = sqlite3.connect(sys.argv[1])",
        "row = c.execute('SELECT payload, result IS NULL, typeof(result) FROM cairnq_tasks WHERE id = ?', (sys.argv[2],)).fetchone()",
        "sys.stdout.write(json.dumps(list(row)))",
      ].join("\n"),
      [dbPath, task.id],
    );
    const [payloadText, resultIsNull, resultType] = JSON.parse(out);
    assert.equal(payloadText, '{"text":"café 🌲","xs":[1,2]}');
    assert.equal(resultIsNull, 1);
    assert.equal(resultType, "null");
  });
});

describe("results at the worker-side store methods", () => {
  for (const method of ["succeed", "complete"]) {
    test(`${method} with an unencodable result rejects before any write`, async (t) => {
      const { client } = openClient(t);
      const task = await client.submit("job");
      const claimed = await claimTask(client.store, task);
      await assertSerializationError(
        client.store[method]({ taskId: task.id, workerId: "w1", result: { ratio: NaN } }),
        "non-finite number NaN is not JSON-serializable",
      );
      await assertSerializationError(
        client.store[method]({ taskId: task.id, workerId: "w1", result: { n: 5n } }),
        /BigInt/,
      );
      const after = await client.get(task.id);
      assert.equal(after.status, "running");
      assert.equal(after.updated_at_ms, claimed.updated_at_ms);
      assert.equal(after.result, null);
    });

    test(`${method} with an undefined result stores no result`, async (t) => {
      const { client } = openClient(t);
      const task = await client.submit("job");
      await claimTask(client.store, task);
      const done = await client.store[method]({ taskId: task.id, workerId: "w1", result: undefined });
      assert.equal(done.status, "succeeded");
      assert.equal(done.result, null);
    });
  }

  test("a result with non-ASCII text and nested values round-trips", async (t) => {
    const { client } = openClient(t);
    const task = await client.submit("job");
    await claimTask(client.store, task);
    const result = { summary: "fertig ✅", rows: [{ id: 1, tags: ["ä", null] }] };
    await client.store.complete({ taskId: task.id, workerId: "w1", result });
    assert.deepEqual((await client.get(task.id)).result, result);
  });
});
