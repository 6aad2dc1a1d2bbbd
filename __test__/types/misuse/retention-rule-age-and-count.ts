// A retention rule is by age or by count, not both.
import { RetentionSweeper, SQLiteStore } from "cairnq";

const store = new SQLiteStore("/tmp/misuse.db");
new RetentionSweeper(store, { keepLast: [{ status: "succeeded", keepLast: 10, olderThanMs: 0 }] }); // @expect-error-here
