// A typed handler receives the TaskDef's payload type: it cannot claim another.
import { Worker, defineTask } from "cairnq";

const add = defineTask<{ a: number; b: number }, number>("add");
Worker.sqlite("/tmp/misuse.db").task(add, (_ctx, payload: { a: string }) => payload.a.length); // @expect-error-here
