// retry's fromStep is a step id, a string.
import { CairnQ } from "cairnq";

const client = CairnQ.sqlite("/tmp/misuse.db");
void client.retry("task_1", { fromStep: 2 }); // @expect-error-here
