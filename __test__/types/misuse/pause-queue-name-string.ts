// pauseQueue takes a queue name, a string.
import { CairnQ } from "cairnq";

const client = CairnQ.sqlite("/tmp/misuse.db");
void client.pauseQueue(7); // @expect-error-here
