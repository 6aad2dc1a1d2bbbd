"use strict";
// Preloaded by bench/telemetry.mjs (`--require`): a tracer provider that
// records every span and exports none, with the W3C propagator and the
// AsyncLocalStorage context manager: tracing on, without an exporter's cost.
const { context, propagation, trace } = require("@opentelemetry/api");
const { AsyncLocalStorageContextManager } = require("@opentelemetry/context-async-hooks");
const { W3CTraceContextPropagator } = require("@opentelemetry/core");
const { BasicTracerProvider } = require("@opentelemetry/sdk-trace-base");

trace.setGlobalTracerProvider(new BasicTracerProvider());
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
propagation.setGlobalPropagator(new W3CTraceContextPropagator());
