// purge's status filter is a TaskStatus.
import { CairnQ } from "cairnq";

const client = CairnQ.sqlite("/tmp/misuse.db");
void client.purge({ status: "done" }); // @expect-error-here
