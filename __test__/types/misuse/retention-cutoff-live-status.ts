// Per-status retention names terminal statuses only.
import { RetentionSweeper, SQLiteStore } from "cairnq";

const store = new SQLiteStore("/tmp/misuse.db");
new RetentionSweeper(store, { olderThanMs: { running: 1000 } }); // @expect-error-here
