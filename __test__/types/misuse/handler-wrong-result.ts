// A typed handler must return the TaskDef's result type.
import { Worker, defineTask } from "cairnq";

const add = defineTask<{ a: number; b: number }, number>("add");
Worker.sqlite("/tmp/misuse.db").task(add, async (_ctx, { a, b }) => `${a + b}`); // @expect-error-here
