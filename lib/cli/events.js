"use strict";
// `cairnq events <db>`: the task events as they happen (docs/api.md,
// "Events"), one line each (JSON lines with --json), until Ctrl-C, SIGTERM or
// --count events. --after resumes after a printed position.

const fmt = require("./format.js");

/**
 * @typedef {import("../../index.js").TaskEvent} TaskEvent
 * @typedef {import("../../index.js").EventGap} EventGap
 * @typedef {import("./format.js").Colors} Colors
 */

/**
 * What an event's line shows after its kind.
 * @param {TaskEvent} e
 */
function details(e) {
  switch (e.kind) {
    case "started":
      return `attempt ${e.attempt} on ${e.workerId ?? "-"}`;
    case "progress":
      return [e.progress ?? "", e.message ?? ""].filter((part) => part !== "").join(" ");
    case "retrying":
      return `${e.error?.message ?? ""}; next run ${fmt.timestamp(e.runAt)}`;
    case "failed":
      return e.error?.message ?? "";
    case "succeeded":
      return e.resultTruncated ? `result of ${e.resultBytes} bytes` : JSON.stringify(e.result ?? null);
    case "queued":
    case "suspended":
    case "resumed":
    case "lease_lost":
      return e.runAt !== undefined && e.runAt > e.at ? `due ${fmt.timestamp(e.runAt)}` : "";
    default:
      return "";
  }
}

/**
 * One event as a line of the human output (every stored text made terminal-safe).
 * @param {Colors} c
 * @param {TaskEvent | EventGap} e
 */
function line(c, e) {
  if (e.kind === "gap") return c.yellow(`${e.position} gap: events after ${e.after} were swept by retention`);
  const at = new Date(e.at).toISOString();
  return fmt.plain(`${e.position} ${at} ${e.kind} ${e.queue}/${e.name} ${e.taskId} ${details(e)}`.trimEnd());
}

/**
 * @param {import("../client.js").CairnQ} client
 * @param {{ queue?: string, name?: string, task?: string, after?: string, count?: number, json: boolean, out: { write: (s: string) => unknown }, colors: Colors }} opts
 * @returns {Promise<"SIGINT" | "SIGTERM" | null>} the signal that stopped it
 */
async function runEvents(client, opts) {
  const subscription = client.events({ queue: opts.queue, name: opts.name, taskId: opts.task, after: opts.after });
  /** @type {"SIGINT" | "SIGTERM" | null} */
  let stoppedBy = null;
  /** @param {"SIGINT" | "SIGTERM"} signal */
  const stop = (signal) => {
    stoppedBy = signal;
    subscription.close();
  };
  const onInt = () => stop("SIGINT");
  const onTerm = () => stop("SIGTERM");
  process.once("SIGINT", onInt);
  process.once("SIGTERM", onTerm);
  try {
    let seen = 0;
    for await (const e of subscription) {
      opts.out.write(`${opts.json ? JSON.stringify(e) : line(opts.colors, e)}\n`);
      seen += 1;
      if (seen === opts.count) break;
    }
  } finally {
    process.off("SIGINT", onInt);
    process.off("SIGTERM", onTerm);
    subscription.close();
  }
  return stoppedBy;
}

module.exports = { runEvents };
