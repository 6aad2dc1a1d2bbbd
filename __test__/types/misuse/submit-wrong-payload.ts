// A TaskDef's payload type is enforced by submit.
import { CairnQ, defineTask } from "cairnq";

const resize = defineTask<{ url: string; width: number }, { bytes: number }>("image.resize");
const client = CairnQ.sqlite("/tmp/misuse.db");
void client.submit(resize, { url: "u", width: "64" }); // @expect-error-here
