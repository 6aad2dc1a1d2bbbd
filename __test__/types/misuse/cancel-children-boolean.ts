// cancel's children option is a boolean.
import { CairnQ } from "cairnq";

const client = CairnQ.sqlite("/tmp/misuse.db");
void client.cancel("task_1", { children: "no" }); // @expect-error-here
