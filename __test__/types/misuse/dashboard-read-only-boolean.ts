// readOnly is a boolean.
import { createDashboard } from "cairnq";

export const handler = createDashboard({ db: "./queue.db", readOnly: "yes" }); // @expect-error-here
