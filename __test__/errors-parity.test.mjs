// Error messages are written once, in Rust (crates/core/src/error.rs). The
// cairnq-node crate's tests write every core error variant's reason, with what
// the Rust side says about it, to fixtures/error-reasons.json (and fail while
// that file is stale); this decodes each reason the way the bindings do and
// checks the JS error against it: class, name, message, code and fields, and
// for the classes users construct themselves, that the public constructor
// given the same fields words the very same message.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

import * as esm from "../index.mjs";

const require = createRequire(import.meta.url);
const { fromNative } = require("../lib/errors.js");

const fixture = JSON.parse(readFileSync(new URL("./fixtures/error-reasons.json", import.meta.url), "utf8"));

/** What the JS side appends to the Rust message, worded against its own clock. */
const JS_SUFFIX = { TaskTimeout: "what the last snapshot says" };

/** The classes a native reason can name (every `cairnq` tag fromNative decodes). */
const NATIVE_CLASSES = [
  "LostLease",
  "NotOwner",
  "LeaseExpired",
  "NotRunning",
  "AlreadyExists",
  "QueueFull",
  "TaskTimeout",
  "ProtocolVersionMismatch",
  "SerializationError",
  "SchemaMismatch",
  "UnsupportedBackend",
  "EventLoopBlocked",
];

/** The error's own fields, less `name` (a class fact) and `code` (checked apart). */
function fieldsOf(err) {
  return Object.fromEntries(Object.entries(err).filter(([k]) => k !== "name" && k !== "code"));
}

function assertMessage(err, entry) {
  if (JS_SUFFIX[entry.name] === undefined) {
    assert.equal(err.message, entry.message);
    return;
  }
  const prefix = `${entry.message}: `;
  assert.ok(err.message.startsWith(prefix), `${JSON.stringify(err.message)} starts with ${JSON.stringify(prefix)}`);
  assert.ok(err.message.length > prefix.length, `${JS_SUFFIX[entry.name]} follows`);
}

describe("errors decoded from Rust reasons", () => {
  test("the fixture holds every class a reason can name, and plain errors with and without a code", () => {
    assert.ok(Array.isArray(fixture.errors) && fixture.errors.length > 0, "fixtures/error-reasons.json has entries");
    const names = new Set(fixture.errors.map((e) => e.name));
    for (const name of NATIVE_CLASSES) assert.ok(names.has(name), `no ${name} in the fixture`);
    const plain = fixture.errors.filter((e) => e.name === "Error");
    assert.ok(plain.some((e) => "code" in e) && plain.some((e) => !("code" in e)));
    for (const entry of fixture.errors) {
      assert.ok(
        entry.name === "Error" || NATIVE_CLASSES.includes(entry.name),
        `${entry.variant}: unknown class ${entry.name}`,
      );
    }
  });

  for (const entry of fixture.errors) {
    test(`${entry.variant} → ${entry.name}: ${entry.message}`, () => {
      const err = fromNative(new Error(entry.reason));
      assert.equal(err.name, entry.name);
      if (entry.name === "Error") {
        assert.equal(Object.getPrototypeOf(err), Error.prototype);
      } else {
        assert.ok(err instanceof esm[entry.name], `an instance of ${entry.name}`);
        assert.ok(err instanceof esm.CairnQError);
      }
      assert.ok(err instanceof Error);
      assertMessage(err, entry);
      if ("code" in entry) assert.equal(err.code, entry.code);
      else assert.equal(Object.hasOwn(err, "code"), false);
      assert.deepEqual(fieldsOf(err), entry.fields);
      assert.equal(typeof err.stack, "string");

      // onError hands the reason text over as is: same error.
      const direct = fromNative(entry.reason);
      assert.equal(direct.name, err.name);
      assert.equal(direct.message, err.message);
      assert.deepEqual(fieldsOf(direct), fieldsOf(err));

      // Users construct the classes themselves: the same fields, the same words.
      if (entry.args !== undefined) {
        const made = new esm[entry.name](...entry.args);
        assert.equal(made.name, entry.name);
        assert.equal(made.message, err.message);
        assert.deepEqual(fieldsOf(made), fieldsOf(err));
      } else {
        assert.equal(entry.name, "Error", `${entry.variant}: a class users construct lists its constructor args`);
      }
    });
  }

  test("a decoded error takes the message its reason brought, in its stack too", () => {
    const reason = JSON.stringify({ cairnq: "LostLease", message: "worded in Rust", taskId: "task_1" });
    const err = fromNative(new Error(reason));
    assert.ok(err instanceof esm.LostLease);
    assert.equal(err.message, "worded in Rust");
    assert.equal(err.taskId, "task_1");
    assert.ok(err.stack.startsWith("LostLease: worded in Rust\n"), err.stack);
  });

  test("anything that is not a reason is returned as it is", () => {
    const plain = new Error("boom");
    assert.equal(fromNative(plain), plain);
    assert.equal(fromNative("just text"), "just text");
    assert.equal(fromNative(undefined), undefined);
    assert.equal(fromNative(null), null);
    const notOurs = { message: 42 };
    assert.equal(fromNative(notOurs), notOurs);
  });

  test("a reason's message reaches only the error made from it", () => {
    const lost = fromNative('{"cairnq":"LostLease","message":"worded in Rust","taskId":"t1"}');
    assert.equal(lost.message, "worded in Rust");
    assert.equal(lost.taskId, "t1");
    assert.equal(new esm.LostLease("t1").message, "lost lease on task t1");
    assert.equal(new esm.CairnQError("mine").message, "mine");
    assert.equal(new esm.CairnQError().message, "");
  });
});
