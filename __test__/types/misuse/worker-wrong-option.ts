// A misspelled worker option is caught.
import { Worker } from "cairnq";

Worker.sqlite("/tmp/misuse.db", { leaseMS: 500 }); // @expect-error-here
