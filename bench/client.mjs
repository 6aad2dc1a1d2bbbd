// Client figures: submit, get, cancel, purge. Each runs on a fresh database.
// Standalone: node bench/client.mjs [--entry=index.mjs] [--reps=3] [--only=submit-seq,…]
//   [--n=N | --submit-n= --submit64-n= --get-n= --cancel-n= --cancel64-n= --purge-n=] [--pg=postgres://…]
import { seconds, seed, single, sleep, standalone, throughput, withClient } from "./lib.mjs";

const payload = { user: 42, action: "resize", sizes: [64, 128, 256] };

/** ops/s of `op(client, ids, i)` over `count` ops, `inFlight` at a time, after seeding `seeded` tasks. */
const timed =
  (label, { seeded = 0, count, inFlight, op }) =>
  (ctx) =>
    withClient(ctx, label, async (client) => {
      const ids = seeded(ctx) > 0 ? await seed(client, seeded(ctx), "job", () => payload) : [];
      return throughput(count(ctx), inFlight, (i) => op(client, ids, i));
    });

const submit = (client) => client.submit("job", payload);
const cancel = (client, ids, i) => client.cancel(ids[i]);

export const figures = {
  "submit-seq": single(
    "submit, sequential (ops/s)",
    false,
    timed("submit", { seeded: () => 0, count: (c) => c.sizes.submitSeq, inFlight: 1, op: submit }),
  ),
  "submit-64": single(
    "submit, 64 in flight (ops/s)",
    false,
    timed("submit64", { seeded: () => 0, count: (c) => c.sizes.submit64, inFlight: 64, op: submit }),
  ),
  "get-seq": single(
    "get, sequential (ops/s)",
    false,
    timed("get", {
      seeded: (c) => c.sizes.getSeeded,
      count: (c) => c.sizes.getOps,
      inFlight: 1,
      op: (client, ids, i) => client.get(ids[i % ids.length]),
    }),
  ),
  "cancel-seq": single(
    "cancel, sequential (ops/s)",
    false,
    timed("cancel", { seeded: (c) => c.sizes.cancelSeq, count: (c) => c.sizes.cancelSeq, inFlight: 1, op: cancel }),
  ),
  "cancel-64": single(
    "cancel, 64 in flight (ops/s)",
    false,
    timed("cancel64", { seeded: (c) => c.sizes.cancel64, count: (c) => c.sizes.cancel64, inFlight: 64, op: cancel }),
  ),
  purge: {
    rows: [{ name: "purge (rows deleted/s)", lower: false }],
    run: (ctx) =>
      withClient(ctx, "purge", async (client) => {
        const n = ctx.sizes.purge;
        const ids = await seed(client, n, "job", () => payload);
        await throughput(n, 64, (i) => client.cancel(ids[i]));
        await sleep(5); // olderThanMs 0 still needs completed_at_ms in the past
        const started = process.hrtime.bigint();
        let deleted = 0;
        for (let round = 0; round < Math.ceil(n / 1000) + 5; round++) {
          const batch = await client.purge({ olderThanMs: 0, limit: 1000 });
          deleted += batch.length;
          if (batch.length < 1000) break;
        }
        const value = deleted / seconds(started);
        return { values: [value], detail: deleted === n ? undefined : `purged ${deleted} of ${n}` };
      }),
  },
};

await standalone(import.meta.url, figures);
