// rateLimit.key names a shared budget: a string (the core refuses others too).
import { Worker } from "cairnq";

const worker = Worker.sqlite("/tmp/misuse.db");
worker.task("summarize", { rateLimit: { key: 42, max: 60, perMs: 60_000 } }, async () => null); // @expect-error-here
