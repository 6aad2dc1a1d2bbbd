// Manual fetch and settle as a consumer types it (docs/api.md, "Manual
// fetch"). It must compile under `tsc -p __test__/types/tsconfig.json`; it is
// never run.

import { CairnQ, LeaseExpired, LostLease, NotOwner, NotRunning, TaskError } from "cairnq";
import type { FetchOptions, FetchedTask, Task, TaskStatus } from "cairnq";

export async function takeOneAndFinishIt(client: CairnQ): Promise<Task | null> {
  const opts: FetchOptions = {
    queue: "media",
    names: ["image.resize"],
    count: 1,
    leaseMs: 60_000,
    workerId: "script_1",
  };
  const [task] = await client.fetch(opts);
  if (task === undefined) return null;
  const kept: Task = await client.extendLease(task, 120_000);
  const cancel: number | null = kept.cancel_requested_at_ms;
  const handle: FetchedTask = { id: task.id, worker_id: task.worker_id };
  try {
    return await client.complete(handle, { thumb: "x.png", cancel });
  } catch (err) {
    if (err instanceof NotOwner) console.log(err.taskId, err.workerId, err.owner);
    if (err instanceof LeaseExpired) {
      const lost: LostLease = err;
      console.log(lost.taskId, err.workerId);
    }
    if (err instanceof NotRunning) {
      const status: TaskStatus | null = err.status;
      console.log(status);
    }
    return client.fail(task, new TaskError("resize failed", { code: "resize", retryable: true }), { delayMs: 5_000 });
  }
}

export async function failForGood(client: CairnQ, task: Task): Promise<Task> {
  await client.fail(task);
  return client.fail(task, "unsupported format", { retryable: false });
}

export const refusals = [new NotOwner("t", "a", "b"), new LeaseExpired("t", "a"), new NotRunning("t", null)];
