"use strict";
// `cairnq schedules <db>`: the recurring tasks stored in a database (docs/api.md,
// "Schedules"), with their next and last run; `--json` prints them as the API
// answers them. Read-only: a database without schedules lists none.

const fmt = require("./format.js");

/**
 * @typedef {import("../../index.js").Schedule} Schedule
 * @typedef {import("commander").Command} Command
 * @typedef {{
 *   command: (spec: string, description: string) => Command,
 *   open: (db: string) => import("../client.js").CairnQ,
 *   print: (line: string) => void,
 *   printJson: (value: unknown) => void,
 *   colors: fmt.Colors,
 * }} CommandKit
 */

/**
 * The schedules table as the CLI prints it.
 * @param {fmt.Colors} c
 * @param {Schedule[]} schedules
 * @param {number} now
 */
function schedulesTable(c, schedules, now) {
  const t = fmt.table(c, ["NAME", "TASK", "QUEUE", "CRON", "TZ", "NEXT RUN", "LAST RUN", "STATE"]);
  for (const s of schedules) {
    const next = s.paused ? c.dim("-") : fmt.timestamp(s.nextRunAtMs, now);
    const state = s.paused ? c.yellow("paused") : c.green("active");
    t.push([
      fmt.truncate(s.name, 40),
      fmt.truncate(s.task, 40),
      fmt.truncate(s.queue, 40),
      fmt.plain(s.cron),
      fmt.plain(s.tz),
      next,
      fmt.timestamp(s.lastRunAtMs, now),
      state,
    ]);
  }
  return fmt.render(t);
}

/** @param {CommandKit} kit */
function defineSchedulesCommand({ command, open, print, printJson, colors }) {
  command("schedules <db>", "recurring tasks: cron, zone, next and last run, paused").action(async (db, opts) => {
    const schedules = await open(db).schedules();
    if (opts.json) return printJson(schedules);
    if (schedules.length === 0) return print("no schedules");
    print(schedulesTable(colors, schedules, Date.now()));
  });
}

module.exports = { defineSchedulesCommand };
