// The dashboard handler takes a fetch Request, not a URL string.
import { createDashboard } from "cairnq";

const handler = createDashboard({ db: "./queue.db" });
export const response = handler("/api/overview"); // @expect-error-here
