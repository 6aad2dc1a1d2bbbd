// A submit's retry is stored with the task: its backoff cannot be a function.
import { CairnQ } from "cairnq";

const client = CairnQ.sqlite("/tmp/misuse.db");
void client.submit("charge", {}, { retry: { backoff: () => 1_000 } }); // @expect-error-here
