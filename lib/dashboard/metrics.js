"use strict";
// The dashboard's `/metrics` route: the Prometheus text of its client's
// database and of the workers given in its options. The exporter is made on
// the first scrape (a dashboard nobody scrapes pays nothing); its finished
// counters run from then on.

const { checkWorkers, createMetrics } = require("../metrics.js");
const { SECURITY_HEADERS } = require("./responses.js");

/**
 * @param {import("../client.js").CairnQ} client
 * @param {unknown} workers the dashboard's `workers` option, checked now
 * @returns {() => Promise<Response>}
 */
function metricsRoute(client, workers) {
  const checked = checkWorkers(workers);
  /** @type {import("../../index.js").Metrics | null} */
  let metrics = null;
  return async () => {
    metrics ??= createMetrics({ client: /** @type {any} */ (client), workers: checked });
    const body = await metrics.render();
    return new Response(body, {
      status: 200,
      headers: { ...SECURITY_HEADERS, "content-type": metrics.contentType },
    });
  };
}

module.exports = { metricsRoute };
