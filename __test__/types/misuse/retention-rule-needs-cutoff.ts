// A retention rule must say how old its tasks must be.
import { RetentionSweeper, SQLiteStore } from "cairnq";

const store = new SQLiteStore("/tmp/misuse.db");
new RetentionSweeper(store, { olderThanMs: [{ queue: "q" }] }); // @expect-error-here
