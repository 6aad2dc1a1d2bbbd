// submitMany takes items, not submit's positional arguments.
import { CairnQ } from "cairnq";

const cq = CairnQ.sqlite("q.db");
export const refs = cq.submitMany(["a", {}]); // @expect-error-here
