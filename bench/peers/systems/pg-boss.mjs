// pg-boss on Postgres (a DSN), tuned for throughput as its docs suggest: a
// notifying queue, batches of 32 fetched back to back while they come full.
// It has no enqueue-and-await, so no call().
import { PgBoss } from "pg-boss";

export const name = "pg-boss";

export async function open(location) {
  const boss = new PgBoss({ connectionString: location, max: 10 });
  boss.on("error", (error) => console.error(error));
  await boss.start();
  await boss.createQueue("job", { notify: true });
  return {
    submit: (payload) => boss.send("job", payload),
    submitMany: (payloads) =>
      boss.insert(
        "job",
        payloads.map((data) => ({ data })),
      ),
    async work(concurrency, handler) {
      await boss.work(
        "job",
        { localConcurrency: concurrency, batchSize: 32, burstWhenBatchFull: true, pollingIntervalSeconds: 0.5 },
        async (jobs) => {
          for (const job of jobs) await handler(job.data);
        },
      );
    },
    async close() {
      await boss.stop({ graceful: false, wait: true });
    },
  };
}
