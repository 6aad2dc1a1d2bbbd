// A retry backoff is "exponential" or "fixed" (the core refuses other values too).
import { CairnQ } from "cairnq";

const client = CairnQ.sqlite("/tmp/misuse.db");
void client.submit("charge", {}, { retry: { backoff: "linear" } }); // @expect-error-here
