// list's status filter is a TaskStatus.
import { CairnQ } from "cairnq";

const client = CairnQ.sqlite("/tmp/misuse.db");
void client.list({ status: "done" }); // @expect-error-here
