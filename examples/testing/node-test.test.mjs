// The signup flow tested under node:test: `node --test examples/testing/node-test.test.mjs`.
import assert from "node:assert/strict";
import { test } from "node:test";

import { createTestKit } from "cairnq/testing";

import signup from "./signup.cjs";

test("a signup sends the welcome email now and the check-in a day later", async (t) => {
  const kit = createTestKit();
  t.after(() => kit.close());
  const sent = [];
  signup.registerSignup(kit, { send: async (email) => void sent.push(email.template) });

  await kit.client.submit("user.signup", { email: "ada@example.com" });
  await kit.drain();
  assert.deepEqual(sent, ["welcome"]);
  await kit.assertSubmitted({ name: "email.send", status: "queued" }, { count: 1 });

  kit.clock.advance(signup.DAY_MS);
  await kit.drain();
  assert.deepEqual(sent, ["welcome", "check-in"]);
});

test("a failed send is retried once its backoff has run out", async (t) => {
  const kit = createTestKit({ worker: { retryBackoffMs: 60_000 } });
  t.after(() => kit.close());
  let down = true;
  signup.registerSignup(kit, {
    send: async () => {
      if (down) throw new Error("the mail server is down");
    },
  });

  const task = await kit.client.submit("email.send", { to: "ada@example.com", template: "welcome" });
  await kit.drain();
  assert.equal((await kit.client.get(task.id)).status, "queued");

  down = false;
  kit.clock.advance(60_000);
  const { tasks } = await kit.drain();
  assert.deepEqual(
    tasks.map((t) => [t.id, t.status, t.attempt]),
    [[task.id, "succeeded", 2]],
  );
});
