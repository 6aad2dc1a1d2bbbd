"use strict";
// The writes of one JS tick (ARCHITECTURE.md, "A task's life"): each is
// encoded when issued, so an argument JSON cannot carry refuses that write
// alone; once the tick's microtasks have run they cross to Rust together as
// one JSON text and share one commit, tried on this thread first where the
// store can answer without waiting. Each write's reply is read from the
// tick's replies (or its own error).

const { fromNative } = require("./errors.js");
const { encodeOptions } = require("./json.js");

/** @typedef {{ kind: string, [field: string]: unknown }} WriteArgs */

class TickWrites {
  /** @param {import("../binding.js").NativeStore} native */
  constructor(native) {
    this._native = native;
    /**
     * Writes issued in this tick, encoded, not yet handed to Rust.
     * @type {string[]}
     */
    this._tick = [];
    /**
     * This tick's replies, in the order of `_tick`.
     * @type {Promise<any[]>}
     */
    this._tickReplies = Promise.resolve(/** @type {any[]} */ ([]));
    /** Whether a tick's writes may be tried on this thread first. */
    this.inline = true;
  }

  /**
   * Writes issued in the same JS tick are handed to Rust together once the
   * tick's microtasks have run (process.nextTick queued from a microtask runs
   * after all of them) and share one commit; they are tried on this thread
   * first, which SQLite answers without waiting when nobody else is writing.
   * @param {WriteArgs} args
   * @returns {Promise<any>} the row Rust replied with, or null
   */
  write(args) {
    // Encoded now, so an argument JSON cannot carry refuses this write alone.
    let encoded;
    try {
      encoded = encodeOptions(args);
    } catch (err) {
      return Promise.reject(
        new Error(`${args.kind}: an argument JSON cannot carry: ${err instanceof Error ? err.message : String(err)}`),
      );
    }
    const index = this._tick.push(encoded) - 1;
    if (index === 0) {
      this._tickReplies = new Promise((resolve, reject) => process.nextTick(() => this._flush(resolve, reject)));
    }
    // One promise settles the whole tick; each write only derives its own from
    // it (no settler functions per write: less garbage for long submit runs).
    return this._tickReplies.then(replyAt(index));
  }

  /**
   * @param {(replies: any[]) => void} resolve
   * @param {(err: unknown) => void} reject
   */
  _flush(resolve, reject) {
    // One JSON text crosses to Rust, and one comes back.
    const text = `[${this._tick.join(",")}]`;
    this._tick = [];
    if (this.inline) {
      let now;
      try {
        now = this._native.writeNow(text);
      } catch (err) {
        reject(fromNative(err));
        return;
      }
      if (now != null) {
        resolve(JSON.parse(now));
        return;
      }
    }
    this._native.writeMany(text).then(
      (replies) => resolve(JSON.parse(replies)),
      (err) => reject(fromNative(err)),
    );
  }
}

/** Tick positions whose reply readers are made once and kept. */
const KEPT_READERS = 1024;
/** @type {((replies: any[]) => any)[]} */
const keptReaders = [];

/**
 * The reader of reply `index` of a tick: the row (or null), or the write's own
 * error. The first KEPT_READERS positions share one function across ticks.
 * @param {number} index
 * @returns {(replies: any[]) => any}
 */
function replyAt(index) {
  if (index >= KEPT_READERS) return readerOf(index);
  return (keptReaders[index] ??= readerOf(index));
}

/**
 * @param {number} index
 * @returns {(replies: any[]) => any}
 */
function readerOf(index) {
  return (replies) => {
    const reply = replies[index];
    if (reply !== null && reply.cairnq !== undefined) throw fromNative(JSON.stringify(reply));
    return reply;
  };
}

module.exports = { TickWrites };
