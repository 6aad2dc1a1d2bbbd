// graphile-worker on Postgres (a DSN). It has no enqueue-and-await, so no call().
import { Logger, makeWorkerUtils, run } from "graphile-worker";

export const name = "graphile-worker";

export async function open(location) {
  const utils = await makeWorkerUtils({ connectionString: location, logger: quietLogger });
  await utils.migrate();
  const runners = [];
  return {
    submit: (payload) => utils.addJob("job", payload),
    submitMany: (payloads) => utils.addJobs(payloads.map((payload) => ({ identifier: "job", payload }))),
    async work(concurrency, handler) {
      const runner = await run({
        connectionString: location,
        concurrency,
        noHandleSignals: true,
        pollInterval: 500,
        taskList: { job: async (payload) => handler(payload) },
        logger: quietLogger,
      });
      runners.push(runner);
    },
    async close() {
      for (const runner of runners) await runner.stop();
      await utils.release();
    },
  };
}

// Errors only: its info lines would be most of the run's output.
const quietLogger = new Logger(() => (level, message) => {
  if (level === "error") console.error(message);
});
