// One worker process of bench/fleet.mjs and bench/pauses.mjs: opens a worker
// on --location= with --concurrency= (poll --poll=, 50 ms) for no-op "job"
// tasks (`groupConcurrency: 1` with --grouped), says "ready", runs on "go",
// and every 20 ms reports its handler count (with --starts: the Date.now()
// of each handler start since the last report) until SIGTERM or until its
// parent goes away.
import { argFlag, argNumber, argValue, loadPackage, openWorker } from "./lib.mjs";

const pkg = await loadPackage();
const worker = openWorker(pkg, argValue("location"), {
  pollIntervalMs: argNumber("poll", 50),
  concurrency: argNumber("concurrency", 16),
});
const timesStarts = argFlag("starts");
let done = 0;
let starts = [];
const handler = () => {
  done += 1;
  if (timesStarts) starts.push(Date.now());
  return null;
};
if (argFlag("grouped")) worker.task("job", { groupConcurrency: 1 }, handler);
else worker.task("job", handler);
let reported = 0;
const report = setInterval(() => {
  if (!process.connected) return;
  if (timesStarts && starts.length > 0) process.send({ starts });
  else if (!timesStarts && done !== reported) process.send({ done: (reported = done) });
  starts = [];
}, 20);
process.once("disconnect", () => worker.stop());
process.once("message", async () => {
  await worker.serve();
  clearInterval(report);
  if (process.connected) process.disconnect();
});
process.send({ ready: true });
