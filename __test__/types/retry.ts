// Retry policies as a consumer types them (docs/api.md, "Retry policy"). It
// must compile under `tsc -p __test__/types/tsconfig.json`; it is never run.

import { CairnQ, Worker } from "cairnq";
import type { FailOptions, RetryPolicy } from "cairnq";

const client = CairnQ.sqlite("/tmp/retry.db");
const worker = Worker.sqlite("/tmp/retry.db");

const fixed: RetryPolicy = { attempts: 5, backoff: "fixed", baseMs: 10_000 };
worker.task("charge", { retry: fixed }, async (ctx) => {
  const last: boolean = ctx.isLastAttempt;
  const of: number = ctx.maxAttempts;
  const later: FailOptions = { delayMs: 2_000 };
  if (!last) return ctx.fail("rate limited", later);
  return { of };
});
worker.task("plain", { retry: null }, async () => null);

async function submits(): Promise<void> {
  await client.submit("charge", {}, { retry: { attempts: 8 } });
  await client.submit("charge", {}, { retry: { backoff: "exponential", baseMs: 500, maxMs: 60_000 } });
}
void submits();
