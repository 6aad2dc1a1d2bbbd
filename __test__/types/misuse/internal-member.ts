// The JS layer's internals are not part of the public types.
import { CairnQ } from "cairnq";

const client = CairnQ.sqlite("/tmp/misuse.db");
void client.store._wait("task_x", 1000); // @expect-error-here
