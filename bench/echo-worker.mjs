// A worker process for bench/worker.mjs: serves "echo" until SIGTERM.
import { Worker } from "../index.mjs";

const [dbPath, pollMs] = process.argv.slice(2);
const worker = Worker.sqlite(dbPath, { pollIntervalMs: Number(pollMs), concurrency: 8 });
worker.task("echo", (_ctx, payload) => payload);
process.send?.("ready");
await worker.serve();
