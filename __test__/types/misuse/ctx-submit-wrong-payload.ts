// ctx.submit checks a child's payload against its TaskDef.
import { Worker, defineTask } from "cairnq";

const child = defineTask<{ id: number }, void>("child");
Worker.sqlite("/tmp/misuse.db").task("parent", async (ctx) => {
  await ctx.submit(child, { id: "42" }); // @expect-error-here
});
