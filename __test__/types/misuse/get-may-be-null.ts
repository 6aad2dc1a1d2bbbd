// get/getByKey resolve to Task | null: the null case must be handled.
import { CairnQ } from "cairnq";

const client = CairnQ.sqlite("/tmp/misuse.db");
export async function main(): Promise<string> {
  const task = await client.get("task_x");
  return task.status; // @expect-error-here
}
