// call checks the payload against the TaskDef, like submit.
import { CairnQ, defineTask } from "cairnq";

const add = defineTask<{ a: number; b: number }, number>("add");
const client = CairnQ.sqlite("/tmp/misuse.db");
void client.call(add, { a: 1 }); // @expect-error-here
