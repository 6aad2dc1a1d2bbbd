// ctx.sleep takes a step id before its milliseconds.
import { Worker } from "cairnq";

const worker = Worker.sqlite("/tmp/misuse.db");
worker.task("job", async (ctx) => {
  await ctx.sleep(60_000); // @expect-error-here
});
