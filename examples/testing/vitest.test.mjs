// The signup flow tested under vitest: `npx vitest run examples/testing/vitest.test.mjs`.
import { afterEach, expect, test } from "vitest";

import { createTestKit } from "cairnq/testing";

import signup from "./signup.cjs";

let kit;
afterEach(() => kit.close());

test("a signup sends the welcome email now and the check-in a day later", async () => {
  kit = createTestKit();
  const sent = [];
  signup.registerSignup(kit, { send: async (email) => void sent.push(email.template) });

  await kit.client.submit("user.signup", { email: "ada@example.com" });
  await kit.drain();
  expect(sent).toEqual(["welcome"]);
  expect(await kit.submitted({ name: "email.send", status: "queued" })).toHaveLength(1);

  kit.clock.advance(signup.DAY_MS);
  await kit.drain();
  expect(sent).toEqual(["welcome", "check-in"]);
});

test("a failed send is retried once its backoff has run out", async () => {
  kit = createTestKit({ worker: { retryBackoffMs: 60_000 } });
  let down = true;
  signup.registerSignup(kit, {
    send: async () => {
      if (down) throw new Error("the mail server is down");
    },
  });

  const task = await kit.client.submit("email.send", { to: "ada@example.com", template: "welcome" });
  await kit.drain();
  expect((await kit.client.get(task.id)).status).toBe("queued");

  down = false;
  kit.clock.advance(60_000);
  const { tasks } = await kit.drain();
  expect(tasks.map((t) => [t.id, t.status, t.attempt])).toEqual([[task.id, "succeeded", 2]]);
});
