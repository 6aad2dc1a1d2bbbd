// cancelMany has no completion bounds: its tasks have not finished.
import { CairnQ } from "cairnq";

const client = CairnQ.sqlite("/tmp/bulk.db");
export const page = client.cancelMany({ finishedAfter: 0 }); // @expect-error-here
