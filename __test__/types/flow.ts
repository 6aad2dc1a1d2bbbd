// Flow control as a consumer types it (docs/api.md, "Flow control"). It must
// compile under `tsc -p __test__/types/tsconfig.json`; it is never run.

import { CairnQ, Worker, defineTask } from "cairnq";
import type { RateLimit, RetryAfterOptions, SubmitOptions, TaskContext } from "cairnq";

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

// One budget shared by two names, and push-back on it.
const openai: RateLimit = { key: "openai", max: 500, perMs: 60_000 };
worker.task("chat", { rateLimit: openai }, async (ctx) => {
  const pushBack: RetryAfterOptions = { limit: true };
  if (ctx.attempt > 1) return ctx.retryAfter(30_000, pushBack);
  return ctx.retryAfter(1_000, {});
});
worker.task("embed", { rateLimit: { ...openai, perGroup: true } }, async (ctx) =>
  ctx.retryAfter(5_000, { limit: true }),
);

async function submits(): Promise<void> {
  await client.submit(exportTask, { customer: 42 }, { group: "customer:42" });
  await client.submit("export", {}, { group: null });
  const opts: SubmitOptions = { group: "customer:7", key: "export:7" };
  await client.submit("export", {}, opts);
}
void submits;
