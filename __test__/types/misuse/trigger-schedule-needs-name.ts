// triggerSchedule takes the schedule's name.
import { CairnQ } from "cairnq";

const client = CairnQ.sqlite("/tmp/misuse.db");
void client.triggerSchedule(); // @expect-error-here
