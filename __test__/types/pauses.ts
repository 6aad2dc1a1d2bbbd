// Queue pauses as a consumer types them (docs/api.md, "Queue pauses"). It
// must compile under `tsc -p __test__/types/tsconfig.json`; it is never run.

import { CairnQ } from "cairnq";
import type { QueueSummary, TaskStatus } from "cairnq";

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
declare function expectType<T extends true>(value: T): void;

const client = CairnQ.sqlite("/tmp/pauses.db");

async function pauses(): Promise<void> {
  const paused: boolean = await client.pauseQueue("emails");
  const resumed: boolean = await client.resumeQueue("emails");
  const listed: QueueSummary[] = await client.queues();
  const first = listed[0];
  if (first) {
    const state: [string, boolean, number | null] = [first.queue, first.paused, first.pausedAtMs];
    const queued: number = first.counts.queued;
    expectType<Equal<typeof first.counts, Record<TaskStatus, number>>>(true);
    void [state, queued];
  }
  void [paused, resumed];
}

void pauses;
