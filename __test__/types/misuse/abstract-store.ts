// TaskStore is abstract.
import { TaskStore } from "cairnq";

export const store = new TaskStore(); // @expect-error-here
