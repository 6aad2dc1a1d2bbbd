// A listener process for bench/events.mjs: subscribes to every event on
// --location= (package at --entry=), tells its parent "ready" once it holds its
// position, and measures each event's delivery latency (its receipt here
// minus the event's `at`, the writer's clock: one machine). With
// --tasks=N it reports once 3·N events came: latencies (p50, p99), and each
// task's history against queued → started → succeeded (missing or out of
// order), and the CPU time this process spent from its subscription's start,
// and the latencies of each kind apart (bulk submits' queued events wait for
// the listeners to read them, a worker's started and succeeded ones do not).
// Without, it only consumes, until its parent goes away.
import { argNumber, argValue, loadPackage, openClient, percentile } from "./lib.mjs";

const HISTORY = ["queued", "started", "succeeded"];
const pkg = await loadPackage();
const client = openClient(pkg, argValue("location"));
const tasks = argNumber("tasks", 0);
const subscription = client.events();
process.once("disconnect", () => subscription.close());
await subscription.ready();
process.send?.("ready");
const cpuAtStart = process.cpuUsage();
const latencies = [];
/** @type {Record<string, number[]>} */
const byKind = {};
const byTask = new Map();
for await (const e of subscription) {
  const latency = Date.now() - e.at;
  latencies.push(latency);
  (byKind[e.kind] ??= []).push(latency);
  if (!byTask.has(e.taskId)) byTask.set(e.taskId, []);
  byTask.get(e.taskId).push(e.kind);
  if (tasks > 0 && latencies.length === tasks * HISTORY.length) break;
}
if (tasks > 0) {
  const cpu = process.cpuUsage(cpuAtStart);
  let wrong = 0;
  for (const kinds of byTask.values()) if (kinds.join() !== HISTORY.join()) wrong += 1;
  process.send?.({
    events: latencies.length,
    tasks: byTask.size,
    missing: tasks - byTask.size,
    wrong,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    cpuMs: (cpu.user + cpu.system) / 1000,
    latencies,
    byKind,
  });
}
subscription.close();
await client.close();
if (process.connected) process.disconnect();
