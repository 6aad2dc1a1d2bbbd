// ctx.callChild checks the payload against the child's TaskDef.
import { Worker, defineTask } from "cairnq";

const index = defineTask<{ summary: string }, number>("index");
const worker = Worker.sqlite("/tmp/misuse.db");
worker.task("job", async (ctx) => {
  await ctx.callChild("index", index, { words: 3 }); // @expect-error-here
});
