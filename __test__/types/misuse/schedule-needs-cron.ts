// A schedule needs its cron expression or its interval.
import { CairnQ } from "cairnq";

const client = CairnQ.sqlite("/tmp/misuse.db");
void client.schedule("nightly", { task: "report" }); // @expect-error-here
