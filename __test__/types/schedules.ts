// Schedules as a consumer types them (docs/api.md, "Schedules"). It must
// compile under `tsc -p __test__/types/tsconfig.json`; it is never run.

import { CairnQ, Worker, defineTask } from "cairnq";
import type { CatchUp, Schedule, ScheduleOptions, ScheduleOrigin, ScheduleOverlap, Task } from "cairnq";

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
declare function expectType<T extends true>(value: T): void;

const report = defineTask<{ kind: string }, void>("report");
const client = CairnQ.sqlite("/tmp/schedules.db");

async function schedules(): Promise<void> {
  const nightly: Schedule = await client.schedule("nightly-report", {
    task: report,
    cron: "0 2 * * *",
    tz: "Europe/Berlin",
    payload: { kind: "daily" },
    queue: "reports",
    priority: 1,
    maxAttempts: 5,
    metadata: { team: "ops" },
    catchUp: "latest",
  });
  const byName = await client.schedule("heartbeat", { task: "ping", cron: "@hourly" });
  const next: number = nightly.nextRunAtMs + byName.createdAtMs + byName.updatedAtMs;
  const last: number | null = nightly.lastRunAtMs;
  const flags: [boolean, CatchUp, string, string] = [nightly.paused, nightly.catchUp, nightly.task, nightly.tz];
  const all: Schedule[] = await client.schedules();
  const paused: Schedule | null = await client.pauseSchedule("nightly-report");
  const resumed: Schedule | null = await client.resumeSchedule("nightly-report");
  const removed: Schedule | null = await client.unschedule("nightly-report");
  void [next, last, flags, all, paused, resumed, removed];
  const policies: CatchUp[] = ["none", "latest", "all"];
  const options: ScheduleOptions = { task: "ping", cron: "* * * * * *", catchUp: policies[0] };
  void options;
  // Schedules under control: intervals, overlap, the window, the limit.
  const overlaps: ScheduleOverlap[] = ["allow", "skip"];
  const interval: Schedule = await client.schedule("poll", {
    task: report,
    every: 30_000,
    payload: { kind: "poll" },
    overlap: overlaps[1],
    startAt: new Date(),
    endAt: Date.now() + 86_400_000,
    limit: 10,
  });
  const every: number | null = interval.every;
  const cron: string | null = interval.cron;
  const counts: [number, number, number | null, boolean] = [
    interval.firedCount,
    interval.skippedCount,
    interval.lastSkippedAtMs,
    interval.finished,
  ];
  const window: [number | null, number | null, number | null, ScheduleOverlap] = [
    interval.startAtMs,
    interval.endAtMs,
    interval.limit,
    interval.overlap,
  ];
  const triggered: Task = await client.triggerSchedule("poll");
  void [every, cron, counts, window, triggered];
}

const worker = new Worker(client.store, ["reports"]);
worker.task(report, async (ctx) => {
  const origin: ScheduleOrigin | null = ctx.schedule;
  if (origin) {
    const at: number = origin.occurrenceAtMs;
    const name: string = origin.name;
    const manual: true | undefined = origin.triggered;
    void [at, name, manual];
  }
});

expectType<Equal<Awaited<ReturnType<CairnQ["schedules"]>>, Schedule[]>>(true);
void schedules;
