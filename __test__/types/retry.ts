// Retry policies as a consumer types them (docs/api.md, "Retry policy"). It
// must compile under `tsc -p __test__/types/tsconfig.json`; it is never run.

import { CairnQ, Worker } from "cairnq";
import type { BackoffFunction, FailOptions, RetryPolicy, UniqueWindow } from "cairnq";

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
const byError: BackoffFunction = (attempt, error) => (error instanceof RangeError ? 60_000 : attempt * 1_000);
worker.task("paced", { retry: { attempts: 4, backoff: byError }, deadLetter: "paced.dead" }, async () => null);

async function submits(): Promise<void> {
  await client.submit("charge", {}, { retry: { attempts: 8 } });
  await client.submit("charge", {}, { retry: { backoff: "exponential", baseMs: 500, maxMs: 60_000 } });
  const daily: UniqueWindow = { forMs: 86_400_000 };
  await client.submit("charge", {}, { key: "charge:2026-12-07", conflict: "reject", unique: daily });
  await client.submit("charge", {}, { deadLetter: "charge.dead" });
}
void submits();
