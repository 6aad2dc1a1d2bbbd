// With { batch } the handler receives an array of contexts, not (ctx, payload).
import { Worker } from "cairnq";

Worker.sqlite("/tmp/misuse.db").task("thumbs", { batch: 8 }, (ctx, payload) => payload.id + ctx.taskId); // @expect-error-here
