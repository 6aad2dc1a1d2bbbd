// A registration's timeoutMs is a number of milliseconds (the core refuses other values too).
import { Worker } from "cairnq";

const worker = Worker.sqlite("/tmp/misuse.db");
worker.task("render", { timeoutMs: "30s" }, async () => null); // @expect-error-here
