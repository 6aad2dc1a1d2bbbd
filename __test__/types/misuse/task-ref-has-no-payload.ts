// getStatus answers a TaskRef: id and status, no payload.
import { CairnQ } from "cairnq";

const client = CairnQ.sqlite("/tmp/misuse.db");
void client.getStatus("task_x").then((ref) => ref?.payload); // @expect-error-here
