// A schedule's payload is checked against its TaskDef, like submit's.
import { CairnQ, defineTask } from "cairnq";

const report = defineTask<{ kind: string }, void>("report");
const client = CairnQ.sqlite("/tmp/misuse.db");
void client.schedule("nightly", { task: report, cron: "0 2 * * *", payload: { kind: 1 } }); // @expect-error-here
