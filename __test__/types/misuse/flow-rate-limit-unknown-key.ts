// rateLimit has key, max, perMs and perGroup only (the core refuses other keys too).
import { Worker } from "cairnq";

const worker = Worker.sqlite("/tmp/misuse.db");
worker.task("summarize", { rateLimit: { max: 60, perMs: 60_000, burst: 5 } }, async () => null); // @expect-error-here
