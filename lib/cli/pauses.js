"use strict";
// `cairnq queues <db>`: every queue with its counts and whether it is paused
// (docs/api.md, "Queue pauses"); `cairnq pause <db> <queue>` and `cairnq
// resume <db> <queue>` stop and restart every worker's claims from a queue.

const fmt = require("./format.js");
const { STATUSES } = require("../models.js");

/**
 * @typedef {import("../../index.js").QueueSummary} QueueSummary
 * @typedef {import("./schedules.js").CommandKit} CommandKit
 */

/**
 * The queues table as the CLI prints it.
 * @param {fmt.Colors} c
 * @param {QueueSummary[]} queues
 * @param {number} now
 */
function queuesTable(c, queues, now) {
  const t = fmt.table(c, ["QUEUE", "STATE", "PAUSED", ...STATUSES.map((s) => s.toUpperCase())], {
    align: ["left", "left", "left", ...STATUSES.map(() => /** @type {"right"} */ ("right"))],
  });
  for (const q of queues) {
    t.push([
      fmt.plain(q.queue),
      q.paused ? c.yellow("paused") : c.green("active"),
      fmt.timestamp(q.pausedAtMs, now),
      ...STATUSES.map((s) => String(q.counts[s])),
    ]);
  }
  return fmt.render(t);
}

/** @param {CommandKit} kit */
function definePauseCommands({ command, open, print, printJson, colors }) {
  command("queues <db>", "every queue: its task counts and whether it is paused").action(async (db, opts) => {
    const queues = await open(db).queues();
    if (opts.json) return printJson(queues);
    if (queues.length === 0) return print("no queues");
    print(queuesTable(colors, queues, Date.now()));
  });

  for (const [verb, method, done, already] of /** @type {const} */ ([
    ["pause", "pauseQueue", "paused", "was paused already"],
    ["resume", "resumeQueue", "resumed", "was not paused"],
  ])) {
    const description =
      verb === "pause"
        ? "stop every worker claiming from a queue (running tasks finish; submits are accepted)"
        : "let workers claim from a paused queue again";
    command(`${verb} <db> <queue>`, description).action(async (db, queue, opts) => {
      const changed = await open(db)[method](queue);
      if (opts.json) return printJson({ queue, changed });
      print(changed ? `${done} ${fmt.plain(queue)}` : `${fmt.plain(queue)} ${already}`);
    });
  }
}

module.exports = { definePauseCommands };
