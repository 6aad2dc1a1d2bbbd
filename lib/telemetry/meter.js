"use strict";
// OpenTelemetry metrics of a worker's handler calls (docs/api.md,
// "OpenTelemetry metrics"): with a meter provider registered, every call
// records its duration in `messaging.process.duration`, and every task is
// counted in `messaging.client.consumed.messages` and its queue wait (the
// core's figure) recorded in `cairnq.task.queue_wait.duration`, with the
// attributes of its span.
// Without the API or a provider, `activeInstruments` answers null.

const { SCOPE, VERSION, otel } = require("./otel.js");
const { FINE_OUTCOMES, errorType, messagingAttributes } = require("./trace.js");

/**
 * @typedef {import("@opentelemetry/api").Meter} Meter
 * @typedef {import("@opentelemetry/api").Attributes} Attributes
 * @typedef {import("@opentelemetry/api").Histogram} Histogram
 * @typedef {{ meter: Meter, duration: Histogram, queueWait: Histogram, consumed: import("@opentelemetry/api").Counter }} Instruments
 * @typedef {import("../context.js").TaskFields} TaskFields
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
      duration: meter.createHistogram("messaging.process.duration", {
        unit: "s",
        description: "How long a handler call ran.",
      }),
      queueWait: meter.createHistogram("cairnq.task.queue_wait.duration", {
        unit: "s",
        description: "How long a task had been due when its handler started.",
      }),
      consumed: meter.createCounter("messaging.client.consumed.messages", {
        unit: "{message}",
        description: "Tasks handed to handlers.",
      }),
    };
  }
  return made;
}

/**
 * A handler call starts: its tasks are counted and their queue waits
 * recorded now, its duration at its end.
 * @param {Instruments} instruments
 * @param {string} name
 * @param {TaskFields[]} tasks
 * @returns {Metered}
 */
function startMetered(instruments, name, tasks) {
  const attributes = messagingAttributes("process", "process", tasks[0].queue, name);
  instruments.consumed.add(tasks.length, attributes);
  for (const task of tasks) instruments.queueWait.record((task.queue_wait_ms ?? 0) / 1000, attributes);
  return { instruments, started: performance.now(), attributes };
}

/**
 * @param {Metered} metered
 * @param {"succeeded" | "suspended" | "failed" | "lost_lease"} outcome
 * @param {unknown} [thrown]
 */
function endMetered(metered, outcome, thrown) {
  /** @type {Attributes} */
  const attributes = { ...metered.attributes, "cairnq.task.outcome": outcome };
  if (!FINE_OUTCOMES.has(outcome)) attributes["error.type"] = errorType(thrown);
  metered.instruments.duration.record((performance.now() - metered.started) / 1000, attributes);
}

module.exports = { activeInstruments, startMetered, endMetered };
