// Nothing but the documented exports is reachable (no module-internal helpers).
import { retryDelayMs } from "cairnq"; // @expect-error-here

console.log(retryDelayMs);
