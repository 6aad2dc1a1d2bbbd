"use strict";
// OpenTelemetry traces (docs/api.md, "Tracing"): a producer span around each
// submit, whose context travels with the task in `metadata.traceparent`, and
// a consumer span around each handler call, a child of that context, so a
// submit and every attempt of its task read as one trace.
//
// Without `@opentelemetry/api` (lib/telemetry/otel.js), or without a
// registered tracer provider, `activeTracer` answers "not tracing" before
// anything is built.

const { SCOPE, VERSION, otel } = require("./otel.js");

/**
 * @typedef {import("@opentelemetry/api")} OtelApi
 * @typedef {import("@opentelemetry/api").Tracer} Tracer
 * @typedef {import("@opentelemetry/api").Span} Span
 * @typedef {import("@opentelemetry/api").Context} Context
 * @typedef {import("@opentelemetry/api").Attributes} Attributes
 * @typedef {import("../../index.js").SubmitInput} SubmitInput
 * @typedef {import("../../index.js").Task} Task
 * @typedef {import("../context.js").TaskFields} TaskFields
 * @typedef {{ span: Span, context: Context }} Traced a handler call's consumer span, and its context
 */

/**
 * The metadata key of a task's trace context (W3C Trace Context); the
 * registered propagator writes it (and `tracestate`, `baggage` when it has them).
 */
const TRACEPARENT = "traceparent";
/**
 * What a task's metadata keeps of what the propagator wrote, unless the store
 * opts in to baggage (`propagateBaggage`): baggage often carries user ids
 * and e-mail addresses, which a task row would keep for its whole retention.
 */
const TRACE_CONTEXT_KEYS = [TRACEPARENT, "tracestate"];
const SYSTEM = "cairnq";

/**
 * The tracer of the registered provider, or null when there is none: the
 * global provider is a proxy whose delegate is set only by a registration.
 * Asked on every submit and dispatch, so a provider registered (or removed)
 * later takes effect at once.
 * @returns {Tracer | null}
 */
function activeTracer() {
  const otelApi = otel();
  if (otelApi === null) return null;
  const provider = /** @type {any} */ (otelApi.trace.getTracerProvider());
  if (typeof provider.getDelegateTracer === "function") return provider.getDelegateTracer(SCOPE, VERSION) ?? null;
  return otelApi.trace.getTracer(SCOPE, VERSION);
}

/**
 * The attributes every cairnq span and instrument carries.
 * @param {string} operationType
 * @param {string} operationName
 * @param {string} queue
 * @param {string} name
 * @returns {Attributes}
 */
function messagingAttributes(operationType, operationName, queue, name) {
  return {
    "messaging.system": SYSTEM,
    "messaging.destination.name": queue,
    "messaging.operation.type": operationType,
    "messaging.operation.name": operationName,
    "cairnq.task.name": name,
  };
}

/**
 * Submit through `write` inside a producer span: the span's context goes into
 * the task's metadata (its baggage too when `propagateBaggage`), and the span
 * ends when the write is answered.
 * @param {Tracer} tracer
 * @param {SubmitInput} input
 * @param {boolean} propagateBaggage
 * @param {(input: SubmitInput) => Promise<Task>} write
 * @returns {Promise<Task>}
 */
function tracedSubmit(tracer, input, propagateBaggage, write) {
  const otelApi = /** @type {OtelApi} */ (otel());
  const queue = input.queue ?? "default";
  const span = tracer.startSpan(`submit ${queue}`, {
    kind: otelApi.SpanKind.PRODUCER,
    attributes: messagingAttributes("send", "submit", queue, input.name),
  });
  const metadata = carryContext(
    otelApi,
    otelApi.trace.setSpan(otelApi.context.active(), span),
    input.metadata,
    propagateBaggage,
  );
  return write(metadata === input.metadata ? input : { ...input, metadata }).then(
    (task) => {
      span.setAttribute("messaging.message.id", task.id);
      span.end();
      return task;
    },
    (err) => {
      failSpan(span, err);
      span.end();
      throw err;
    },
  );
}

/**
 * `given` metadata with `context` injected by the registered propagator (its
 * baggage only when `propagateBaggage`), or `given` itself when nothing was
 * injected. Only a plain object (or none) takes the keys: anything else
 * (refused by the core, or encoded by its own toJSON) travels as given.
 * @param {OtelApi} otelApi
 * @param {Context} context
 * @param {unknown} given
 * @param {boolean} propagateBaggage
 * @returns {unknown}
 */
function carryContext(otelApi, context, given, propagateBaggage) {
  const base = given ?? {};
  const prototype = base !== null && typeof base === "object" ? Object.getPrototypeOf(base) : undefined;
  if (prototype !== Object.prototype && prototype !== null) return given;
  /** @type {Record<string, string>} */
  const carrier = {};
  otelApi.propagation.inject(context, carrier);
  const kept = propagateBaggage ? carrier : traceContextOf(carrier);
  return kept[TRACEPARENT] === undefined ? given : { ...base, ...kept };
}

/**
 * A child's metadata (`ctx.callChild`, which submits natively, not through
 * `tracedSubmit`): the active context, the handler's consumer span, carried
 * as a submit carries its producer span, so the child's run is a span of its
 * parent's trace. `given` itself when not tracing.
 * @param {unknown} given
 * @param {boolean} propagateBaggage
 * @returns {unknown}
 */
function childMetadata(given, propagateBaggage) {
  if (activeTracer() === null) return given;
  const otelApi = /** @type {OtelApi} */ (otel());
  return carryContext(otelApi, otelApi.context.active(), given, propagateBaggage);
}

/**
 * The W3C Trace Context keys of what the propagator wrote, nothing else.
 * @param {Record<string, string>} carrier
 * @returns {Record<string, string>}
 */
function traceContextOf(carrier) {
  /** @type {Record<string, string>} */
  const kept = {};
  for (const key of TRACE_CONTEXT_KEYS) if (carrier[key] !== undefined) kept[key] = carrier[key];
  return kept;
}

/**
 * Open the consumer span of one handler call: a child of the submit's context
 * (read back from metadata). A batch call gets one span linked to each of its
 * tasks' contexts.
 * @param {Tracer} tracer
 * @param {string} name
 * @param {boolean} batch
 * @param {TaskFields[]} tasks
 * @returns {Traced}
 */
function startProcess(tracer, name, batch, tasks) {
  const otelApi = /** @type {OtelApi} */ (otel());
  const first = tasks[0];
  const attributes = messagingAttributes("process", "process", first.queue, name);
  /** @type {Context} */
  let parent = otelApi.context.active();
  /** @type {import("@opentelemetry/api").Link[] | undefined} */
  let links;
  if (batch) {
    attributes["messaging.batch.message_count"] = tasks.length;
    links = [];
    for (const task of tasks) {
      const linked = otelApi.trace.getSpanContext(extract(otelApi, task));
      if (linked) links.push({ context: linked });
    }
  } else {
    attributes["messaging.message.id"] = first.id;
    attributes["cairnq.task.attempt"] = first.attempt;
    parent = extract(otelApi, first);
  }
  const span = tracer.startSpan(
    `process ${first.queue}`,
    { kind: otelApi.SpanKind.CONSUMER, attributes, links },
    parent,
  );
  return { span, context: otelApi.trace.setSpan(parent, span) };
}

/**
 * The trace context a task carries in its metadata, over `base`.
 * @param {OtelApi} otelApi
 * @param {TaskFields} task
 * @returns {Context}
 */
function extract(otelApi, task) {
  const base = otelApi.context.active();
  const metadata = task.metadata;
  if (metadata === null || typeof metadata !== "object" || typeof metadata[TRACEPARENT] !== "string") return base;
  return otelApi.propagation.extract(base, metadata);
}

/**
 * Run `fn(...args)` with the consumer span active (children the handler
 * submits, and spans of the application's own, nest under it).
 * @template {unknown[]} A
 * @template T
 * @param {Traced} traced
 * @param {(...args: A) => T} fn
 * @param {A} args
 * @returns {T}
 */
function runInSpan(traced, fn, ...args) {
  return /** @type {OtelApi} */ (otel()).context.with(traced.context, fn, undefined, ...args);
}

/**
 * How a handler ends without an error: it returned, or a durable step sent
 * its task back to the queue (docs/api.md, "Durable steps").
 */
const FINE_OUTCOMES = new Set(["succeeded", "suspended"]);

/**
 * End a consumer span with how its handler ended.
 * @param {Traced} traced
 * @param {"succeeded" | "suspended" | "failed" | "lost_lease"} outcome
 * @param {unknown} [thrown] what a failed handler threw
 */
function endProcess(traced, outcome, thrown) {
  traced.span.setAttribute("cairnq.task.outcome", outcome);
  if (!FINE_OUTCOMES.has(outcome)) failSpan(traced.span, thrown);
  traced.span.end();
}

/**
 * Record `err` on `span` (the `exception` event) and set its error status.
 * @param {Span} span
 * @param {unknown} err
 */
function failSpan(span, err) {
  const otelApi = /** @type {OtelApi} */ (otel());
  const error = err instanceof Error ? err : null;
  if (error) span.recordException(error);
  else if (err !== undefined) span.recordException(String(err));
  span.setAttribute("error.type", errorType(err));
  span.setStatus({
    code: otelApi.SpanStatusCode.ERROR,
    message: error?.message ?? (err === undefined ? undefined : String(err)),
  });
}

/**
 * The `error.type` of a failure: the thrown error's name.
 * @param {unknown} err
 */
function errorType(err) {
  return err instanceof Error ? err.name : "Error";
}

module.exports = {
  FINE_OUTCOMES,
  errorType,
  messagingAttributes,
  activeTracer,
  tracedSubmit,
  childMetadata,
  startProcess,
  runInSpan,
  endProcess,
};
