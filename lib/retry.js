"use strict";
// A retry policy's backoff function (docs/api.md, "Retry policy"): JSON drops
// a function unseen, so it crosses to the core as a tag the core reads (a
// registration keeps the function in JS; a submit's is refused), and the
// worker calls it where the handler runs, handing the core its value.

/** How a function crosses to the core where an option takes one (input/options.rs `FUNCTION_TAG`). */
const FUNCTION_TAG = Object.freeze({ "cairnq.function": true });

/**
 * `options` with a function `retry.backoff` replaced by the tag.
 * @template T
 * @param {T} options
 * @returns {T}
 */
function backoffTagged(options) {
  const retry = /** @type {any} */ (options)?.retry;
  if (typeof retry?.backoff !== "function") return options;
  return { ...options, retry: { ...retry, backoff: FUNCTION_TAG } };
}

/**
 * What `backoff(attempt, error)` returned, for the core to check: NaN for a
 * value that is not a number, or a function that threw.
 * @param {(attempt: number, error: unknown) => unknown} backoff
 * @param {number} attempt
 * @param {unknown} error
 * @returns {number}
 */
function backoffDelay(backoff, attempt, error) {
  try {
    const ms = backoff(attempt, error);
    return typeof ms === "number" ? ms : NaN;
  } catch {
    return NaN;
  }
}

module.exports = { backoffTagged, backoffDelay };
