// One worker process of bench/fleet.mjs: opens a worker on --location= with
// --concurrency= (poll 50 ms) for no-op "job" tasks (`groupConcurrency: 1`
// with --grouped), says "ready", runs on "go", and reports its handler count
// every 20 ms until SIGTERM or until its parent goes away.
import { argFlag, argNumber, argValue, loadPackage, openWorker } from "./lib.mjs";

const pkg = await loadPackage();
const worker = openWorker(pkg, argValue("location"), { pollIntervalMs: 50, concurrency: argNumber("concurrency", 16) });
let done = 0;
const handler = () => {
  done += 1;
  return null;
};
if (argFlag("grouped")) worker.task("job", { groupConcurrency: 1 }, handler);
else worker.task("job", handler);
let reported = 0;
const report = setInterval(() => {
  if (done !== reported && process.connected) process.send({ done: (reported = done) });
}, 20);
process.once("disconnect", () => worker.stop());
process.once("message", async () => {
  await worker.serve();
  clearInterval(report);
  if (process.connected) process.disconnect();
});
process.send({ ready: true });
