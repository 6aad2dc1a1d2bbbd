// A schedule needs its cron expression.
import { CairnQ } from "cairnq";

const client = CairnQ.sqlite("/tmp/misuse.db");
void client.schedule("nightly", { task: "report" }); // @expect-error-here
