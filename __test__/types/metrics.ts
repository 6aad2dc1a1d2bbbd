// The metrics declarations as an application uses them: a /metrics of its own,
// and the dashboard's with a worker's timings. It must compile; never run.
import { CairnQ, Worker, createDashboard, createMetrics } from "cairnq";
import type { Metrics, MetricsOptions } from "cairnq";

const client = CairnQ.sqlite("./queue.db");
const worker = Worker.sqlite("./queue.db");
const options: MetricsOptions = { client, workers: [worker] };
const metrics: Metrics = createMetrics(options);

export async function scrape(): Promise<Response> {
  return new Response(await metrics.render(), { headers: { "content-type": metrics.contentType } });
}

export const dashboard = createDashboard({ client, workers: [worker] });
