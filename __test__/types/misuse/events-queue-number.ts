// A queue filter is a string.
import { CairnQ } from "cairnq";

const client = CairnQ.sqlite("/tmp/events.db");
client.events({ queue: 5 }); // @expect-error-here
