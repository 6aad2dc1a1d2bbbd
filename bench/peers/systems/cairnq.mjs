// cairnq itself, on SQLite (a file) or Postgres (a DSN), as bench/peer-figure.mjs drives every system.
import { loadPackage, openClient, openWorker } from "../../lib.mjs";

export const name = "cairnq";

export async function open(location) {
  const pkg = await loadPackage();
  const client = openClient(pkg, location);
  await client.connect();
  const workers = [];
  return {
    submit: (payload) => client.submit("job", payload),
    submitMany: (payloads) => client.submitMany(payloads.map((payload) => ({ task: "job", payload }))),
    async work(concurrency, handler) {
      const worker = openWorker(pkg, location, { pollIntervalMs: 50, concurrency });
      worker.task("job", handler);
      worker.task("echo", (payload) => payload);
      const running = worker.run();
      workers.push({ worker, running });
    },
    call: (payload) => client.call("echo", payload),
    async close() {
      for (const { worker, running } of workers) {
        worker.stop();
        await running;
        await worker.close();
      }
      await client.close();
    },
  };
}
