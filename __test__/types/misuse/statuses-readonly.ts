// STATUSES is a readonly tuple.
import { STATUSES } from "cairnq";

STATUSES.push("archived"); // @expect-error-here
