// Only the four conflict strategies exist.
import { CairnQ } from "cairnq";

const client = CairnQ.sqlite("/tmp/misuse.db");
void client.submit("job", {}, { key: "k", conflict: "ignore" }); // @expect-error-here
