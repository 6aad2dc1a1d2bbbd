// ctx.retryAfter's options hold `limit` only (the core refuses other keys too).
import { Worker } from "cairnq";

const worker = Worker.sqlite("/tmp/misuse.db");
worker.task("chat", { rateLimit: { max: 60, perMs: 60_000 } }, async (ctx) => ctx.retryAfter(1_000, { limits: true })); // @expect-error-here
