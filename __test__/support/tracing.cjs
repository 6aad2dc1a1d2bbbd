"use strict";
// OpenTelemetry's own SDK for the tracing tests (CommonJS, so the worker
// fixture loads cairnq through its CommonJS entry while the tests use the ESM
// one): a tracer provider with the in-memory exporter, the AsyncLocalStorage
// context manager and the W3C Trace Context propagator, registered globally.
const { context, propagation, trace } = require("@opentelemetry/api");
const { AsyncLocalStorageContextManager } = require("@opentelemetry/context-async-hooks");
const { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } = require("@opentelemetry/core");
const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = require("@opentelemetry/sdk-trace-base");

/**
 * Register a provider; `uninstall()` puts the API back to no provider.
 * `baggage`: propagate W3C Baggage too, as the NodeSDK's default propagator does.
 */
function installTracing({ baggage = false } = {}) {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  trace.setGlobalTracerProvider(provider);
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const traceContext = new W3CTraceContextPropagator();
  propagation.setGlobalPropagator(
    baggage ? new CompositePropagator({ propagators: [traceContext, new W3CBaggagePropagator()] }) : traceContext,
  );
  return {
    exporter,
    /** Finished spans as plain facts (what crosses a process boundary as JSON). */
    spans: () => exporter.getFinishedSpans().map(spanFacts),
    async uninstall() {
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}

/** @param {import("@opentelemetry/sdk-trace-base").ReadableSpan} span */
function spanFacts(span) {
  const ctx = span.spanContext();
  return {
    name: span.name,
    kind: span.kind,
    traceId: ctx.traceId,
    spanId: ctx.spanId,
    parentSpanId: span.parentSpanContext?.spanId ?? null,
    attributes: { ...span.attributes },
    status: { ...span.status },
    events: span.events.map((e) => ({ name: e.name, attributes: { ...e.attributes } })),
    links: span.links.map((l) => ({ traceId: l.context.traceId, spanId: l.context.spanId })),
  };
}

module.exports = { installTracing, spanFacts };
