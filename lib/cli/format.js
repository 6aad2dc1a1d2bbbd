"use strict";
// Human output of the command line: aligned tables (cli-table3), colours
// (picocolors, only on a TTY and never with NO_COLOR), relative times and
// durations. Durations the user types are read by lib/admin/duration.js.

const Table = require("cli-table3");
const picocolors = require("picocolors");

/** @typedef {import("../../index.js").Task} Task */

/**
 * Colours for `stream`: on only when it is a TTY and NO_COLOR is unset
 * (https://no-color.org); FORCE_COLOR forces them on.
 * @param {{ isTTY?: boolean }} stream
 * @param {NodeJS.ProcessEnv} [env]
 */
function colorsFor(stream, env = process.env) {
  const noColor = env.NO_COLOR !== undefined && env.NO_COLOR !== "";
  const force = env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== "" && env.FORCE_COLOR !== "0";
  return picocolors.createColors(!noColor && (force || stream.isTTY === true));
}

/** @typedef {ReturnType<typeof colorsFor>} Colors */

/**
 * `text` (the status itself by default) in the colour of `status`.
 * @param {Colors} c
 * @param {string} status
 * @param {string} [text]
 */
function paintStatus(c, status, text = status) {
  switch (status) {
    case "queued":
      return c.cyan(text);
    case "running":
      return c.yellow(text);
    case "succeeded":
      return c.green(text);
    case "failed":
      return c.red(text);
    case "canceled":
      return c.gray(text);
    default:
      return text;
  }
}

/**
 * A borderless table with aligned columns.
 * @param {Colors} c
 * @param {string[]} head
 * @param {{ align?: ("left" | "right")[] }} [opts]
 */
function table(c, head, opts = {}) {
  return new Table({
    head: head.map((h) => c.bold(h)),
    colAligns: opts.align ?? [],
    chars: {
      top: "",
      "top-mid": "",
      "top-left": "",
      "top-right": "",
      bottom: "",
      "bottom-mid": "",
      "bottom-left": "",
      "bottom-right": "",
      left: "",
      "left-mid": "",
      mid: "",
      "mid-mid": "",
      right: "",
      "right-mid": "",
      middle: "  ",
    },
    style: { head: [], border: [], "padding-left": 0, "padding-right": 0 },
  });
}

/**
 * A table as text, without the padding cli-table3 leaves after the last column.
 * @param {{ toString(): string }} t
 */
function render(t) {
  return t
    .toString()
    .split("\n")
    .map((line) => line.trimEnd())
    .join("\n");
}

/**
 * `ms` as a short human duration: `850ms`, `12s`, `3m 20s`, `2h 5m`, `4d 3h`.
 * @param {number} ms
 */
function humanDuration(ms) {
  const abs = Math.abs(ms);
  if (abs < 1000) return `${Math.round(abs)}ms`;
  const s = Math.floor(abs / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return s % 60 ? `${m}m ${s % 60}s` : `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 24) return m % 60 ? `${h}h ${m % 60}m` : `${h}h`;
  const d = Math.floor(h / 24);
  return h % 24 ? `${d}d ${h % 24}h` : `${d}d`;
}

/**
 * A time relative to `now`: `3s ago`, `in 5m`, `now`; `-` when absent.
 * @param {number | null | undefined} at
 * @param {number} [now]
 */
function relativeTime(at, now = Date.now()) {
  if (at === null || at === undefined) return "-";
  const delta = at - now;
  if (Math.abs(delta) < 1000) return "now";
  return delta < 0 ? `${humanDuration(delta)} ago` : `in ${humanDuration(delta)}`;
}

/**
 * An absolute UTC timestamp with its relative form; a time no date can hold
 * (another SDK may have stored one) as the number itself.
 * @param {number | null | undefined} at
 * @param {number} [now]
 */
function timestamp(at, now = Date.now()) {
  if (at === null || at === undefined) return "-";
  const date = new Date(at);
  if (Number.isNaN(date.getTime())) return `${at} ms`;
  return `${date.toISOString()} (${relativeTime(at, now)})`;
}

/**
 * Characters a terminal acts on rather than shows: C0 and C1 controls (ESC
 * starts colour, title and clear-screen sequences), DEL, and the bidi
 * controls that reorder what follows them.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROLS = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
const NAMED = /** @type {Record<string, string>} */ ({ "\n": "\\n", "\r": "\\r", "\t": "\\t" });

/**
 * A database value made safe for a terminal: every control character shown
 * as an escape (`\n`, `\u001b`), so a task name or message cannot move the
 * cursor, retitle the window or clear the screen. Human output only: JSON
 * output stays exact.
 * @param {unknown} value
 */
function plain(value) {
  return String(value).replace(CONTROLS, (ch) => NAMED[ch] ?? `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/**
 * A JSON value indented, for payloads, results and envelopes; terminal-safe
 * (JSON escapes C0 controls, `plain` the C1 and bidi ones it leaves).
 * @param {unknown} value
 */
function prettyJson(value) {
  return plainLines(value === undefined ? "null" : JSON.stringify(value, null, 2));
}

/**
 * Text of several lines made terminal-safe line by line (`plain`), its line
 * breaks kept.
 * @param {string} text
 */
function plainLines(text) {
  return text.split("\n").map(plain).join("\n");
}

/**
 * `s` made terminal-safe (`plain`) and cut to `width` characters with an
 * ellipsis.
 * @param {string} s
 * @param {number} width
 */
function truncate(s, width) {
  const safe = plain(s);
  return safe.length <= width ? safe : `${safe.slice(0, Math.max(0, width - 1))}…`;
}

/**
 * A sparkline of `values` (block characters, scaled to the largest).
 * @param {number[]} values
 */
function sparkline(values) {
  const bars = "▁▂▃▄▅▆▇█";
  const max = Math.max(0, ...values);
  return values.map((v) => (max === 0 ? bars[0] : bars[Math.min(7, Math.round((v / max) * 7))])).join("");
}

/**
 * A progress value (0..1) as a bar and percentage.
 * @param {number | null | undefined} progress
 * @param {number} [width]
 */
function progressBar(progress, width = 10) {
  if (progress === null || progress === undefined) return "-";
  const p = Math.max(0, Math.min(1, progress));
  const full = Math.round(p * width);
  return `${"█".repeat(full)}${"░".repeat(width - full)} ${Math.round(p * 100)}%`;
}

module.exports = {
  colorsFor,
  humanDuration,
  paintStatus,
  plain,
  plainLines,
  prettyJson,
  progressBar,
  relativeTime,
  render,
  sparkline,
  table,
  timestamp,
  truncate,
};
