// A worker process for bench/worker.mjs: serves "echo" until SIGTERM.
import { openWorker } from "./lib.mjs";

const [location, pollMs] = process.argv.slice(2);
const worker = openWorker(location, { pollIntervalMs: Number(pollMs), concurrency: 8 });
worker.task("echo", (_ctx, payload) => payload);
process.send?.("ready");
await worker.serve();
