"use strict";
// `cairnq retry-many <db>` and `cairnq cancel-many <db>` (docs/api.md, "Bulk
// retry and cancel"): one bounded page of the tasks the filters pick, or with
// `--all` page after page until one is not full; `--dry-run` lists the page
// and writes nothing.

const { Option } = require("commander");
const fmt = require("./format.js");

/**
 * @typedef {import("../../index.js").BulkPage} BulkPage
 * @typedef {import("./schedules.js").CommandKit & {
 *   positiveInt: (v: string) => number,
 *   duration: (v: string) => number,
 * }} BulkKit
 */

/**
 * The page (or with `all`, every page) of `op` on `filter`.
 * @param {import("../client.js").CairnQ} client
 * @param {"retryMany" | "cancelMany"} op
 * @param {Record<string, unknown>} filter
 * @param {boolean} all
 * @returns {Promise<{ page: BulkPage, count: number, pages: number }>}
 */
async function runPages(client, op, filter, all) {
  let count = 0;
  let pages = 0;
  for (;;) {
    const page = await client[op](filter);
    count += page.count;
    pages += 1;
    if (!all || !page.more || page.count === 0) return { page, count, pages };
  }
}

/** @param {BulkKit} kit */
function defineBulkCommands({ command, open, print, printJson, positiveInt, duration }) {
  for (const [verb, op, done, would, statuses, what] of /** @type {const} */ ([
    [
      "retry-many",
      "retryMany",
      "retried",
      "would retry",
      ["failed", "canceled"],
      "put failed (or canceled) tasks back in their queues",
    ],
    [
      "cancel-many",
      "cancelMany",
      "canceled",
      "would cancel",
      ["queued", "running"],
      "cancel queued tasks and ask running ones to stop",
    ],
  ])) {
    const cmd = command(`${verb} <db>`, `${what}, a page at a time (--all: every page)`)
      .option("--queue <queue>", "only this queue")
      .option("--name <name>", "only tasks of this name")
      .addOption(
        new Option("--status <status>", `only this status (default ${op === "retryMany" ? "failed" : "both"})`).choices(
          [...statuses],
        ),
      )
      .option("--limit <n>", "the page's size (default 1000, at most 10000)", positiveInt)
      .option("--all", "run page after page until one is not full")
      .option("--dry-run", "list the page a run would change; change nothing");
    if (op === "retryMany") {
      cmd
        .option("--older-than <duration>", "finished at least this long ago (e.g. 1h)", duration)
        .option("--newer-than <duration>", "finished less than this long ago (e.g. 30m)", duration)
        .option("--reset-attempt", "start counting attempts from zero again");
    }
    cmd.action(async (db, opts) => {
      const now = Date.now();
      const filter = {
        queue: opts.queue,
        name: opts.name,
        status: opts.status,
        limit: opts.limit,
        dryRun: opts.dryRun === true,
        ...(op === "retryMany"
          ? {
              finishedBefore: opts.olderThan === undefined ? undefined : now - opts.olderThan,
              finishedAfter: opts.newerThan === undefined ? undefined : now - opts.newerThan,
              resetAttempt: opts.resetAttempt === true,
            }
          : {}),
      };
      const all = opts.all === true && !filter.dryRun;
      const { page, count, pages } = await runPages(open(db), op, filter, all);
      if (opts.json) return printJson(all ? { count, pages } : page);
      const tasks = `${count} task${count === 1 ? "" : "s"}`;
      if (page.dryRun) {
        const more = page.more ? " (the page is full: more may match)" : "";
        print(`${would} ${tasks}${more} (dry run: nothing changed)`);
        for (const id of page.ids) print(fmt.plain(id));
        return;
      }
      const more = page.more ? " (the page was full: run again, or use --all)" : "";
      print(`${done} ${tasks}${all ? ` in ${pages} page${pages === 1 ? "" : "s"}` : ""}${more}`);
    });
  }
}

module.exports = { defineBulkCommands };
