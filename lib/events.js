"use strict";
// client.events (docs/api.md, "Events"): the core's subscription, read one
// page (a JSON array) at a time as the consumer asks, so memory stays bounded
// however far behind it is. An async iterator, and an emitter once an "event"
// listener is added. A ref'd timer keeps the process alive until close().

const { EventEmitter } = require("node:events");
const { encodeOptions } = require("./json.js");
const { nativeSync, raise } = require("./native-call.js");

/** @typedef {import("../index.js").TaskEvent} TaskEvent */
/** @typedef {import("../index.js").EventsOptions} EventsOptions */

/** The longest period a timer holds: it only keeps the event loop alive. */
const KEEP_ALIVE_MS = 2 ** 31 - 1;

class EventSubscription extends EventEmitter {
  /**
   * @param {import("../binding.js").NativeEvents} native
   */
  constructor(native) {
    super();
    this._native = native;
    /** @type {TaskEvent[]} */
    this._page = [];
    this._next = 0;
    this._closed = false;
    this._emitting = false;
    this._alive = setInterval(() => {}, KEEP_ALIVE_MS);
    // The position is taken now, not at the first read; a failure is the
    // first read's to report.
    this._started = native.start().catch(raise);
    this._started.catch(() => {});
    this.on("newListener", (event) => {
      if (event === "event") this._emit();
    });
  }

  /** Resolves once the subscription holds its position (the tables exist then). */
  ready() {
    return this._started;
  }

  /** Whether `close()` ended the subscription. */
  get closed() {
    return this._closed;
  }

  /** @returns {Promise<IteratorResult<TaskEvent, undefined>>} */
  async next() {
    while (this._next >= this._page.length) {
      if (this._closed) return { done: true, value: undefined };
      await this._started;
      const text = await this._native.next().catch(raise);
      if (text === null || this._closed) {
        this.close();
        return { done: true, value: undefined };
      }
      this._page = JSON.parse(text);
      this._next = 0;
    }
    const value = this._page[this._next];
    this._next += 1;
    return { done: false, value };
  }

  /** A `for await` loop that ends early (break, throw) closes the subscription. */
  async return() {
    this.close();
    return { done: /** @type {const} */ (true), value: undefined };
  }

  [Symbol.asyncIterator]() {
    return this;
  }

  /** End the subscription: a pending read ends, the process may exit. */
  close() {
    if (this._closed) return;
    this._closed = true;
    this._page = [];
    this._next = 0;
    clearInterval(this._alive);
    this._native.close();
    this.emit("close");
  }

  /** The emitter form: each event to the "event" listeners, a failure to "error". */
  async _emit() {
    if (this._emitting) return;
    this._emitting = true;
    try {
      for (;;) {
        const { done, value } = await this.next();
        if (done) return;
        this.emit("event", value);
      }
    } catch (err) {
      this.close();
      this.emit("error", err);
    }
  }
}

/**
 * `client.events(opts)`: a subscription of the store's native events.
 * @param {{ _native: import("../binding.js").NativeStore }} store
 * @param {EventsOptions} [opts]
 * @returns {EventSubscription}
 */
function subscribe(store, opts = {}) {
  const native = nativeSync(() => store._native.events(encodeOptions(/** @type {any} */ (opts ?? {}))));
  return new EventSubscription(native);
}

module.exports = { EventSubscription, subscribe };
