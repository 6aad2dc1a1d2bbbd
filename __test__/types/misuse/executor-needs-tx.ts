// A PgExecutor without tx cannot run the store's transactions.
import { CairnQ } from "cairnq";

CairnQ.postgres({ query: async () => [], exec: async () => {} }); // @expect-error-here
