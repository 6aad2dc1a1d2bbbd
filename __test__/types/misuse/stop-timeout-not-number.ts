// stop's timeoutMs is a number of milliseconds (the core refuses other values too).
import { Worker } from "cairnq";

const worker = Worker.sqlite("/tmp/misuse.db");
worker.stop({ timeoutMs: "10s" }); // @expect-error-here
