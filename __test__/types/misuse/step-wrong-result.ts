// ctx.step resolves to what its fn returns, not anything the caller wants.
import { Worker } from "cairnq";

const worker = Worker.sqlite("/tmp/misuse.db");
worker.task("job", async (ctx) => {
  const n: string = await ctx.step("count", () => 5); // @expect-error-here
  return n;
});
