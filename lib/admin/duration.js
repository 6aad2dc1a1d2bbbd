"use strict";
// Durations as people type them, read alike by the command line's options
// (`--older-than`, `--timeout`, `--delay`, `--interval`) and the dashboard's
// purge (`olderThan`).

const UNITS = /** @type {const} */ ([
  ["w", 7 * 24 * 3600_000],
  ["d", 24 * 3600_000],
  ["h", 3600_000],
  ["m", 60_000],
  ["s", 1000],
  ["ms", 1],
]);

/**
 * A duration such as `500ms`, `30s`, `15m`, `2h`, `7d`, `1w` (or `1h30m`) in
 * milliseconds; a bare `0` is zero. Anything else throws.
 * @param {string} text
 * @returns {number}
 */
function parseDuration(text) {
  const s = String(text).trim();
  if (s === "0") return 0;
  const part = /(\d+(?:\.\d+)?)(ms|s|m|h|d|w)/gy;
  let total = 0;
  let end = 0;
  /** @type {RegExpExecArray | null} */
  let m;
  while ((m = part.exec(s)) !== null) {
    total += Number(m[1]) * /** @type {number} */ (UNITS.find(([u]) => u === m?.[2])?.[1]);
    end = part.lastIndex;
  }
  if (end === 0 || end !== s.length || !Number.isFinite(total)) {
    throw new Error(`invalid duration ${JSON.stringify(s)} (use e.g. 500ms, 30s, 15m, 2h, 7d)`);
  }
  return Math.round(total);
}

module.exports = { parseDuration };
