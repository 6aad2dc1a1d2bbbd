// BullMQ on the Redis server bench/peers.mjs starts (AOF, fsync every second).
import { Queue, QueueEvents, Worker } from "bullmq";

export const name = "bullmq";

export async function open(location) {
  const connection = { host: "127.0.0.1", port: Number(new URL(location).port), maxRetriesPerRequest: null };
  const queue = new Queue("bench", { connection });
  const defaults = { removeOnComplete: false, removeOnFail: false };
  const workers = [];
  let events = null;
  return {
    submit: (payload) => queue.add("job", payload, defaults),
    submitMany: (payloads) => queue.addBulk(payloads.map((data) => ({ name: "job", data, opts: defaults }))),
    async work(concurrency, handler) {
      const worker = new Worker("bench", async (job) => (job.name === "echo" ? job.data : handler(job.data)), {
        connection,
        concurrency,
      });
      await worker.waitUntilReady();
      workers.push(worker);
    },
    async call(payload) {
      if (!events) {
        events = new QueueEvents("bench", { connection });
        await events.waitUntilReady();
      }
      const job = await queue.add("echo", payload, defaults);
      return job.waitUntilFinished(events);
    },
    async close() {
      await Promise.all(workers.map((w) => w.close()));
      if (events) await events.close();
      await queue.close();
    },
  };
}
