"use strict";
// The application under test in these examples: a signup sends a welcome
// email now and a check-in email a day later; a failed send is retried after
// a backoff. Its handlers are registered on anything with worker.task's
// forms: a Worker in production, the test kit in tests.

const DAY_MS = 86_400_000;

/**
 * @template {{ task(name: string, fn: (ctx: any, payload: any) => unknown): unknown }} W
 * @param {W} worker
 * @param {{ send(email: { to: string, template: string }): Promise<void> }} mailer
 * @returns {W}
 */
function registerSignup(worker, mailer) {
  worker.task("user.signup", async (ctx, user) => {
    await ctx.submit("email.send", { to: user.email, template: "welcome" });
    await ctx.submit("email.send", { to: user.email, template: "check-in" }, { runAtDelayMs: DAY_MS });
  });
  worker.task("email.send", async (_ctx, email) => {
    await mailer.send(email);
  });
  return worker;
}

module.exports = { registerSignup, DAY_MS };
