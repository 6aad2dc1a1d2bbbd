// debounceMs is a number of milliseconds, not a duration text.
import { CairnQ } from "cairnq";

const client = CairnQ.sqlite("/tmp/misuse.db");
void client.submit("save", {}, { key: "k", debounceMs: "2s" }); // @expect-error-here
