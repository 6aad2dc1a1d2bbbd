// A schedule takes a cron or an interval, not both.
import { CairnQ } from "cairnq";

const client = CairnQ.sqlite("/tmp/misuse.db");
void client.schedule("nightly", { task: "report", cron: "0 2 * * *", every: 60_000 }); // @expect-error-here
