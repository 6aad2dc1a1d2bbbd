// startAt is a Date or epoch milliseconds, not a date text.
import { CairnQ } from "cairnq";

const client = CairnQ.sqlite("/tmp/misuse.db");
void client.schedule("poll", { task: "report", every: 60_000, startAt: "2027-01-01" }); // @expect-error-here
