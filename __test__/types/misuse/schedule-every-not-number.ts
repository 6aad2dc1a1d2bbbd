// every is a number of milliseconds, not a duration text.
import { CairnQ } from "cairnq";

const client = CairnQ.sqlite("/tmp/misuse.db");
void client.schedule("poll", { task: "report", every: "5m" }); // @expect-error-here
