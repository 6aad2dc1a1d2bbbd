// A worker whose handler never finishes, for the platform suite to SIGKILL
// while it holds a task's lease. argv[2]: the SQLite file.
import { Worker } from "../../index.mjs";

const worker = Worker.sqlite(process.argv[2], { leaseMs: 1_000, pollIntervalMs: 50 });
worker.task("hang", () => new Promise(() => {}));
await worker.run();
