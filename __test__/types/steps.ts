// Durable steps as a consumer types them (docs/api.md, "Durable steps"). It
// must compile under `tsc -p __test__/types/tsconfig.json`; it is never run.

import { CairnQ, Worker, defineTask } from "cairnq";
import type {
  CallChildOptions,
  CancelOptions,
  PendingSignal,
  StepKind,
  StepSuspension,
  Task,
  TaskStep,
  TaskSteps,
  WaitForSignalOptions,
} from "cairnq";

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
declare function expectType<T extends true>(value: T): void;

const index = defineTask<{ summary: string }, { indexed: number }>("index");
const pipeline = defineTask<{ url: string }, { summary: string; indexed: number }>("pipeline");
const client = CairnQ.sqlite("/tmp/steps.db");
const worker = new Worker(client.store, ["default"]);

worker.task(pipeline, async (ctx, { url }) => {
  const text = await ctx.step("fetch", async () => `text of ${url}`);
  expectType<Equal<typeof text, string>>(true);
  const summary = await ctx.step("summarize", () => ({ words: text.split(" ").length }));
  expectType<Equal<typeof summary, { words: number }>>(true);
  await ctx.sleep("cool-down", 60 * 60_000);
  await ctx.sleepUntil("tomorrow", new Date(Date.now() + 86_400_000));
  await ctx.sleepUntil("later", Date.now() + 1000);
  const options: CallChildOptions = { queue: "indexing", priority: 2, pollMs: 5000, metadata: { by: "pipeline" } };
  const child = await ctx.callChild("index", index, { summary: String(summary.words) }, options);
  expectType<Equal<typeof child, { indexed: number }>>(true);
  const untyped = await ctx.callChild("notify", "notify.send", { to: "ops" });
  expectType<Equal<typeof untyped, unknown>>(true);
  const wait: WaitForSignalOptions = { timeoutMs: 60_000 };
  const approval = await ctx.waitForSignal<{ by: string }>("approval", "approved", wait);
  expectType<Equal<typeof approval, { by: string } | null>>(true);
  const anything = await ctx.waitForSignal("note", "note");
  expectType<Equal<typeof anything, unknown>>(true);
  return { summary: String(summary.words), indexed: child.indexed };
});

async function inspect(id: string): Promise<void> {
  const view: TaskSteps = await client.steps(id);
  const first: TaskStep | undefined = view.steps[0];
  const kinds: StepKind[] = ["step", "sleep", "child"];
  const size: number | undefined = first?.size;
  const stored: number | undefined = first?.storedAtMs;
  const waiting: StepSuspension | null = view.suspended;
  if (waiting?.kind === "sleep") {
    const until: number = waiting.untilMs;
    void until;
  } else if (waiting?.kind === "signal") {
    const name: string = waiting.name;
    const timeout: number = waiting.timeoutAtMs;
    void [name, timeout];
  } else if (waiting?.kind === "child") {
    const child: string = waiting.childId;
    const recheck: number = waiting.recheckAtMs;
    void [child, recheck];
  }
  const pending: PendingSignal[] = view.signals;
  const sent: boolean | null = await client.signal(id, "approved", { by: "ada" });
  const byKey: boolean | null = await client.signalByKey("order-1", "approved");
  const alone: CancelOptions = { children: false };
  await client.cancel(id, alone);
  await client.cancelByKey("order-1", { children: true });
  const restarted: Task | null = await client.retry(id, { fromStep: "summarize" });
  await client.retryByKey("order-1", { fromStep: "fetch", resetAttempt: true });
  void [kinds, size, stored, pending, sent, byKey, restarted];
}
void inspect;
