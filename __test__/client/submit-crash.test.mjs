// A submitting process SIGKILLed while its grouped submits are in flight
// (64 pending: each tick's submits share one commit on SQLite and one
// statement on Postgres) loses no submit it was told had succeeded.
import assert from "node:assert/strict";

import { forEachDialect, test } from "../support/dialects.mjs";
import { spawnFixture } from "../support/helpers.mjs";

forEachDialect("a submitter killed mid-group", (dialect) => {
  test("every acknowledged submit is stored", async (t) => {
    const { client, db } = await dialect.open(t);
    await client.connect();
    const submitter = spawnFixture(t, "steady-submitter.mjs", { dialect: dialect.name, db, inFlight: 64 });
    const acked = () => submitter.events().flatMap((e) => (e.event === "acked" ? e.ids : []));
    await submitter.waitForEvent(() => acked().length >= 2000, { timeoutMs: 50_000, what: "2,000 acknowledged" });
    submitter.kill("SIGKILL");
    const { signal } = await submitter.waitExit(10_000);
    assert.equal(signal, "SIGKILL");

    const ids = acked();
    const missing = [];
    for (const id of ids) if ((await client.get(id)) === null) missing.push(id);
    assert.deepEqual(missing, [], `${missing.length} of ${ids.length} acknowledged submits are not stored`);
    const stored = (await client.stats()).default?.queued ?? 0;
    assert.ok(stored >= ids.length, `${stored} queued rows for ${ids.length} acknowledged submits`);
  });
});
