// propagateBaggage is a boolean (docs/api.md, "Tracing").
import { SQLiteStore } from "cairnq";

new SQLiteStore("app.db", { propagateBaggage: "yes" }); // @expect-error-here
