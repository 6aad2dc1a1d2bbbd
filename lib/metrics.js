"use strict";
// Prometheus metrics (docs/api.md, "Metrics"): the exporter of a client's
// store and the workers handed to it. What is measured, named and rendered is
// the core's (crates/core/src/metrics); this only passes the handles on.

const { NativeMetrics } = require("./native.js");
const { nativeSync, raise } = require("./native-call.js");

/**
 * @typedef {import("./client.js").CairnQ} CairnQ
 * @typedef {import("./worker.js").Worker} Worker
 * @typedef {import("../index.js").MetricsOptions} MetricsOptions
 * @typedef {import("../index.js").Metrics} Metrics
 */

/** The Prometheus text format's media type. */
const CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/**
 * @param {MetricsOptions} options
 * @returns {Metrics}
 */
function createMetrics(options) {
  const client = /** @type {CairnQ | undefined} */ (/** @type {unknown} */ (options?.client));
  if (!client || typeof client.store !== "object") throw new TypeError("createMetrics needs { client }");
  const workers = checkWorkers(options.workers);
  const native = nativeSync(() => new NativeMetrics(client.store._native));
  for (const worker of workers) native.addWorker(worker._native);
  return {
    contentType: CONTENT_TYPE,
    render: () => native.render().catch(raise),
  };
}

/**
 * @param {unknown} workers
 * @returns {Worker[]}
 */
function checkWorkers(workers) {
  if (workers == null) return [];
  const { Worker } = require("./worker.js");
  if (!Array.isArray(workers) || !workers.every((w) => w instanceof Worker)) {
    throw new TypeError("workers must be an array of Worker instances");
  }
  return workers;
}

module.exports = { createMetrics, checkWorkers, CONTENT_TYPE };
