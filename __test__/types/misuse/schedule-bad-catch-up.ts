// catchUp is one of "none", "latest", "all".
import { CairnQ } from "cairnq";

const client = CairnQ.sqlite("/tmp/misuse.db");
void client.schedule("nightly", { task: "report", cron: "0 2 * * *", catchUp: "everything" }); // @expect-error-here
