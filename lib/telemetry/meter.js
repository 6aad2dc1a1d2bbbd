"use strict";
// OpenTelemetry metrics of a worker's handler calls (docs/api.md,
// "OpenTelemetry metrics"): with a meter provider registered, every call
// records its duration in `messaging.process.duration` and counts its tasks in
// `messaging.client.consumed.messages`, with the attributes of its span.
// Without the API or a provider, `activeInstruments` answers null.

const { SCOPE, VERSION, otel } = require("./otel.js");
const { errorType, messagingAttributes } = require("./trace.js");

/**
 * @typedef {import("@opentelemetry/api").Meter} Meter
 * @typedef {import("@opentelemetry/api").Attributes} Attributes
 * @typedef {{ meter: Meter, duration: import("@opentelemetry/api").Histogram, consumed: import("@opentelemetry/api").Counter }} Instruments
 * @typedef {{ instruments: Instruments, started: number, attributes: Attributes }} Metered a handler call being measured
 */

/** @type {Instruments | null} the instruments of the last meter asked for */
let made = null;

/**
 * The instruments of the registered meter provider, or null when there is
 * none (its meter is then the API's no-op one). Asked once per dispatched poll.
 * @returns {Instruments | null}
 */
function activeInstruments() {
  const otelApi = otel();
  if (otelApi === null) return null;
  const meter = otelApi.metrics.getMeter(SCOPE, VERSION);
  if (meter === otelApi.createNoopMeter()) return null;
  if (made === null || made.meter !== meter) {
    made = {
      meter,
      duration: meter.createHistogram("messaging.process.duration", { unit: "s", description: "How long a handler call ran." }),
      consumed: meter.createCounter("messaging.client.consumed.messages", { unit: "{message}", description: "Tasks handed to handlers." }),
    };
  }
  return made;
}

/**
 * A handler call starts: its tasks are counted now, its duration at its end.
 * @param {Instruments} instruments
 * @param {string} name
 * @param {string} queue
 * @param {number} tasks
 * @returns {Metered}
 */
function startMetered(instruments, name, queue, tasks) {
  const attributes = messagingAttributes("process", "process", queue, name);
  instruments.consumed.add(tasks, attributes);
  return { instruments, started: performance.now(), attributes };
}

/**
 * @param {Metered} metered
 * @param {"succeeded" | "failed" | "lost_lease"} outcome
 * @param {unknown} [thrown]
 */
function endMetered(metered, outcome, thrown) {
  /** @type {Attributes} */
  const attributes = { ...metered.attributes, "cairnq.task.outcome": outcome };
  if (outcome !== "succeeded") attributes["error.type"] = errorType(thrown);
  metered.instruments.duration.record((performance.now() - metered.started) / 1000, attributes);
}

module.exports = { activeInstruments, startMetered, endMetered };
