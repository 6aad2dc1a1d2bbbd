// The result check also holds for a handler written on its own, with a body.
import { Worker, defineTask } from "cairnq";
import type { TypedHandler } from "cairnq";

const add = defineTask<{ a: number; b: number }, number>("add");
// The error lands on the declaration: a function-typed variable is checked as a whole.
const handler: TypedHandler<{ a: number; b: number }, number> = async (_ctx, { a, b }) => ({ sum: a + b }); // @expect-error-here
Worker.sqlite("/tmp/misuse.db").task(add, handler);
