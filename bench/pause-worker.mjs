// One worker process of bench/pauses.mjs: opens a worker on --location= with
// --concurrency= and --poll= (ms) for no-op "job" tasks, says "ready", runs
// on "go", and sends the Date.now() of each handler start, batched every
// 10 ms, until SIGTERM or until its parent goes away.
import { argNumber, argValue, loadPackage, openWorker } from "./lib.mjs";

const pkg = await loadPackage();
const worker = openWorker(pkg, argValue("location"), {
  pollIntervalMs: argNumber("poll", 1000),
  concurrency: argNumber("concurrency", 8),
});
let starts = [];
worker.task("job", () => {
  starts.push(Date.now());
  return null;
});
const report = setInterval(() => {
  if (starts.length > 0 && process.connected) process.send({ starts });
  starts = [];
}, 10);
process.once("disconnect", () => worker.stop());
process.once("message", async () => {
  await worker.serve();
  clearInterval(report);
  if (process.connected) process.disconnect();
});
process.send({ ready: true });
