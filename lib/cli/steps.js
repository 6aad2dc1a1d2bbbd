"use strict";
// A task's durable steps as `cairnq get` prints them (docs/api.md, "Durable
// steps"): each stored step, what a queued task is sleeping or waiting for,
// and the signals no wait has consumed yet (docs/api.md, "Signals"). The view
// is the core's (`client.steps`).

const fmt = require("./format.js");

/**
 * @typedef {import("../../index.js").TaskSteps} TaskSteps
 */

/**
 * @param {number} bytes
 * @returns {string}
 */
function size(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

/**
 * The "what it waits for" line of a suspended task, or null.
 * @param {fmt.Colors} c
 * @param {TaskSteps["suspended"]} suspended
 * @param {number} now
 * @returns {string | null}
 */
function describeSuspension(c, suspended, now) {
  if (suspended === null) return null;
  if (suspended.kind === "sleep") {
    return c.yellow(`sleeping until ${fmt.timestamp(suspended.untilMs, now)} (step ${fmt.plain(suspended.step)})`);
  }
  if (suspended.kind === "signal") {
    return c.yellow(
      `waiting for signal ${fmt.plain(suspended.name)} (step ${fmt.plain(suspended.step)}) until ${fmt.timestamp(suspended.timeoutAtMs, now)}`,
    );
  }
  const status = suspended.childStatus ?? "gone";
  return c.yellow(
    `waiting for child ${fmt.plain(suspended.childId)} (${status}), step ${fmt.plain(suspended.step)}; looks again ${fmt.timestamp(suspended.recheckAtMs, now)}`,
  );
}

/**
 * The sections `cairnq get` adds for a task with steps, a wait or signals
 * (none without).
 * @param {fmt.Colors} c
 * @param {TaskSteps} view
 * @param {number} now
 * @returns {string[]}
 */
function stepSections(c, view, now) {
  const sections = [];
  if (view.steps.length > 0) sections.push("", fmt.render(stepTable(c, view, now)));
  const waiting = describeSuspension(c, view.suspended, now);
  if (waiting !== null) sections.push(...(sections.length === 0 ? [""] : []), waiting);
  if (view.signals.length > 0) {
    const t = fmt.table(c, ["SIGNAL", "SENT", "SIZE"]);
    for (const signal of view.signals) {
      t.push([fmt.truncate(signal.name, 40), fmt.timestamp(signal.sentAtMs, now), size(signal.size)]);
    }
    sections.push("", c.bold("unconsumed signals"), fmt.render(t));
  }
  return sections;
}

/**
 * @param {fmt.Colors} c
 * @param {TaskSteps} view
 * @param {number} now
 */
function stepTable(c, view, now) {
  const t = fmt.table(c, ["STEP", "KIND", "STORED", "SIZE", "DETAIL"]);
  for (const step of view.steps) {
    let detail = "";
    if (step.kind === "sleep") detail = `until ${fmt.timestamp(step.wakeAtMs, now)}`;
    if (step.kind === "child") {
      const status = step.childStatus === null ? c.dim("gone") : fmt.paintStatus(c, step.childStatus);
      detail = `${fmt.plain(step.childId ?? "-")} ${status}`;
    }
    t.push([
      fmt.truncate(step.id, 40),
      step.kind,
      fmt.timestamp(step.storedAtMs, now),
      step.kind === "step" ? size(step.size) : c.dim("-"),
      detail,
    ]);
  }
  return t;
}

module.exports = { stepSections };
