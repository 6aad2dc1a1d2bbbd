// retryMany takes back failed or canceled tasks only.
import { CairnQ } from "cairnq";

const client = CairnQ.sqlite("/tmp/bulk.db");
export const page = client.retryMany({ status: "queued" }); // @expect-error-here
