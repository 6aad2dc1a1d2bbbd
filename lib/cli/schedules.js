"use strict";
// `cairnq schedules <db>`: the recurring tasks stored in a database (docs/api.md,
// "Schedules"), with their next and last run, overlap, skips, window and
// limit; `--json` prints them as the API answers them. Read-only: a database
// without schedules lists none. `cairnq trigger <db> <name>` runs one now.

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
  const t = fmt.table(c, [
    "NAME",
    "TASK",
    "QUEUE",
    "CRON",
    "TZ",
    "NEXT RUN",
    "LAST RUN",
    "STATE",
    "OVERLAP",
    "SKIPPED",
    "START",
    "END",
    "FIRED",
  ]);
  for (const s of schedules) {
    const next = s.paused || s.finished ? c.dim("-") : fmt.timestamp(s.nextRunAtMs, now);
    const state = s.finished ? c.dim("finished") : s.paused ? c.yellow("paused") : c.green("active");
    const fired = s.limit === null ? String(s.firedCount) : `${s.firedCount}/${s.limit}`;
    t.push([
      fmt.truncate(s.name, 40),
      fmt.truncate(s.task, 40),
      fmt.truncate(s.queue, 40),
      s.every === null ? fmt.plain(s.cron) : `every ${fmt.humanDuration(s.every)}`,
      fmt.plain(s.tz),
      next,
      fmt.timestamp(s.lastRunAtMs, now),
      state,
      s.overlap === "skip" ? c.yellow("skip") : "allow",
      String(s.skippedCount),
      fmt.timestamp(s.startAtMs, now),
      fmt.timestamp(s.endAtMs, now),
      fired,
    ]);
  }
  return fmt.render(t);
}

/** @param {CommandKit} kit */
function defineSchedulesCommand({ command, open, print, printJson, colors }) {
  command(
    "schedules <db>",
    "recurring tasks: cron or interval, next and last run, state, overlap, skips, window, limit",
  ).action(async (db, opts) => {
    const schedules = await open(db).schedules();
    if (opts.json) return printJson(schedules);
    if (schedules.length === 0) return print("no schedules");
    print(schedulesTable(colors, schedules, Date.now()));
  });

  command("trigger <db> <name>", "run one task of a schedule now (its next occurrence stays)").action(
    async (db, name, opts) => {
      const task = await open(db).triggerSchedule(name);
      if (opts.json) return printJson(task);
      print(`triggered ${fmt.plain(name)}: ${fmt.plain(task.id)} on queue ${fmt.plain(task.queue)}`);
    },
  );
}

module.exports = { defineSchedulesCommand };
