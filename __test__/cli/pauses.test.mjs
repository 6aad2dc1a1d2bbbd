// `cairnq pause|resume <db> <queue>` and `cairnq queues <db>` run as a
// process (README, "Queue pauses"): a pause is idempotent and shown, a resume
// lifts it, a database that never paused lists its queues and creates no
// pause table, a bad queue name is a usage error.
import assert from "node:assert/strict";

import { forEachDialect, tableExists, test } from "../support/dialects.mjs";
import { assertFailure, cli, cliJson, cliOk } from "../support/cli-helpers.mjs";

forEachDialect("cli queue pauses", (dialect) => {
  test("pause, queues and resume; --json as the API answers", async (t) => {
    const { client, db } = await dialect.open(t);
    await client.submit("send", {}, { queue: "mail" });
    const before = await cliJson(["queues", db]);
    assert.deepEqual(
      before.map((q) => [q.queue, q.paused, q.counts.queued]),
      [["mail", false, 1]],
    );
    assert.equal(await tableExists(dialect, db, "cairnq_queue_pauses"), false, "listing created the table");
    assert.equal((await cli(["resume", db, "mail"])).stdout.trim(), "mail was not paused");
    assert.equal(await tableExists(dialect, db, "cairnq_queue_pauses"), false, "a resume created the table");

    assert.equal((await cliOk(["pause", db, "mail"])).trim(), "paused mail");
    assert.deepEqual(await cliJson(["pause", db, "mail"]), { queue: "mail", changed: false });
    assert.deepEqual(
      (await client.queues()).map((q) => [q.queue, q.paused]),
      [["mail", true]],
    );
    const table = await cliOk(["queues", db]);
    assert.match(table, /^QUEUE\s+STATE\s+PAUSED\s+QUEUED/);
    assert.match(table, /\nmail\s+paused\s+\S+/);

    assert.deepEqual(await cliJson(["resume", db, "mail"]), { queue: "mail", changed: true });
    assert.equal((await cliJson(["queues", db]))[0].paused, false);
    assertFailure(await cli(["pause", db, ""]), 2, /queue must be a non-empty string, got ""/);
  });
});
