// schema names one schema.
import { CairnQ } from "cairnq";

CairnQ.postgres("postgres:///app", { schema: ["a", "b"] }); // @expect-error-here
