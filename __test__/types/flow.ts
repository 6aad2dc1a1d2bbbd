// Flow control as a consumer types it (docs/api.md, "Flow control"). It must
// compile under `tsc -p __test__/types/tsconfig.json`; it is never run.

import { CairnQ, Worker, defineTask } from "cairnq";
import type { RateLimit, SubmitOptions, TaskContext } from "cairnq";

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
declare function expectType<T extends true>(value: T): void;

const exportTask = defineTask<{ customer: number }, { url: string }>("export");
const client = CairnQ.sqlite("/tmp/flow.db");
const worker = Worker.sqlite("/tmp/flow.db");

const perMinute: RateLimit = { max: 60, perMs: 60_000 };
const perGroup: RateLimit = { max: 10, perMs: 1_000, perGroup: true };
worker.task("summarize", { rateLimit: perMinute }, async () => null);
worker.task("embed", { rateLimit: perGroup, concurrency: 4 }, async () => null);
worker.task("export", { groupConcurrency: 1 }, async (ctx: TaskContext) => {
  const group: string | null = ctx.group;
  expectType<Equal<typeof ctx.group, string | null>>(true);
  return { group };
});
worker.task("both", { rateLimit: null, groupConcurrency: null }, async () => null);

async function submits(): Promise<void> {
  await client.submit(exportTask, { customer: 42 }, { group: "customer:42" });
  await client.submit("export", {}, { group: null });
  const opts: SubmitOptions = { group: "customer:7", key: "export:7" };
  await client.submit("export", {}, opts);
}
void submits;
