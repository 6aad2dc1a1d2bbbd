// overlap is "allow" or "skip".
import { CairnQ } from "cairnq";

const client = CairnQ.sqlite("/tmp/misuse.db");
void client.schedule("nightly", { task: "report", cron: "0 2 * * *", overlap: "queue" }); // @expect-error-here
