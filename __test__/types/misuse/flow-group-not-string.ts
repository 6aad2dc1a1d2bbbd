// A group is a string, not a number.
import { CairnQ } from "cairnq";

const client = CairnQ.sqlite("/tmp/misuse.db");
void client.submit("export", {}, { group: 42 }); // @expect-error-here
