// A worker process of recovery.mjs: the package at --entry= on --location=,
// default options (lease, heartbeat, poll), one handler "job" that hangs
// (--mode=hang: a crash victim) or returns (--mode=ok: the rescuer) or sleeps
// --sleep= ms (--mode=sleep: a long task under load). Tells its parent its
// worker id, then serves until SIGTERM or SIGKILL.
import { argNumber, argValue, loadPackage, openWorker, sleep } from "./lib.mjs";

const pkg = await loadPackage();
const mode = argValue("mode", "ok");
const worker = openWorker(pkg, argValue("location"), { concurrency: 4 });
worker.task("job", async () => {
  if (mode === "hang") await new Promise(() => {});
  if (mode === "sleep") await sleep(argNumber("sleep", 30_000));
  return { by: worker.workerId };
});
process.send?.({ workerId: worker.workerId });
await worker.serve();
