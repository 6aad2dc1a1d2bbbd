// A signal names what it is: client.signal takes the task and the name.
import { CairnQ } from "cairnq";

const client = CairnQ.sqlite("/tmp/misuse.db");
void client.signal("task_1"); // @expect-error-here
