// submitMany's items take submit's options, and only those.
import { CairnQ } from "cairnq";

const cq = CairnQ.sqlite("q.db");
export const refs = cq.submitMany([{ task: "a", options: { prio: 1 } }]); // @expect-error-here
