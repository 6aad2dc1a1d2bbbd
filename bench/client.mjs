// Client operations: submit (sequential and 64 in flight), get, cancel and
// purge, on SQLite or (with --pg=DSN) Postgres.
// Usage: node bench/client.mjs [--reps=5] [--n=20000] [--pg=postgres://…]
import { argValue, benchTarget, openClient, repeat, throughput } from "./lib.mjs";

const reps = Number(argValue("reps", 5));
const n = Number(argValue("n", 20000));
const target = benchTarget();
const payload = { user: 42, action: "resize", sizes: [64, 128, 256] };

async function withClient(label, fn) {
  const location = target.fresh(label);
  const client = openClient(location);
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.close();
    target.release(location);
  }
}

async function seeded(label, count, fn) {
  return withClient(label, async (client) => {
    const ids = [];
    await throughput(count, 64, async () => ids.push((await client.submit("job", payload)).id));
    return fn(client, ids);
  });
}

console.log(`cairnq client benchmark — ${target.name}, n=${n}, ${reps} repetitions, median (min, max)`);
await repeat("submit, sequential", reps, () =>
  withClient("seq", (c) => throughput(Math.min(n, 5000), 1, () => c.submit("job", payload))),
);
await repeat("submit, 64 in flight", reps, () =>
  withClient("par", (c) => throughput(n, 64, () => c.submit("job", payload))),
);
await repeat("get, sequential", reps, () =>
  seeded("get1", 2000, (c, ids) => throughput(n, 1, (i) => c.get(ids[i % ids.length]))),
);
await repeat("get, 64 in flight", reps, () =>
  seeded("get64", 2000, (c, ids) => throughput(n, 64, (i) => c.get(ids[i % ids.length]))),
);
await repeat("cancel, 64 in flight", reps, () =>
  seeded("cancel", n, (c, ids) => throughput(ids.length, 64, (i) => c.cancel(ids[i]))),
);
await repeat("purge (rows deleted per second)", reps, () =>
  seeded("purge", n, async (c, ids) => {
    await throughput(ids.length, 64, (i) => c.cancel(ids[i]));
    await new Promise((r) => setTimeout(r, 5));
    const started = process.hrtime.bigint();
    let deleted = 0;
    for (;;) {
      const batch = await c.purge({ limit: 1000 });
      deleted += batch.length;
      if (batch.length < 1000) break;
    }
    return deleted / (Number(process.hrtime.bigint() - started) / 1e9);
  }),
);
