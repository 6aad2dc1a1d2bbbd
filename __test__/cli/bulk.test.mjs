// `cairnq retry-many <db>` and `cairnq cancel-many <db>` run as a process
// (docs/api.md, "Bulk retry and cancel"): a dry run changes nothing, a page
// is bounded by --limit, --all walks every page, filters and a bad status
// are usage errors.
import assert from "node:assert/strict";

import { forEachDialect, test } from "../support/dialects.mjs";
import { assertFailure, cli, cliJson, cliOk } from "../support/cli-helpers.mjs";
import { statusTotals, submitAndFail } from "../support/helpers.mjs";

forEachDialect("cli retry-many and cancel-many", (dialect) => {
  test("retry-many: a dry run, one page, then --all", async (t) => {
    const { client, db } = await dialect.open(t);
    const failed = [];
    for (let i = 0; i < 5; i++) failed.push((await submitAndFail(client, "send", { queue: "mail" })).id);
    const other = await submitAndFail(client, "send", { queue: "sms" });

    const dry = await cliOk(["retry-many", db, "--queue", "mail", "--limit", "2", "--dry-run"]);
    const [summary, ...ids] = dry.trim().split("\n");
    assert.equal(summary, "would retry 2 tasks (the page is full: more may match) (dry run: nothing changed)");
    assert.equal(ids.length, 2);
    assert.equal((await statusTotals(client)).failed, 6);

    const page = await cliJson(["retry-many", db, "--queue", "mail", "--limit", "2"]);
    assert.deepEqual([page.count, page.more, page.dryRun], [2, true, false]);
    assert.equal(
      (await cliOk(["retry-many", db, "--queue", "mail", "--limit", "2", "--all"])).trim(),
      "retried 3 tasks in 2 pages",
    );
    for (const id of failed) assert.equal((await client.get(id)).status, "queued");
    assert.equal((await client.get(other.id)).status, "failed");
    assert.equal((await cliOk(["retry-many", db, "--older-than", "1h"])).trim(), "retried 0 tasks");
    assert.deepEqual(await cliJson(["retry-many", db, "--all", "--reset-attempt"]), { count: 1, pages: 1 });
    assert.equal((await client.get(other.id)).attempt, 0);
  });

  test("cancel-many: queued tasks of a queue end canceled; bad input is refused", async (t) => {
    const { client, db } = await dialect.open(t);
    const queued = [await client.submit("job", {}, { queue: "q" }), await client.submit("job", {}, { queue: "q" })];
    const kept = await client.submit("job", {}, { queue: "other" });
    assert.equal((await cliOk(["cancel-many", db, "--queue", "q", "--status", "queued"])).trim(), "canceled 2 tasks");
    for (const task of queued) assert.equal((await client.get(task.id)).status, "canceled");
    assert.equal((await client.get(kept.id)).status, "queued");

    assertFailure(await cli(["cancel-many", db, "--status", "failed"]), 2, /--status.*failed.*invalid/i);
    assertFailure(
      await cli(["retry-many", db, "--limit", "20000"]),
      2,
      /retryMany\.limit must be an integer from 1 to 10000, got 20000/,
    );
    assertFailure(await cli(["cancel-many", db, "--older-than", "1h"]), 2, /unknown option '--older-than'/);
    assert.equal((await client.get(kept.id)).status, "queued");
  });
});
