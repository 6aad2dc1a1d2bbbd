// allowedHosts answers any host only as `true`; `false` or a bare string is not a value.
import { createDashboard } from "cairnq";

export const handler = createDashboard({ db: "./queue.db", allowedHosts: "*" }); // @expect-error-here
