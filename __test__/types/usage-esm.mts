// An ES-module consumer (`import`, top-level await): resolves index.d.ts
// through the "types" condition of package.json "exports".
import { CairnQ, Worker, defineTask, TaskFailed } from "cairnq";
import type { Task, TaskDef, WorkerOptions } from "cairnq";
import * as cairnq from "cairnq";

const add: TaskDef<{ a: number; b: number }, number> = defineTask<{ a: number; b: number }, number>("add");
const options: WorkerOptions = { leaseMs: 500, pollIntervalMs: 20 };

const worker = Worker.sqlite("/tmp/cairnq-types.db", options).task(add, (_ctx, { a, b }) => a + b);
const client = CairnQ.sqlite("/tmp/cairnq-types.db");
const sum: number = await worker.background(() => client.call(add, { a: 1, b: 2 }));
const task: Task = await client.submit(add, { a: 3, b: 4 });
const statuses: readonly string[] = cairnq.STATUSES;
const failed: boolean = new cairnq.TaskFailed(null) instanceof TaskFailed;
await client.close();
console.log(sum, task.id, statuses, failed);
