// A worker serving until Ctrl-C (SIGINT), for scripts/platforms/ctrl-c.sh:
// a task's handler is in flight when the signal comes, and serve() must let
// it finish, then return. argv[2]: the SQLite file; argv[3]: a file written
// once the handler runs (the cue to press Ctrl-C).
import fs from "node:fs";

import { CairnQ, Worker } from "../../index.mjs";

const [db, started] = process.argv.slice(2);
const client = CairnQ.sqlite(db);
const { id } = await client.submit("slow", {});
const worker = Worker.sqlite(db, { pollIntervalMs: 50 });
worker.task("slow", async () => {
  fs.writeFileSync(started, "running");
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  return { done: true };
});
await worker.serve();
console.log(`serve() returned; the task in flight: ${(await client.get(id)).status}`);
await client.close();
