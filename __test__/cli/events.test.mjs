// `cairnq events` run as a process (issue 47, point 1): JSON lines with
// --json, filters, --after to read from a position, --count to stop, and
// SIGTERM's 143. On both dialects.
import assert from "node:assert/strict";
import fs from "node:fs";

import { forEachDialect, test } from "../support/dialects.mjs";
import { cli, spawnCli } from "../support/cli-helpers.mjs";

forEachDialect("cairnq events", (dialect) => {
  /** A database whose events table exists, with two tasks queued and canceled. */
  async function withHistory(t) {
    const { client, db } = await dialect.open(t);
    const subscription = client.events();
    await subscription.ready();
    subscription.close();
    const a = await client.submit("a", {});
    const b = await client.submit("b", {}, { queue: "other" });
    await client.cancel(a.id);
    await client.cancel(b.id);
    return { db, a, b };
  }

  test("--json prints one event a line from --after, and --count ends it", async (t) => {
    const { db, a, b } = await withHistory(t);
    const out = await cli(["events", db, "--after", "0", "--count", "4", "--json"]);
    assert.equal(out.code, 0, out.stderr);
    const events = out.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    assert.deepEqual(
      events.map((e) => [e.taskId, e.kind]),
      [
        [a.id, "queued"],
        [b.id, "queued"],
        [a.id, "canceled"],
        [b.id, "canceled"],
      ],
    );
    const next = await cli(["events", db, "--after", events[1].position, "--count", "2", "--json"]);
    assert.deepEqual(
      next.stdout
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line).position),
      [events[2].position, events[3].position],
    );
  });

  test("filters, human lines, and SIGTERM ends it with 143", async (t) => {
    const { db, b } = await withHistory(t);
    const proc = spawnCli(t, ["events", db, "--after", "0", "--queue", "other"]);
    const out = await proc.until((s) => s.includes(" canceled "), "the canceled line");
    const lines = out.trim().split("\n");
    assert.equal(lines.length, 2, out);
    assert.match(lines[0], new RegExp(` queued other/b ${b.id}$`));
    assert.match(lines[1], new RegExp(` canceled other/b ${b.id}$`));
    proc.kill("SIGTERM");
    assert.deepEqual(await proc.waitExit(), { code: 143, signal: null });
  });

  if (dialect.name === "sqlite") {
    test("a missing file is exit 3 and nothing is created", async (t) => {
      const { db } = await dialect.open(t);
      const missing = `${db}.missing`;
      const out = await cli(["events", missing, "--count", "1"]);
      assert.equal(out.code, 3, out.stderr);
      assert.equal(fs.existsSync(missing), false);
    });
  }

  test("a bad value is a usage error", async (t) => {
    const { db } = await withHistory(t);
    const out = await cli(["events", db, "--after", "soon"]);
    assert.equal(out.code, 2, out.stderr);
    assert.match(out.stderr, /after must be an event position/);
  });
});
