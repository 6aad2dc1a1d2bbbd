// A child of ctx.callChild is keyed by its parent and step: no key of its own.
import { Worker, defineTask } from "cairnq";

const index = defineTask<{ summary: string }, number>("index");
const worker = Worker.sqlite("/tmp/misuse.db");
worker.task("job", async (ctx) => {
  await ctx.callChild("index", index, { summary: "s" }, { key: "mine" }); // @expect-error-here
});
