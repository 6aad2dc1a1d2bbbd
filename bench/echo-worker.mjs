// The worker process for the call() latency figures: serves "echo" from the
// package at --entry= on --location= with --poll= ms until SIGTERM or until its
// parent goes away.
import { argNumber, argValue, loadPackage, openWorker } from "./lib.mjs";

const pkg = await loadPackage();
const worker = openWorker(pkg, argValue("location"), { pollIntervalMs: argNumber("poll", 500), concurrency: 8 });
worker.task("echo", (_ctx, payload) => payload);
process.once("disconnect", () => worker.stop());
process.send?.("ready");
await worker.serve();
if (process.connected) process.disconnect();
