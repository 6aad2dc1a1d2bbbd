// The echo worker of bench/peer-figure.mjs's `call` figure: one system's
// worker (concurrency 8) in its own process, until SIGTERM.
import { argValue } from "./lib.mjs";
import { openSystem } from "./peer-figure.mjs";

const system = await openSystem(argValue("system"), argValue("location"));
await system.work(8, () => null);
console.log("ready");
process.once("SIGTERM", async () => {
  await system.close();
  process.exit(0);
});
