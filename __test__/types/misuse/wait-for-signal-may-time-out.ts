// A wait for a signal resolves null once its timeout passed: not a bare payload.
import { Worker } from "cairnq";

const worker = Worker.sqlite("/tmp/misuse.db");
worker.task("job", async (ctx) => {
  const approval: { by: string } = await ctx.waitForSignal<{ by: string }>("ok", "approved", { timeoutMs: 1000 }); // @expect-error-here
  return approval;
});
