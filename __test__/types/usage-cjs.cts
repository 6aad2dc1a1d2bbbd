// A CommonJS consumer: `import x = require(...)` and type-only imports, as
// compiled from a .cts file (or a .ts file of a "type": "commonjs" package).
import cairnq = require("cairnq");
import type { Task, CallOptions } from "cairnq";

const { CairnQ, Worker, defineTask } = cairnq;

const echo = defineTask<{ text: string }, string>("echo");

async function main(path: string): Promise<string> {
  const worker = Worker.sqlite(path).task(echo, async (_ctx, { text }) => text);
  const client = CairnQ.sqlite(path);
  const options: CallOptions = { waitTimeoutMs: 5_000 };
  const out: string = await worker.background(() => client.call(echo, { text: "hi" }, options));
  const task: Task | null = await client.get("task_x");
  const error: InstanceType<typeof cairnq.TaskError> = new cairnq.TaskError("x");
  await client.close();
  return `${out} ${task?.status} ${error.code}`;
}

export = main;
