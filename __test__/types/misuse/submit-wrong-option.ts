// A misspelled submit option is caught.
import { CairnQ } from "cairnq";

const client = CairnQ.sqlite("/tmp/misuse.db");
void client.submit("job", {}, { maxAttempt: 5 }); // @expect-error-here
