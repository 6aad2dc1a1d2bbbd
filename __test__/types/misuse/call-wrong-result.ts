// call resolves to the TaskDef's result type, not anything the caller wants.
import { CairnQ, defineTask } from "cairnq";

const add = defineTask<{ a: number; b: number }, number>("add");
const client = CairnQ.sqlite("/tmp/misuse.db");

export async function main(): Promise<void> {
  const sum: string = await client.call(add, { a: 1, b: 2 }); // @expect-error-here
  console.log(sum);
}
