// wait resolves with a Task (possibly failed), not a result.
import { CairnQ } from "cairnq";

const client = CairnQ.sqlite("/tmp/misuse.db");
export async function main(): Promise<number> {
  const result: number = await client.wait("task_x"); // @expect-error-here
  return result;
}
