// ctx.workerId is read-only.
import { Worker } from "cairnq";

Worker.sqlite("/tmp/misuse.db").task("job", (ctx) => {
  ctx.workerId = "other"; // @expect-error-here
});
