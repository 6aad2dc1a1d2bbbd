// submitIn refuses debounce (it may start a table inside the caller's transaction): not in its options.
import { CairnQ } from "cairnq";

const cq = CairnQ.postgres("postgres:///app");
export const ref = cq.submitIn({ query: async () => [] }, "receipt", {}, { debounceMs: 10 }); // @expect-error-here
