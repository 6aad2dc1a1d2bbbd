// The dashboard's live updates without a browser (lib/dashboard/live.js):
// `api/live` as server-sent events, on every dialect. A change message names
// the queues and tasks that changed; every open stream shares one events
// subscription, closed with the last stream; `live: false` answers
// `unavailable`, so pages poll.
import assert from "node:assert/strict";

import { createDashboard, createMetrics } from "../../index.mjs";
import { defer, waitFor } from "../support/helpers.mjs";
import { forEachDialect, test } from "../support/dialects.mjs";

/** A stream of `api/live`: `next()` resolves with its next message, `{ event, data }`. */
async function openStream(dash) {
  const answer = await dash(new Request("http://localhost/api/live"));
  assert.equal(answer.status, 200);
  assert.match(answer.headers.get("content-type"), /^text\/event-stream/);
  assert.match(answer.headers.get("content-security-policy"), /default-src 'none'/);
  const reader = answer.body.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  return {
    async next() {
      for (;;) {
        const end = buffered.indexOf("\n\n");
        if (end >= 0) {
          const block = buffered.slice(0, end);
          buffered = buffered.slice(end + 2);
          if (block.startsWith(":")) continue;
          const field = (name) => new RegExp(`^${name}: (.*)$`, "m").exec(block)?.[1];
          return { event: field("event"), data: JSON.parse(field("data")) };
        }
        const { done, value } = await reader.read();
        assert.equal(done, false, "the stream ended");
        buffered += decoder.decode(value, { stream: true });
      }
    },
    close: () => reader.cancel(),
  };
}

forEachDialect("dashboard live updates", (dialect) => {
  test("a change names the queue and the task; the streams share one subscription", async (t) => {
    const { client } = await dialect.open(t);
    const dash = createDashboard({ client });
    defer(t, () => dash.close());
    const metrics = createMetrics({ client });
    const listeners = async () => Number(/^cairnq_event_listeners (\d+)$/m.exec(await metrics.render())[1]);

    const first = await openStream(dash);
    const second = await openStream(dash);
    assert.deepEqual(await first.next(), { event: "ready", data: {} });
    assert.deepEqual(await second.next(), { event: "ready", data: {} });
    assert.equal(await listeners(), 1, "one subscription for both pages");

    const task = await client.submit("mail", {}, { queue: "outbox" });
    for (const stream of [first, second]) {
      const change = await stream.next();
      assert.equal(change.event, "change");
      assert.deepEqual(change.data, { all: false, queues: ["outbox"], tasks: [task.id] });
    }
    await first.close();
    assert.equal(await listeners(), 1, "the other page still follows");
    await second.close();
    await waitFor(async () => (await listeners()) === 0, { message: "the subscription outlived the last stream" });
  });

  test("live: false answers unavailable and subscribes to nothing", async (t) => {
    const { client } = await dialect.open(t);
    const dash = createDashboard({ client, live: false });
    defer(t, () => dash.close());
    const stream = await openStream(dash);
    const first = await stream.next();
    assert.equal(first.event, "unavailable");
    assert.match(first.data.reason, /live: false/);
    await stream.close();
    const head = await dash(new Request("http://localhost/api/live", { method: "HEAD" }));
    assert.equal(head.status, 200);
    assert.equal(head.body, null);
  });
});
