// A watch signal's reason is one of three words.
import { CairnQ } from "cairnq";

CairnQ.sqlite("/tmp/misuse.db").watch({}, (signal) => {
  if (signal.reason === "canceled") console.log(signal); // @expect-error-here
});
