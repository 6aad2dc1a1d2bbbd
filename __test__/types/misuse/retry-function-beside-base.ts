// A backoff function returns the delay itself: no baseMs beside it.
import { Worker } from "cairnq";

const worker = Worker.sqlite("/tmp/misuse.db");
worker.task("charge", { retry: { backoff: () => 1_000, baseMs: 5 } }, async () => null); // @expect-error-here
