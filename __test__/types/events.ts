// Events as a consumer types them (docs/api.md, "Events"). It must compile
// under `tsc -p __test__/types/tsconfig.json`; it is never run.

import { CairnQ, EventSubscription } from "cairnq";
import type { EventGap, EventsOptions, TaskEvent, TaskEventKind } from "cairnq";

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
declare function expectType<T extends true>(value: T): void;

const client = CairnQ.sqlite("/tmp/events.db");
const options: EventsOptions = { queue: "media", name: "resize", after: "42", pollMs: 250 };
const events = client.events(options);
expectType<Equal<typeof events, EventSubscription>>(true);

async function consume(): Promise<string | null> {
  await events.ready();
  let last: string | null = null;
  for await (const e of events) {
    expectType<Equal<typeof e, TaskEvent | EventGap>>(true);
    last = e.position;
    if (e.kind === "gap") {
      expectType<Equal<typeof e.after, string>>(true);
      continue;
    }
    expectType<Equal<typeof e.kind, TaskEventKind>>(true);
    if (e.kind === "progress") console.log(e.progress, e.message);
    if (e.kind === "failed") console.log(e.error?.message);
  }
  return last;
}

events.on("event", (e) => console.log(e.position));
events.on("error", (err) => console.log(err.message));
events.once("close", () => console.log("closed"));
const resumed = client.events({ after: "0" });
resumed.close();
expectType<Equal<typeof resumed.closed, boolean>>(true);
void consume();
