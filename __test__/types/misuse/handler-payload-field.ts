// Inside a typed handler the payload is P, so a missing field is an error.
import { Worker, defineTask } from "cairnq";

const add = defineTask<{ a: number; b: number }, number>("add");
Worker.sqlite("/tmp/misuse.db").task(add, (_ctx, payload) => {
  return payload.a + payload.c; // @expect-error-here
});
