// Time limits and aborts as a consumer types them (docs/api.md, "Time limits
// and aborts"). It must compile under `tsc -p __test__/types/tsconfig.json`;
// it is never run.

import { CairnQ, HandlerTimeout, TaskCanceled, Worker, WorkerShutdown } from "cairnq";
import type { StopOptions, SubmitOptions } from "cairnq";

const client = CairnQ.sqlite("/tmp/limits.db");
const worker = Worker.sqlite("/tmp/limits.db", { maxRunMs: 60_000 });

worker.task("render", { timeoutMs: 30_000 }, async (ctx) => {
  const reason: unknown = ctx.signal.reason;
  if (reason instanceof HandlerTimeout || reason instanceof WorkerShutdown || reason instanceof TaskCanceled) {
    const code: string = reason.code;
    const taskId: string = reason.taskId;
    return { code, taskId };
  }
  return null;
});
worker.task("unlimited", { timeoutMs: null }, async () => null);

async function submits(): Promise<void> {
  const opts: SubmitOptions = { timeoutMs: 5_000 };
  await client.submit("render", { url: "https://example.com" }, opts);
  await client.submitMany([{ task: "render", options: { timeoutMs: 1_000 } }]);
}

const stopping: StopOptions = { timeoutMs: 10_000 };
worker.stop(stopping);
worker.stop();
void worker.serve({ concurrency: 4, shutdownTimeoutMs: 10_000 });
void submits();
