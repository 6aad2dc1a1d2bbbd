// cairnq/testing as a consumer types it (docs/api.md, "Testing"). It must
// compile under `tsc -p __test__/types/tsconfig.json`; it is never run.

import { defineTask } from "cairnq";
import type { CairnQ, SQLiteStore, Task } from "cairnq";
import { createTestKit, DrainLimitError, TestKit } from "cairnq/testing";
import type { Drained, DrainOptions, SubmittedFilter, TestKitOptions } from "cairnq/testing";

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
declare function expectType<T extends true>(value: T): void;

const options: TestKitOptions = {
  now: new Date("2026-01-01T00:00:00Z"),
  queues: ["default"],
  worker: { leaseMs: 4_000 },
};
const kit: TestKit = createTestKit(options);
const store: SQLiteStore = kit.store;
const client: CairnQ = kit.client;
const resize = defineTask<{ width: number }, { url: string }>("image.resize");

async function testing(): Promise<void> {
  const chained: TestKit = kit
    .task("email.send", async (_ctx, payload) => payload)
    .task(resize, async (_ctx, payload) => ({ url: `w${payload.width}` }))
    .task("digest", { batch: 10 }, async (contexts) => void contexts.length)
    .task("report", { concurrency: 2 }, async () => undefined);
  const now: number = kit.clock.now();
  const after: number = kit.clock.advance(86_400_000);
  const date: Date = kit.clock.date();
  const drainOptions: DrainOptions = { max: 50 };
  const drained: Drained = await kit.drain(drainOptions);
  const ran: number = drained.ran;
  expectType<Equal<typeof drained.tasks, Task[]>>(true);
  const filter: SubmittedFilter = { name: resize, queue: "default", status: "queued" };
  const submitted: Task[] = await kit.submitted(filter);
  const asserted: Task[] = await kit.assertSubmitted({ name: "email.send" }, { count: 1 });
  try {
    await kit.drain();
  } catch (err) {
    if (err instanceof DrainLimitError) {
      const limits: [number, number, string] = [err.max, err.tasks, err.message];
      void limits;
    }
  }
  await kit.close();
  void [chained, now, after, date, ran, submitted, asserted, store, client];
}

// @ts-expect-error the clock moves by milliseconds, a number
kit.clock.advance("1 day");
// @ts-expect-error only these filters
void kit.submitted({ payload: {} });

void testing;
