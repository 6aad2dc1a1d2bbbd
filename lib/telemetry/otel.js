"use strict";
// `@opentelemetry/api`, an optional peer dependency: looked up once, on first
// use (from the CommonJS and the ESM entry alike: the API keeps its providers
// in one global, whichever of its builds registered them).

/** @typedef {import("@opentelemetry/api")} OtelApi */

/** The instrumentation scope of cairnq's tracer and meter. */
const SCOPE = "cairnq";
const VERSION = require("../../package.json").version;

/** @type {OtelApi | null | undefined} undefined until looked up, null when not installed */
let api;

/** @returns {OtelApi | null} */
function otel() {
  if (api === undefined) {
    try {
      api = require("@opentelemetry/api");
    } catch {
      // Not installed: telemetry is off for the life of the process.
      api = null;
    }
  }
  return /** @type {OtelApi | null} */ (api);
}

module.exports = { SCOPE, VERSION, otel };
