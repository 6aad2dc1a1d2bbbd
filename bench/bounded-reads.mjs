// Bounded reads: a page of the task list with and without bodies
// (`list({bodies: false})`), and the purge preview as the store's bounded
// count (`purgeCount`) against paging every finished row through `list`, as
// the command line and dashboard did before it. This package only (the
// reference has neither).
// Standalone: node bench/bounded-reads.mjs [--reps=3] [--only=list-page,purge-preview]
//   [--page-payload-kb=1024] [--purge-n=20000] [--pg=postgres://…]
import { argNumber, median, seconds, standalone, withClient } from "./lib.mjs";

const PAGE = 25;
const ROUNDS = 10;

/** Median ms of `ROUNDS` calls of `read`, and the bytes of its last answer as JSON. */
async function timed(read) {
  const ms = [];
  let bytes = 0;
  for (let i = 0; i < ROUNDS; i++) {
    const started = process.hrtime.bigint();
    const answer = await read();
    ms.push(seconds(started) * 1000);
    bytes = JSON.stringify(answer).length;
  }
  return { ms: median(ms), bytes };
}

/** What the preview cost before `purgeCount`: every finished row, 500 at a time. */
async function pagedPreview(client, limit) {
  const cutoff = Date.now();
  const found = [];
  for (const status of ["succeeded", "failed", "canceled"]) {
    for (let offset = 0; ; offset += 500) {
      const page = await client.list({ status, limit: 500, offset });
      for (const task of page)
        if (task.completed_at_ms != null && task.completed_at_ms < cutoff) found.push(task.completed_at_ms);
      if (page.length < 500) break;
    }
  }
  return found.sort((a, b) => a - b).slice(0, limit).length;
}

export const figures = {
  "list-page": {
    rows: [
      { name: `list page of ${PAGE}, 1 MB payloads, whole rows (ms, lower is better)`, lower: true },
      { name: `list page of ${PAGE}, 1 MB payloads, bodies: false (ms, lower is better)`, lower: true },
    ],
    run: (ctx) =>
      withClient(ctx, "list-page", async (client) => {
        const blob = "x".repeat(argNumber("page-payload-kb", 1024) * 1024);
        for (let i = 0; i < PAGE; i++) await client.submit("job", { blob });
        const whole = await timed(() => client.list({ limit: PAGE }));
        const summaries = await timed(() => client.list({ limit: PAGE, bodies: false }));
        return { values: [whole.ms, summaries.ms], detail: `bytes ${whole.bytes} vs ${summaries.bytes}` };
      }),
  },
  "purge-preview": {
    rows: [
      { name: "purge preview of 1000 over 20k finished, paging list (ms, lower is better)", lower: true },
      { name: "purge preview of 1000 over 20k finished, purgeCount (ms, lower is better)", lower: true },
    ],
    run: (ctx) =>
      withClient(ctx, "purge-preview", async (client) => {
        const n = argNumber("purge-n", 20_000);
        const ids = [];
        for (let i = 0; i < n; i += 500) {
          const batch = await Promise.all(
            Array.from({ length: Math.min(500, n - i) }, () => client.submit("job", { i })),
          );
          ids.push(...batch.map((t) => t.id));
        }
        for (let i = 0; i < ids.length; i += 500)
          await Promise.all(ids.slice(i, i + 500).map((id) => client.cancel(id)));
        await new Promise((resolve) => setTimeout(resolve, 5));
        const paged = await timed(() => pagedPreview(client, 1000));
        const counted = await timed(() => client.purgeCount({ limit: 1000 }));
        return { values: [paged.ms, counted.ms] };
      }),
    budgetMs: () => 600_000,
  },
};

await standalone(import.meta.url, figures);
