"use strict";
// `GET api/live`: the dashboard's live updates as server-sent events. One
// subscription of the client's task events (docs/api.md, "Events") serves
// every open page: opened with the first stream, closed after the last. Its
// events are folded into one `change` message per FLUSH_MS naming the queues
// and tasks that changed, and the page reads what it shows again when a
// message concerns it, instead of reading on a timer. A stream whose reader
// is behind gets no more messages but one `everything changed` once it has
// drained, so a stuck page holds a bounded buffer. A client whose store has
// no events (a foreign store) answers `unavailable`: the page polls.

const { SECURITY_HEADERS } = require("./responses.js");

/** How long events are gathered into one message: a page reads at most this often. */
const FLUSH_MS = 50;
/** Task ids one message names at most; more changed tasks make it `all`. */
const MAX_TASK_IDS = 100;
/** A comment line this often keeps proxies from closing an idle stream. */
const KEEPALIVE_MS = 15_000;
/** What a stream buffers (messages) before its reader is deemed behind. */
const HIGH_WATER = 16;

/**
 * What changed since the last message.
 * @typedef {{ queues: Set<string>, tasks: Set<string>, all: boolean }} Pending
 */

const encoder = new TextEncoder();
const HEADERS = { ...SECURITY_HEADERS, "content-type": "text/event-stream; charset=utf-8" };

/** @returns {Pending} */
function nothingPending() {
  return { queues: new Set(), tasks: new Set(), all: false };
}

/** @param {string} event @param {unknown} data */
function message(event, data) {
  return encoder.encode(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

/**
 * @param {import("../client.js").CairnQ} client
 * @param {boolean} enabled false: every stream answers `unavailable` (the dashboard's `live: false`)
 */
function liveFeed(client, enabled) {
  /** @type {Set<ReadableStreamDefaultController<Uint8Array>>} */
  const streams = new Set();
  /** @type {import("../events.js").EventSubscription | null} */
  let subscription = null;
  let pending = nothingPending();
  /** @type {ReturnType<typeof setTimeout> | null} */
  let flushTimer = null;
  /** Streams behind their reader: they get `all` once they drain. */
  const behind = new WeakSet();

  /** Messages sent so far: what a cached read compares to see it is stale. */
  let flushed = 0;

  function flush() {
    flushTimer = null;
    flushed += 1;
    const change = pending.all
      ? { all: true, queues: [], tasks: [] }
      : { all: false, queues: [...pending.queues], tasks: [...pending.tasks] };
    pending = nothingPending();
    const bytes = message("change", change);
    for (const stream of streams) send(stream, bytes);
  }

  /** @param {ReadableStreamDefaultController<Uint8Array>} stream @param {Uint8Array} bytes */
  function send(stream, bytes) {
    if ((stream.desiredSize ?? 0) <= 0) {
      behind.add(stream);
      return;
    }
    stream.enqueue(bytes);
  }

  /** @param {import("../../index.js").TaskEvent | import("../../index.js").EventGap} event */
  function gather(event) {
    if (event.kind === "gap" || pending.tasks.size >= MAX_TASK_IDS) pending.all = true;
    else {
      pending.queues.add(event.queue);
      pending.tasks.add(event.taskId);
    }
    flushTimer ??= setTimeout(flush, FLUSH_MS);
  }

  /**
   * Subscribe, unless subscribed: the message a new stream starts with
   * (`unavailable` with the reason when the client has no events).
   * @returns {Uint8Array}
   */
  function subscribe() {
    if (subscription !== null) return message("ready", {});
    if (!enabled) return message("unavailable", { reason: "live updates are off (live: false)" });
    try {
      subscription = client.events();
    } catch (err) {
      return message("unavailable", { reason: /** @type {Error} */ (err).message });
    }
    const mine = subscription;
    mine.on("event", gather);
    // A failed subscription (its tables could not be made, the database went
    // away) turns the pages to polling; the next page to open tries again.
    mine.on("error", (err) => {
      if (subscription !== mine) return;
      subscription = null;
      for (const stream of streams) send(stream, message("unavailable", { reason: err.message }));
    });
    return message("ready", {});
  }

  function closeSubscription() {
    subscription?.close();
    subscription = null;
    if (flushTimer !== null) clearTimeout(flushTimer);
    flushTimer = null;
    pending = nothingPending();
  }

  /** The `api/live` answer: a stream of this page's messages. */
  function route() {
    /** @type {ReadableStreamDefaultController<Uint8Array> | null} */
    let mine = null;
    /** @type {ReturnType<typeof setInterval> | null} */
    let keepalive = null;
    const body = new ReadableStream(
      {
        start(controller) {
          mine = controller;
          controller.enqueue(subscribe());
          streams.add(controller);
          keepalive = setInterval(() => send(controller, encoder.encode(": keep-alive\n\n")), KEEPALIVE_MS);
          keepalive.unref();
        },
        pull(controller) {
          if (!behind.has(controller)) return;
          behind.delete(controller);
          controller.enqueue(message("change", { all: true, queues: [], tasks: [] }));
        },
        cancel() {
          if (keepalive !== null) clearInterval(keepalive);
          if (mine !== null) streams.delete(mine);
          if (streams.size === 0) closeSubscription();
        },
      },
      { highWaterMark: HIGH_WATER },
    );
    return new Response(body, { status: 200, headers: HEADERS });
  }

  /** `HEAD api/live`: the stream's headers, no subscription. */
  function head() {
    return new Response(null, { status: 200, headers: HEADERS });
  }

  /** End every stream and the subscription (the dashboard closes). */
  function close() {
    for (const stream of streams) {
      try {
        stream.close();
      } catch {
        // Already ended by its reader.
      }
    }
    streams.clear();
    closeSubscription();
  }

  return { route, head, close, changes: () => flushed };
}

module.exports = { liveFeed, FLUSH_MS };
