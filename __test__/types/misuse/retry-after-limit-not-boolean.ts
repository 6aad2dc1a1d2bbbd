// ctx.retryAfter's `limit` is a boolean.
import { Worker } from "cairnq";

const worker = Worker.sqlite("/tmp/misuse.db");
worker.task("chat", { rateLimit: { max: 60, perMs: 60_000 } }, async (ctx) => ctx.retryAfter(1_000, { limit: "yes" })); // @expect-error-here
