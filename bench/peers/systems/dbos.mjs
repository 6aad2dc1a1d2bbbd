// DBOS Transact on Postgres (a DSN as its system database): tasks are
// workflows enqueued on a queue through a `DBOSClient`, run by the process's
// one DBOS runtime. DBOS has no bulk enqueue, so a drain's backlog goes in as
// concurrent enqueues; `call()` is an enqueue and its handle's `getResult`.
import dbos from "@dbos-inc/dbos-sdk";

const { DBOS, DBOSClient } = dbos;

export const name = "dbos";

const QUEUE = "bench";
/** The same poll interval as cairnq's bench workers; DBOS's default is a second. */
const POLL_MS = 50;
/** A handle's result is polled for (its default: every second); no push wakes it. */
const RESULT_POLL_MS = 5;

export async function open(location) {
  await DBOS.migrate(location);
  const client = await DBOSClient.create({ systemDatabaseUrl: location, applicationName: "bench" });
  const enqueue = (workflowName, payload) => client.enqueue({ queueName: QUEUE, workflowName }, payload);
  let launched = false;
  return {
    submit: (payload) => enqueue("job", payload),
    async submitMany(payloads) {
      const inFlight = 64;
      for (let from = 0; from < payloads.length; from += inFlight) {
        await Promise.all(payloads.slice(from, from + inFlight).map((payload) => enqueue("job", payload)));
      }
    },
    async work(concurrency, handler) {
      // One DBOS runtime a process: its workflows are declared before launch.
      DBOS.setConfig({ name: "bench", systemDatabaseUrl: location, logLevel: "error" });
      DBOS.registerWorkflow(async (payload) => handler(payload), { name: "job" });
      DBOS.registerWorkflow(async (payload) => payload, { name: "echo" });
      await DBOS.launch();
      await DBOS.registerQueue(QUEUE, { workerConcurrency: concurrency, minPollingIntervalMs: POLL_MS });
      launched = true;
    },
    call: async (payload) => (await enqueue("echo", payload)).getResult({ pollingIntervalMs: RESULT_POLL_MS }),
    async close() {
      if (launched) await DBOS.shutdown();
      await client.destroy();
    },
  };
}
