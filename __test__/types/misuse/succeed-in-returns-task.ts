// ctx.succeedIn resolves to the settled row or null (already settled): not the write's value.
import { Worker } from "cairnq";

const worker = Worker.postgres("postgres:///app");
worker.task("bill", async (ctx) => {
  const amount: number = await ctx.succeedIn(async () => 5); // @expect-error-here
  return amount;
});
