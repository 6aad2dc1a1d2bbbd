// SQLite files cairnq must not touch (docs/protocol.md, "Connection setup
// (SQLite)", "Protocol version"): a non-database file and foreign protocol
// versions are refused, their bytes left alone.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import fs from "node:fs";

import { CairnQ, CairnQError, ProtocolVersionMismatch } from "../../index.mjs";
import { defer, makeDbPath, rejectionOf, runPython, sha256OfFile } from "../support/helpers.mjs";

// ---------------------------------------------------------------------------
describe("databases cairnq must refuse on sqlite", () => {
  test("a non-database file: connect rejects naming the file and leaves its bytes alone", async (t) => {
    const dbPath = makeDbPath(t, "x.db");
    fs.writeFileSync(dbPath, randomBytes(8192));
    const before = sha256OfFile(dbPath);
    const client = CairnQ.sqlite(dbPath);
    defer(t, () => client.close());
    const err = await rejectionOf(client.connect());
    assert.ok(err instanceof Error);
    assert.ok(err.message.includes(dbPath), `message names the file: ${err.message}`);
    const again = await rejectionOf(client.submit("job"));
    assert.ok(again.message.includes(dbPath), again.message);
    await client.close();
    assert.equal(sha256OfFile(dbPath), before, "the file's bytes are unchanged");
    assert.equal(fs.statSync(dbPath).size, 8192);
  });

  test("protocol_version 2 → ProtocolVersionMismatch; ledger, meta and rows untouched", async (t) => {
    const dbPath = makeDbPath(t);
    const setup = CairnQ.sqlite(dbPath);
    const existing = await setup.submit("job", { keep: true });
    await setup.close();

    const dump = [
      "import sqlite3, sys, json",
      "c = sqlite3.connect(sys.argv[1])",
      "out = {",
      "  'meta': c.execute('SELECT key, value FROM cairnq_meta ORDER BY key').fetchall(),",
      "  'ledger': c.execute('SELECT name, applied_at_ms FROM cairnq_migrations ORDER BY name').fetchall(),",
      "  'tasks': c.execute('SELECT id FROM cairnq_tasks ORDER BY id').fetchall(),",
      "}",
      "sys.stdout.write(json.dumps(out))",
    ].join("\n");
    await runPython(
      [
        "import sqlite3, sys",
        "c = sqlite3.connect(sys.argv[1])",
        "c.execute(\"UPDATE cairnq_meta SET value = '2' WHERE key = 'protocol_version'\")",
        "c.commit()",
      ].join("\n"),
      [dbPath],
    );
    const before = JSON.parse(await runPython(dump, [dbPath]));
    assert.deepEqual(before.meta, [
      ["protocol_version", "2"],
      ["schema_version", "10"],
    ]);

    const client = CairnQ.sqlite(dbPath);
    defer(t, () => client.close());
    const err = await rejectionOf(client.connect());
    assert.ok(err instanceof ProtocolVersionMismatch, String(err));
    assert.ok(err instanceof CairnQError);
    assert.equal(err.name, "ProtocolVersionMismatch");
    assert.equal(err.message, "storage protocol_version=2, SDK supports 1");
    const viaSubmit = await rejectionOf(client.submit("job", { must: "not be written" }));
    assert.ok(viaSubmit instanceof ProtocolVersionMismatch, String(viaSubmit));
    await client.close();

    const after = JSON.parse(await runPython(dump, [dbPath]));
    assert.deepEqual(after, before);
    assert.deepEqual(after.tasks, [[existing.id]]);
  });

  test("a missing protocol_version row reads as 0 and is refused, not re-stamped", async (t) => {
    const dbPath = makeDbPath(t);
    const setup = CairnQ.sqlite(dbPath);
    await setup.connect();
    await setup.close();
    await runPython(
      [
        "import sqlite3, sys",
        "c = sqlite3.connect(sys.argv[1])",
        "c.execute(\"DELETE FROM cairnq_meta WHERE key = 'protocol_version'\")",
        "c.commit()",
      ].join("\n"),
      [dbPath],
    );
    const client = CairnQ.sqlite(dbPath);
    defer(t, () => client.close());
    const err = await rejectionOf(client.connect());
    assert.ok(err instanceof ProtocolVersionMismatch, String(err));
    assert.equal(err.message, "storage protocol_version=0, SDK supports 1");
    await client.close();
    const meta = await runPython(
      [
        "import sqlite3, sys",
        "c = sqlite3.connect(sys.argv[1])",
        "sys.stdout.write(repr(c.execute('SELECT key, value FROM cairnq_meta ORDER BY key').fetchall()))",
      ].join("\n"),
      [dbPath],
    );
    assert.equal(meta, "[('schema_version', '10')]");
  });
});
